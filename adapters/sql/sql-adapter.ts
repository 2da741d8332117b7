/**
 * The SQL adapter: one Kysely implementation for SQLite (better-sqlite3), PostgreSQL (pg) and
 * MySQL/MariaDB (mysql2). See docs/sql-adapter.md for the schema, paging plans and dialect notes.
 */
import type { Dialect, Kysely, Transaction } from 'kysely';
import {
  resolveWrite,
  rawJson,
  type EntityStore,
  type ListOptions,
  type RawJsonItem,
  type SignalOptions,
  type StoreAdapter,
  type UpsertResult,
  type WriteOptions,
} from '../../lib/adapter';
import type { Entity, Order, Product } from '../../lib/contract/webhook';
import { InvalidOptionError, StorebridgeError, UnstorableValueError } from '../../lib/errors';
import {
  isTransientConflict,
  isUniqueViolation,
  keysetPredicate,
  loadKysely,
  MYSQL_MAX_SKU_BYTES,
  SQL_KINDS,
  SqlDriverUnavailableError,
  type SqlKind,
} from './sql-dialects';
import { dropSqlSchema, migrateSqlSchema, tableNames, type SqlTableNames } from './sql-migrations';
import { connectKysely, parseSqlSpec, redactConnectionSpec, type ConnectionOptions } from './sql-connect';
import { asStorageError, inTransaction, storageFailures } from './sql-failures';

export interface SqlAdapterOptions extends ConnectionOptions {
  /** A Kysely instance you created (its dialect decides the SQL). Not destroyed by `close()` unless `destroyOnClose`. */
  readonly db?: Kysely<any>;
  /** A Kysely dialect (`SqliteDialect`, `PostgresDialect`, `MysqlDialect`). Destroyed by `close()`. */
  readonly dialect?: Dialect;
  /** A connection spec: `sqlite:FILE`, `sqlite::memory:`, `postgres://…`, `mysql://…` (see `openSqlAdapter`). */
  readonly connection?: string;
  /** Which SQL to speak; detected from `db` / `dialect` when omitted. */
  readonly kind?: SqlKind;
  /** Prefix of every table name (default `storebridge_`): letters, digits, `_`; at most 40 characters. */
  readonly tablePrefix?: string;
  /** PostgreSQL schema for the tables (created if missing). Default: the connection's search path. */
  readonly schema?: string;
  /** Run the migrations on open (default `true`). Turn off when you migrate separately (`migrateSqlSchema`). */
  readonly migrate?: boolean;
  /** Destroy the Kysely instance on `close()` (default: only when the adapter created it). */
  readonly destroyOnClose?: boolean;
  /** How often a write transaction is retried after a deadlock or a concurrent create (default 8). */
  readonly maxWriteAttempts?: number;
}

interface SqlConfig {
  readonly kind: SqlKind;
  readonly names: SqlTableNames;
  readonly migrate: boolean;
  readonly destroyOnClose: boolean;
  readonly maxWriteAttempts: number;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function parseConfig(options: SqlAdapterOptions, kind: SqlKind, created: boolean): SqlConfig {
  const prefix = options.tablePrefix ?? 'storebridge_';
  if (typeof prefix !== 'string' || (prefix !== '' && !IDENTIFIER.test(prefix)) || prefix.length > 40) {
    throw new InvalidOptionError('tablePrefix', 'letters, digits and "_" only, not starting with a digit, at most 40 characters');
  }
  const schema = options.schema;
  if (schema !== undefined) {
    if (kind !== 'postgres') throw new InvalidOptionError('schema', 'is supported on PostgreSQL only (use tablePrefix)');
    if (!IDENTIFIER.test(schema) || schema.length > 63) throw new InvalidOptionError('schema', 'letters, digits and "_" only, at most 63 characters');
  }
  const maxWriteAttempts = options.maxWriteAttempts ?? 8;
  if (!Number.isSafeInteger(maxWriteAttempts) || maxWriteAttempts < 1) throw new InvalidOptionError('maxWriteAttempts', 'must be a positive integer');
  return {
    kind,
    names: tableNames(prefix, schema),
    migrate: options.migrate ?? true,
    destroyOnClose: options.destroyOnClose ?? created,
    maxWriteAttempts,
  };
}

function detectKind(db: Kysely<any>): SqlKind {
  const k = loadKysely();
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof k.SqliteAdapter) return 'sqlite';
  if (adapter instanceof k.PostgresAdapter) return 'postgres';
  if (adapter instanceof k.MysqlAdapter) return 'mysql';
  throw new InvalidOptionError('kind', 'cannot tell the dialect of this Kysely instance: pass kind: "sqlite" | "postgres" | "mysql"');
}

/**
 * Runs a read; rejects with the signal's reason as soon as it aborts (the query itself runs on; its
 * result is dropped), and with a `StorageError` when the driver's failure is a recognised one.
 */
function abortable<R>(signal: AbortSignal | undefined, run: () => Promise<R>): Promise<R> {
  return storageFailures(() => raceAbort(signal, run));
}

async function raceAbort<R>(signal: AbortSignal | undefined, run: () => Promise<R>): Promise<R> {
  if (!signal) return run();
  signal.throwIfAborted();
  const work = run();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const result = await Promise.race([work, aborted]);
    signal.throwIfAborted();
    return result;
  } finally {
    signal.removeEventListener('abort', onAbort!);
    work.catch(() => undefined);
  }
}

/** mysql2 returns VARBINARY columns as Buffers. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}

/** Rows per multi-row statement of `upsertMany` (5 parameters a row stays far under every driver's limit). */
const BATCH_ROWS = 100;

interface Row {
  _id: unknown;
  last_updated: unknown;
  doc: string;
}

/**
 * One entity's table. Lists are keyset seeks on `(last_updated, _id)` (or `LIMIT … OFFSET …`,
 * O(offset)) returning the stored JSON as `rawJson` items; `count` reads the maintained counts
 * row; `upsert` is a transaction that locks the row (`SELECT … FOR UPDATE`; on SQLite the
 * database write lock), applies `resolveWrite`, and retries on a concurrent create or a deadlock.
 */
export class SqlEntityStore<T extends { _id: string; last_updated?: number; sku?: string }> implements EntityStore<T> {
  private readonly table: string;
  constructor(
    private readonly db: Kysely<any>,
    private readonly config: SqlConfig,
    readonly entity: Entity,
  ) {
    this.table = entity === 'products' ? config.names.products : config.names.orders;
  }

  private scoped<D extends Kysely<any> | Transaction<any>>(db: D): D {
    return (this.config.names.schema ? db.withSchema(this.config.names.schema) : db) as D;
  }

  /** The list query, as run by `list` (exposed for plan checks: `EXPLAIN` it). */
  listQuery({ sortorder, limit, offset = 0, after }: Omit<ListOptions, 'signal'>) {
    let q = this.scoped(this.db).selectFrom(this.table).select(['_id', 'last_updated', 'doc']);
    if (after) q = q.where(keysetPredicate(this.config.kind, sortorder, after));
    q = q.orderBy('last_updated', sortorder).orderBy('_id', sortorder).limit(limit);
    if (!after && offset > 0) q = q.offset(offset);
    return q;
  }

  async list(options: ListOptions): Promise<RawJsonItem[]> {
    const rows = (await abortable(options.signal, () => this.listQuery(options).execute())) as Row[];
    return rows.map((r) => rawJson(text(r._id), Number(r.last_updated), r.doc));
  }

  async count(options: SignalOptions): Promise<number> {
    const row = await abortable(options.signal, () =>
      this.scoped(this.db).selectFrom(this.config.names.counts).select('n').where('entity', '=', this.entity).executeTakeFirst(),
    );
    return Number(row?.n ?? 0);
  }

  /**
   * Whether a value can never be in this table's key columns: PostgreSQL `text` cannot hold U+0000
   * (writes carrying one are refused), so a lookup of it finds nothing, without asking the server
   * (which would fail with "invalid byte sequence for encoding UTF8: 0x00").
   */
  private neverStored(value: string): boolean {
    return this.config.kind === 'postgres' && value.includes('\u0000');
  }

  /** Refuses, before anything is written, items whose `_id` or `sku` this database cannot hold exactly. */
  private assertStorable(items: readonly T[], operation: string): void {
    for (const item of items) {
      for (const field of ['_id', 'sku'] as const) {
        const value = item[field];
        if (typeof value !== 'string' || !this.neverStored(value)) continue;
        const shown = JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
        throw new UnstorableValueError(`${this.entity}.${operation}`, field, `PostgreSQL text cannot hold U+0000 (NUL), found in ${shown}`);
      }
    }
  }

  async get(id: string, options: SignalOptions): Promise<T | undefined> {
    if (this.neverStored(id)) {
      options.signal?.throwIfAborted();
      return undefined;
    }
    const row = await abortable(options.signal, () =>
      this.scoped(this.db).selectFrom(this.table).select('doc').where('_id', '=', id).executeTakeFirst(),
    );
    return row ? (JSON.parse(row.doc) as T) : undefined;
  }

  /** The newest product with this SKU (products only). */
  async bySku(sku: string, options: SignalOptions): Promise<T | undefined> {
    if (this.skuColumn(sku) === null || this.neverStored(sku)) {
      options.signal?.throwIfAborted();
      return undefined;
    }
    const row = await abortable(options.signal, () =>
      this.scoped(this.db)
        .selectFrom(this.table)
        .select('doc')
        .where('sku', '=', sku)
        .orderBy('last_updated', 'desc')
        .orderBy('_id', 'desc')
        .limit(1)
        .executeTakeFirst(),
    );
    return row ? (JSON.parse(row.doc) as T) : undefined;
  }

  /**
   * Writes are not raced against the signal: the signal is checked before the transaction and
   * again before anything is written (then the transaction rolls back), but a committed write is
   * never reported as failed.
   */
  async upsert(item: T, options: WriteOptions): Promise<UpsertResult<T>> {
    this.assertStorable([item], 'upsert');
    return this.writeTransaction(options.signal, (trx) => this.writeOne(trx, item, options));
  }

  /** Many upserts in one transaction per batch (seeding, replication). Same rule as `upsert`. */
  async upsertMany(items: readonly T[], options: WriteOptions & { batchSize?: number }): Promise<UpsertResult<T>[]> {
    this.assertStorable(items, 'upsertMany');
    const out: UpsertResult<T>[] = [];
    const size = options.batchSize ?? 500;
    for (let i = 0; i < items.length; i += size) {
      const batch = items.slice(i, i + size);
      out.push(
        ...(await this.writeTransaction(options.signal, async (trx) => {
          if (new Set(batch.map((item) => item._id)).size < batch.length) {
            // The same _id twice: each write must see the one before it, so one at a time.
            const results: UpsertResult<T>[] = [];
            for (const item of batch) results.push(await this.writeOne(trx, item, options));
            return results;
          }
          return this.writeBatch(trx, batch, options);
        })),
      );
    }
    return out;
  }

  /**
   * A batch of distinct ids in one transaction with few statements: one read of the existing rows
   * (locked on PostgreSQL / MySQL), `resolveWrite` per item, updates one by one, new rows in
   * multi-row inserts, the count incremented once. Same outcome as `writeOne` per item.
   */
  private async writeBatch(trx: Transaction<any>, batch: readonly T[], options: WriteOptions): Promise<UpsertResult<T>[]> {
    const db = this.scoped(trx);
    const existing = new Map<string, string>();
    for (let i = 0; i < batch.length; i += BATCH_ROWS) {
      const ids = batch.slice(i, i + BATCH_ROWS).map((item) => item._id);
      let select = db.selectFrom(this.table).select(['_id', 'doc']).where('_id', 'in', ids);
      if (this.config.kind !== 'sqlite') select = select.forUpdate();
      for (const row of (await select.execute()) as Row[]) existing.set(text(row._id), row.doc);
    }
    const results: UpsertResult<T>[] = [];
    const inserts: Record<string, unknown>[] = [];
    const updates: Array<{ id: string; values: Record<string, unknown> }> = [];
    for (const item of batch) {
      const before = existing.get(item._id);
      const result = resolveWrite(before === undefined ? undefined : (JSON.parse(before) as T), item, options);
      results.push(result);
      if (!result.changed) continue;
      const values: Record<string, unknown> = { last_updated: result.item.last_updated, doc: JSON.stringify(result.item) };
      if (this.entity === 'products') values.sku = this.skuColumn(result.item.sku);
      if (before === undefined) inserts.push({ _id: item._id, ...values });
      else updates.push({ id: item._id, values });
    }
    options.signal.throwIfAborted();
    for (const { id, values } of updates) await db.updateTable(this.table).set(values).where('_id', '=', id).execute();
    // A concurrent creator of one of these _ids makes an insert fail on the primary key: retried.
    for (let i = 0; i < inserts.length; i += BATCH_ROWS) await db.insertInto(this.table).values(inserts.slice(i, i + BATCH_ROWS)).execute();
    if (inserts.length > 0) {
      const { sql } = loadKysely();
      await db.updateTable(this.config.names.counts).set({ n: sql`n + ${inserts.length}` }).where('entity', '=', this.entity).execute();
    }
    return results;
  }

  private skuColumn(sku: string | undefined): string | null {
    if (this.entity !== 'products' || typeof sku !== 'string') return null;
    if (this.config.kind === 'mysql' && Buffer.byteLength(sku) > MYSQL_MAX_SKU_BYTES) return null;
    return sku;
  }

  private async writeTransaction<R>(signal: AbortSignal, fn: (trx: Transaction<any>) => Promise<R>): Promise<R> {
    const { kind, maxWriteAttempts, names } = this.config;
    const { sql } = loadKysely();
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted();
      try {
        // READ COMMITTED: a locking read sees the latest committed row, and MySQL takes no gap locks.
        return await inTransaction(this.db, kind === 'sqlite' ? undefined : 'read committed', async (trx) => {
          if (kind === 'sqlite') {
            // Take SQLite's write lock first (a deferred BEGIN would read under a shared lock and
            // could then fail to upgrade); other processes wait on busy_timeout.
            await this.scoped(trx).updateTable(names.counts).set({ n: sql`n` }).where('entity', '=', this.entity).execute();
          }
          return fn(trx);
        });
      } catch (err) {
        const again = isUniqueViolation(kind, err) || isTransientConflict(kind, err);
        if (again && attempt < maxWriteAttempts) continue;
        throw asStorageError(err);
      }
    }
  }

  private async writeOne(trx: Transaction<any>, item: T, options: WriteOptions): Promise<UpsertResult<T>> {
    const db = this.scoped(trx);
    let select = db.selectFrom(this.table).select('doc').where('_id', '=', item._id);
    if (this.config.kind !== 'sqlite') select = select.forUpdate();
    const row = await select.executeTakeFirst();
    const result = resolveWrite(row ? (JSON.parse(row.doc) as T) : undefined, item, options);
    if (!result.changed) return result;
    options.signal.throwIfAborted();
    const values: Record<string, unknown> = { last_updated: result.item.last_updated, doc: JSON.stringify(result.item) };
    if (this.entity === 'products') values.sku = this.skuColumn(result.item.sku);
    if (row) {
      await db.updateTable(this.table).set(values).where('_id', '=', item._id).execute();
    } else {
      // A concurrent creator of the same _id makes this insert fail on the primary key: retried.
      await db.insertInto(this.table).values({ _id: item._id, ...values }).execute();
      const { sql } = loadKysely();
      await db.updateTable(this.config.names.counts).set({ n: sql`n + 1` }).where('entity', '=', this.entity).execute();
    }
    return result;
  }

  /** Recomputes the maintained count with `count(*)` (only needed after writing to the tables behind the adapter's back). */
  async recount(options: SignalOptions): Promise<number> {
    return this.writeTransaction(options.signal, async (trx) => {
      const db = this.scoped(trx);
      const { sql } = loadKysely();
      const row = await db.selectFrom(this.table).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
      const n = Number(row.n);
      await db.updateTable(this.config.names.counts).set({ n }).where('entity', '=', this.entity).execute();
      return n;
    });
  }
}

/**
 * The SQL adapter. Create it with `createSqlAdapter` (or `openSqlAdapter` for a spec string).
 *
 * @example
 * ```ts
 * import { createSqlAdapter } from 'storebridge/adapters/sql';
 * const adapter = await createSqlAdapter({ connection: 'sqlite:./store.db' });
 * app.use('/sync', createStoreRouter({ adapter, svcKeys: [process.env.SVC_KEY!] }));
 * ```
 */
export class SqlAdapter implements StoreAdapter {
  readonly products: SqlEntityStore<Product>;
  readonly orders: SqlEntityStore<Order>;
  constructor(
    /** The Kysely instance (for your own queries and transactions). */
    readonly db: Kysely<any>,
    private readonly config: SqlConfig,
  ) {
    this.products = new SqlEntityStore<Product>(db, config, 'products');
    this.orders = new SqlEntityStore<Order>(db, config, 'orders');
  }

  get kind(): SqlKind {
    return this.config.kind;
  }

  get tables(): SqlTableNames {
    return this.config.names;
  }

  productBySku(sku: string, options: SignalOptions): Promise<Product | undefined> {
    return this.products.bySku(sku, options);
  }

  /** Brings the schema up to date (what `createSqlAdapter` does unless `migrate: false`). */
  async migrate(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await migrateSqlSchema(this.db, this.config.kind, this.config.names);
        return;
      } catch (err) {
        if (!migrationRaced(this.config.kind, err) || attempt >= 5) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  }

  /** Drops this adapter's tables. For tests and uninstalling; the data is gone. */
  async dropTables(): Promise<void> {
    await dropSqlSchema(this.db, this.config.names);
  }

  async close(): Promise<void> {
    if (this.config.destroyOnClose) await this.db.destroy();
  }
}

/**
 * A migration that failed only because another process changed the database at the same moment;
 * the next attempt succeeds.
 * - SQLite: Kysely's migration lock is per connection, so a second process migrating the same new
 *   file at the same moment fails (SQLITE_BUSY, or "table … already exists" once the first
 *   commits). The migration is one transaction, so the next attempt finds it recorded.
 * - PostgreSQL: Kysely's migrator first lists every table of the database with a query that calls
 *   `pg_get_serial_sequence` per column; a table that another process drops meanwhile (any other
 *   application's, or a test's) fails it with 42P01 "relation … does not exist".
 */
function migrationRaced(kind: SqlKind, err: unknown): boolean {
  if (kind === 'sqlite') return isTransientConflict('sqlite', err) || /already exists/.test(String((err as Error)?.message));
  return kind === 'postgres' && (err as { code?: unknown })?.code === '42P01';
}

/**
 * Opens the SQL adapter on a Kysely instance, a Kysely dialect or a connection spec, and runs the
 * migrations (unless `migrate: false`).
 *
 * @example
 * ```ts
 * import { createSqlAdapter } from 'storebridge/adapters/sql';
 * import { Kysely, PostgresDialect } from 'kysely';
 * import { Pool } from 'pg';
 * const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: process.env.DATABASE_URL }) }) });
 * const adapter = await createSqlAdapter({ db, tablePrefix: 'shop_' });
 * ```
 */
export async function createSqlAdapter(options: SqlAdapterOptions): Promise<SqlAdapter> {
  const given = [options.db, options.dialect, options.connection].filter((x) => x !== undefined).length;
  if (given !== 1) throw new InvalidOptionError('db', 'pass exactly one of db, dialect or connection');
  if (options.kind !== undefined && !SQL_KINDS.includes(options.kind)) {
    throw new InvalidOptionError('kind', `must be one of ${SQL_KINDS.join(', ')}`);
  }
  let db: Kysely<any>;
  let kind: SqlKind;
  const created = options.db === undefined;
  if (options.connection !== undefined) {
    // `?tablePrefix=` / `?schema=` in a URL spec apply unless the options say otherwise.
    const spec = parseSqlSpec(options.connection);
    options = { ...options, tablePrefix: options.tablePrefix ?? spec.tablePrefix, schema: options.schema ?? spec.schema };
  }
  if (options.db) {
    db = options.db;
    kind = options.kind ?? detectKind(db);
  } else if (options.dialect) {
    const { Kysely } = loadKysely();
    db = new Kysely<any>({ dialect: options.dialect });
    kind = options.kind ?? detectKind(db);
  } else {
    ({ db, kind } = connectKysely(options.connection!, options));
  }
  let config: SqlConfig;
  try {
    config = parseConfig(options, kind, created);
  } catch (err) {
    if (created) await db.destroy();
    throw err;
  }
  const adapter = new SqlAdapter(db, config);
  if (config.migrate) {
    try {
      await adapter.migrate();
    } catch (err) {
      if (created) await db.destroy().catch(() => undefined);
      throw err;
    }
  }
  return adapter;
}

/** The error `openSqlAdapter` throws when the database cannot be opened. Its message never holds a password. */
export class SqlConnectError extends StorebridgeError {
  override readonly name = 'SqlConnectError';
  readonly code = 'SQL_CONNECT';
  constructor(spec: string, cause: unknown) {
    super(`cannot open ${redactConnectionSpec(spec)}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * Opens the SQL adapter for a CLI spec: `sqlite:FILE`, `sqlite::memory:`, `postgres:URL`,
 * `postgres://…`, `postgresql://…`, `mysql:URL`, `mysql://…`, `mariadb:URL`, `mariadb://…`.
 *
 * @example
 * ```ts
 * const adapter = await openSqlAdapter('postgres://postgres@127.0.0.1:5432/test');
 * ```
 */
export async function openSqlAdapter(spec: string, options: Omit<SqlAdapterOptions, 'db' | 'dialect' | 'connection'> = {}): Promise<SqlAdapter> {
  parseSqlSpec(spec);
  try {
    return await createSqlAdapter({ ...options, connection: spec });
  } catch (err) {
    // A missing or broken driver is not this database's fault: its own one-line message says what to run.
    if (err instanceof InvalidOptionError || err instanceof SqlDriverUnavailableError) throw err;
    throw new SqlConnectError(spec, err);
  }
}
