/**
 * The three drivers behind the SQL adapter, each opened the way its database needs (SQLite's
 * pragmas and statement cache, the pools' error listeners and statement time-outs), and the lazy
 * loaders of Kysely and the drivers. Each `open…` is one dialect's `open` in `sql-dialects.ts`;
 * nothing here asks which database it is.
 * A driver is required only when a spec names it, so a user installs only the driver they use.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { userInfo } from 'node:os';
import type { Kysely } from 'kysely';
import { INTERFACE_LIMITS } from '../../lib/contract/limits';
import { InvalidOptionError, StorebridgeError } from '../../lib/errors';

export interface ConnectionOptions {
  /** Pool size for PostgreSQL and MySQL (default 10). */
  readonly poolSize?: number;
  /** SQLite: how long a writer waits for another process's lock, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
  /**
   * PostgreSQL / MariaDB: the server cancels any statement running longer than this, in ms
   * (default 60000, the webhook processing limit). MySQL applies it to SELECTs only.
   */
  readonly statementTimeoutMs?: number;
}

type KyselyModule = typeof import('kysely');

/** Loads Kysely only when a SQL adapter is actually used (a dependency, but kept off the CLI's start-up path). */
export function loadKysely(): KyselyModule {
  return loadOptional<KyselyModule>('kysely', 'the SQL adapter');
}

/**
 * A package the SQL adapter needs cannot be used here: it is not installed, or it is installed but
 * its native module does not load (better-sqlite3 built for another Node.js or platform, or its
 * install script never ran). The message is one line and says what to run.
 */
export class SqlDriverUnavailableError extends StorebridgeError {
  override readonly name = 'SqlDriverUnavailableError';
  readonly code = 'SQL_DRIVER_UNAVAILABLE';
  constructor(
    /** The npm package: `kysely`, `better-sqlite3`, `pg`, `mysql2`. */
    readonly driver: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An error's message on one line, at most 200 characters (driver errors span several lines). */
export function oneLine(err: unknown): string {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  const line = (typeof message === 'string' ? message : String(err)).replace(/\s*\n\s*/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/** `require` of a package the SQL adapter needs, with an install hint when it is missing. */
export function loadOptional<T>(name: string, forWhat: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name) as T;
  } catch (err) {
    if ((err as { code?: string }).code === 'MODULE_NOT_FOUND') {
      throw new SqlDriverUnavailableError(name, `${forWhat} needs the "${name}" package: npm install ${name}`, { cause: err });
    }
    throw new SqlDriverUnavailableError(name, `the "${name}" package does not load (${oneLine(err)}): reinstall it (npm rebuild ${name})`, { cause: err });
  }
}

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < 1) throw new InvalidOptionError(name, 'must be a positive integer');
  return v;
}

/** libpq's default user (PGUSER, else the OS account), which node-postgres only takes from $USER. */
function withDefaultPgUser(url: string): string {
  const parsed = new URL(url);
  if (parsed.username || parsed.searchParams.has('user')) return url;
  const user = process.env.PGUSER || userInfo().username;
  if (!user) return url;
  parsed.username = encodeURIComponent(user);
  return parsed.toString();
}

type BetterSqlite3 = typeof import('better-sqlite3');
let sqliteWorks = false;

/**
 * better-sqlite3, checked to work: its native module is loaded by the first `new Database()`, not
 * by `require`, so an in-memory database is opened once per process. Without the check a missing
 * or foreign-built binary would surface as a file error from the first real open.
 */
function loadSqlite(): BetterSqlite3 {
  const Database = loadOptional<BetterSqlite3>('better-sqlite3', 'the sqlite: adapter');
  if (!sqliteWorks) {
    try {
      new Database(':memory:').close();
    } catch (err) {
      throw new SqlDriverUnavailableError(
        'better-sqlite3',
        `better-sqlite3's native module does not load (${oneLine(err)}): run "npm rebuild better-sqlite3" on this machine (its install script must be allowed to run)`,
        { cause: err },
      );
    }
    sqliteWorks = true;
  }
  return Database;
}

/** Statements kept per SQLite connection (the adapter runs a few dozen distinct ones). */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver calls `prepare()` for every query it runs, and better-sqlite3 compiles
 * the SQL anew each time: profiled at 12% of a whole-catalog sync into a SQLite sink. Statements
 * are reusable, so `prepare` returns a cached one for the same SQL text (a new one while the
 * cached one is busy iterating). SQLite re-prepares a cached statement itself after a schema change.
 */
function cacheStatements(database: import('better-sqlite3').Database): void {
  const prepare = database.prepare.bind(database);
  const cache = new Map<string, import('better-sqlite3').Statement>();
  database.prepare = ((source: string) => {
    const cached = cache.get(source);
    if (cached && !cached.busy) return cached;
    const statement = prepare(source);
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(source, statement);
    return statement;
  }) as typeof database.prepare;
}

/**
 * `mkdir -p` without `mkdirSync(…, { recursive: true })`: Node's recursive mkdir loops forever,
 * synchronously, when a pseudo filesystem answers ENOENT for a directory whose parent exists
 * (`sqlite:/proc/x/store.db`), and a process in that loop cannot even be stopped with SIGTERM.
 * Here each missing level is created once, from the deepest existing ancestor down, and the
 * first failure is thrown as is.
 */
function makeDirectories(dir: string): void {
  const missing: string[] = [];
  let d = dir;
  for (; !existsSync(d); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  if (existsSync(d) && !statSync(d).isDirectory()) throw new Error(`ENOTDIR: ${d} is not a directory`);
  for (const m of missing.reverse()) mkdirSync(m);
}

/** Page size of the SQLite databases the adapter creates. */
export const SQLITE_PAGE_SIZE = 16_384;

/** A Kysely instance on a SQLite file (created with its directories when missing) or `:memory:`. */
export function openSqlite(target: string, options: ConnectionOptions): Kysely<any> {
  const k = loadKysely();
  // Checked on every database alike, though only the pools use them.
  positiveInt('poolSize', options.poolSize, 10);
  positiveInt('statementTimeoutMs', options.statementTimeoutMs, INTERFACE_LIMITS.requestTimeMs);
  const Database = loadSqlite();
  const busy = positiveInt('busyTimeoutMs', options.busyTimeoutMs, 5000);
  const memory = target === ':memory:';
  const file = memory ? target : resolve(target);
  if (!memory) makeDirectories(dirname(file));
  const database = new Database(file);
  database.pragma(`busy_timeout = ${busy}`);
  // 16 KiB pages for a new database (an existing file keeps its size; SQLite ignores this then):
  // documents of 1–5 KB fit one per 4 KiB page, wasting ~40%. Measured on 100,000 demo products:
  // writes in 100-row transactions -30%, keyset pages -30%, full scans -37%, file -16%; point
  // reads +7% (~7 µs each). See docs/sql-adapter.md.
  database.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
  if (!memory) {
    // WAL: readers never block the writer; NORMAL is durable across application crashes in WAL mode.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
  }
  cacheStatements(database);
  return new k.Kysely<any>({ dialect: new k.SqliteDialect({ database }) });
}

/** A server database's pool size (default 10) and statement time-out (default: the interface's request limit). */
function poolSettings(options: ConnectionOptions): { poolSize: number; statementTimeoutMs: number } {
  return {
    poolSize: positiveInt('poolSize', options.poolSize, 10),
    statementTimeoutMs: positiveInt('statementTimeoutMs', options.statementTimeoutMs, INTERFACE_LIMITS.requestTimeMs),
  };
}

/** A Kysely instance on a PostgreSQL pool. */
export function openPostgres(target: string, options: ConnectionOptions): Kysely<any> {
  const k = loadKysely();
  const { poolSize, statementTimeoutMs } = poolSettings(options);
  type Pg = typeof import('pg');
  const pg = loadOptional<Pg>('pg', 'the postgres: adapter');
  const pool = new pg.Pool({ connectionString: withDefaultPgUser(target), max: poolSize, statement_timeout: statementTimeoutMs });
  // A connection the server drops (or the network cuts) emits 'error': an idle one through the
  // pool, a checked-out one (mid-query, mid-transaction, between two statements) on the client
  // itself, where pg-pool listens only while it is idle. Without a listener either would crash the
  // process with "Unhandled 'error' event" (issue 20, D). The pending query rejects with the
  // error anyway, and the pool discards a broken client when it is released.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => void client.on('error', () => undefined));
  return new k.Kysely<any>({ dialect: new k.PostgresDialect({ pool }) });
}

/** A Kysely instance on a MySQL / MariaDB pool. */
export function openMysql(target: string, options: ConnectionOptions): Kysely<any> {
  const k = loadKysely();
  const { poolSize, statementTimeoutMs } = poolSettings(options);
  type Mysql2 = typeof import('mysql2');
  const mysql = loadOptional<Mysql2>('mysql2', 'the mysql: adapter');
  const pool = mysql.createPool({ uri: target, connectionLimit: poolSize, charset: 'utf8mb4_bin' });
  pool.on('connection', (connection) => {
    // mysql2's pool listens for a connection's first 'error' only (to drop it); a second one (a
    // write on the closed socket) would be an unhandled 'error' event. Queries get their errors.
    connection.on('error', () => undefined);
    // MariaDB names the limit max_statement_time (seconds), MySQL max_execution_time (ms, SELECT only).
    connection.query(`set session max_statement_time = ${statementTimeoutMs / 1000}`, (err) => {
      if (err) connection.query(`set session max_execution_time = ${statementTimeoutMs}`, () => undefined);
    });
  });
  return new k.Kysely<any>({ dialect: new k.MysqlDialect({ pool: pool as any }) });
}
