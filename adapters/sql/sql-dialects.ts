/**
 * What differs between SQLite, PostgreSQL and MySQL/MariaDB: column types and collations, the
 * keyset predicate, and which driver errors mean "retry the write transaction".
 *
 * Everything else (queries, transactions, migrations) is one Kysely implementation.
 */
import type { RawBuilder } from 'kysely';
import type { SortOrder } from '../../lib/contract/messages';
import { StorebridgeError } from '../../lib/errors';

export type SqlKind = 'sqlite' | 'postgres' | 'mysql';

export const SQL_KINDS: readonly SqlKind[] = ['sqlite', 'postgres', 'mysql'];

type Kysely = typeof import('kysely');

/** Loads Kysely only when a SQL adapter is actually used (a dependency, but kept off the CLI's start-up path). */
export function loadKysely(): Kysely {
  return loadOptional<Kysely>('kysely', 'the SQL adapter');
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

/** Column types per dialect. `_id` and `sku` compare byte-wise (code point order), never padded or case-folded. */
export interface ColumnTypes {
  readonly id: string;
  readonly sku: string;
  readonly timestamp: string;
  readonly doc: string;
  readonly entity: string;
  readonly tableSuffix: string;
}

export const COLUMN_TYPES: Record<SqlKind, ColumnTypes> = {
  // SQLite's default BINARY collation is memcmp over UTF-8: code point order, no padding.
  sqlite: { id: 'text', sku: 'text', timestamp: 'integer', doc: 'text', entity: 'text', tableSuffix: '' },
  // COLLATE "C": byte order whatever the database's default locale is, so the index order is the sort key order.
  postgres: { id: 'text collate "C"', sku: 'text collate "C"', timestamp: 'bigint', doc: 'text', entity: 'text', tableSuffix: '' },
  // VARBINARY: byte order and exact equality (utf8mb4_bin is a PAD SPACE collation: 'a' = 'a ').
  // 1024 bytes holds MAX_ID_LENGTH (256) characters of up to 4 UTF-8 bytes each.
  mysql: {
    id: 'varbinary(1024)',
    sku: 'varbinary(1024)',
    timestamp: 'bigint',
    doc: 'longtext character set utf8mb4 collate utf8mb4_bin',
    entity: 'varchar(16)',
    tableSuffix: ' engine=InnoDB',
  },
};

/** Longest SKU (UTF-8 bytes) kept in the indexed `sku` column on MySQL; longer ones are not indexed. */
export const MYSQL_MAX_SKU_BYTES = 1024;

/**
 * A keyset position as the database compares it: a `SortKey`, or (the mapped adapter) its
 * `last_updated` in the time column's own terms (seconds, a timestamp expression, ISO text).
 */
export interface KeysetPosition {
  readonly last_updated: unknown;
  readonly _id: string;
}

/** The two sort-key expressions of a keyset query (default: the SQL adapter's own columns). */
export interface KeysetColumns {
  readonly lastUpdated: RawBuilder<unknown>;
  readonly id: RawBuilder<unknown>;
  /**
   * Use the expanded form everywhere (the mapped adapter, when no index covers both expressions:
   * the `last_updated >= ?` bound is what a plain index on the time column can seek on).
   */
  readonly expanded?: boolean;
}

/**
 * The keyset predicate "strictly after `after` in `sortorder`".
 *
 * SQLite and PostgreSQL get the row-value form `(last_updated, _id) > (?, ?)`, which both planners
 * turn into one index seek (the expanded OR form makes SQLite scan at some depths). MariaDB does
 * not seek on a row-value comparison (it walks the index from the start: O(depth)), so MySQL gets
 * the expanded form with a redundant `last_updated >= ?` bound that the optimizer seeks on; the OR
 * then only filters the rows that tie on `last_updated`.
 */
export function keysetPredicate(kind: SqlKind, sortorder: SortOrder, after: KeysetPosition, columns?: KeysetColumns): RawBuilder<boolean> {
  const { sql } = loadKysely();
  if (kind === 'postgres') after = withoutNul(after, sortorder);
  const lu = columns?.lastUpdated ?? sql.ref('last_updated');
  const id = columns?.id ?? sql.ref('_id');
  const strict = sql.raw(sortorder === 'asc' ? '>' : '<');
  const loose = sql.raw(sortorder === 'asc' ? '>=' : '<=');
  if (kind === 'mysql' || columns?.expanded) {
    return sql<boolean>`${lu} ${loose} ${after.last_updated} and (${lu} ${strict} ${after.last_updated} or ${id} ${strict} ${after._id})`;
  }
  return sql<boolean>`(${lu}, ${id}) ${strict} (${after.last_updated}, ${after._id})`;
}

/**
 * A key PostgreSQL can take as a parameter, equivalent to `after` for every id it can store. Its
 * `text` cannot hold U+0000 (the driver fails with "invalid byte sequence"), so no stored id has
 * one, and in byte order, for such ids: `id > "a\0…"` exactly when `id > "a"`, and
 * `id < "a\0…"` exactly when `id < "a\u0001"`. So `asc` cuts the id at its first NUL and `desc`
 * puts U+0001 in its place.
 */
export function withoutNul<K extends KeysetPosition>(after: K, sortorder: SortOrder): K {
  const nul = after._id.indexOf('\u0000');
  if (nul < 0) return after;
  const head = after._id.slice(0, nul);
  return { ...after, _id: sortorder === 'asc' ? head : `${head}\u0001` };
}

function errorCode(err: unknown): { code?: unknown; errno?: unknown } {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown; errno?: unknown }) : {};
}

/** A unique-key violation: another writer created the same `_id` first. The transaction is retried. */
export function isUniqueViolation(kind: SqlKind, err: unknown): boolean {
  const { code, errno } = errorCode(err);
  if (kind === 'postgres') return code === '23505';
  if (kind === 'mysql') return errno === 1062 || code === 'ER_DUP_ENTRY';
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Deadlocks and serialization failures: the database rolled the transaction back; retrying is safe. */
export function isTransientConflict(kind: SqlKind, err: unknown): boolean {
  const { code, errno } = errorCode(err);
  if (kind === 'postgres') return code === '40001' || code === '40P01';
  if (kind === 'mysql') return errno === 1213 || code === 'ER_LOCK_DEADLOCK';
  return code === 'SQLITE_BUSY';
}
