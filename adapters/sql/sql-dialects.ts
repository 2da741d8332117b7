/**
 * Everything that differs between SQLite, PostgreSQL and MySQL/MariaDB, in one place: one
 * `SqlDialect` object per database (`SQL_DIALECTS`) holding each difference as data or as a small
 * SQL builder: how a spec names it and how it is opened, column types and collations, the keyset
 * predicate, row locks and isolation, schemas, NUL in text, key widths, JSON members of a document,
 * upserts, index drops, DDL in transactions, and which driver errors mean "retry".
 *
 * Everything else (queries, transactions, migrations) is one Kysely implementation that reads the
 * dialect object; no other file compares a database kind (test/architecture/wire-rules.test.ts).
 */
import type { Kysely, RawBuilder } from 'kysely';
import type { SortOrder } from '../../lib/contract/messages';
import { loadKysely, openMysql, openPostgres, openSqlite, type ConnectionOptions } from './sql-drivers';

export type SqlKind = 'sqlite' | 'postgres' | 'mysql';

export const SQL_KINDS: readonly SqlKind[] = ['sqlite', 'postgres', 'mysql'];

export { loadKysely, loadOptional, oneLine, SqlDriverUnavailableError } from './sql-drivers';

/** Column types per dialect. `_id` and `sku` compare byte-wise (code point order), never padded or case-folded. */
export interface ColumnTypes {
  readonly id: string;
  readonly sku: string;
  readonly timestamp: string;
  readonly doc: string;
  readonly entity: string;
  /** A request digest (hex SHA-256) of the idempotency records. */
  readonly digest: string;
  readonly tableSuffix: string;
}

/** A database's SQL text for reading one member of the JSON `doc` column. */
type DocMember = (member: string) => RawBuilder<unknown>;

/**
 * One database's differences. The SQL adapter, its migrations, its state store, the connection
 * layer and the mapped adapter read these members instead of asking which database it is.
 */
export interface SqlDialect {
  readonly kind: SqlKind;
  /** The schemes of a connection spec (`postgres:`, `postgresql:` …); the first names it in messages. */
  readonly schemes: readonly string[];
  /** What follows the scheme: a file path (SQLite) or a server URL. */
  readonly target: 'file' | 'url';
  /** The protocol the driver reads URLs under, when it reads only one (mysql2: `mysql:`, not `mariadb:`). */
  readonly driverProtocol?: string;
  /** Opens a Kysely instance on the driver (loaded now, not before). */
  readonly open: (target: string, options: ConnectionOptions) => Kysely<any>;
  /** The name of Kysely's adapter class for this database (to tell the dialect of a given instance). */
  readonly kyselyAdapter: 'SqliteAdapter' | 'PostgresAdapter' | 'MysqlAdapter';
  readonly columns: ColumnTypes;
  /** Schemas (`schema` option; indexes are then named inside the schema too). PostgreSQL only. */
  readonly schemas: boolean;
  /** `text` can hold U+0000. PostgreSQL's cannot (the driver fails with "invalid byte sequence"). */
  readonly textHoldsNul: boolean;
  /** Longest key (UTF-8 bytes) an indexed key column holds (MySQL's `varbinary(1024)`); longer keys are kept in the document only. */
  readonly maxKeyBytes?: number;
  /**
   * `SELECT … FOR UPDATE` row locks, and transactions at READ COMMITTED (a locking read sees the
   * latest committed row; MySQL takes no gap locks). SQLite has neither: its write lock is the
   * whole database's, taken first thing in a write transaction (`BEGIN IMMEDIATE`-like).
   */
  readonly rowLocks: boolean;
  /**
   * The keyset predicate's row-value form `(a, b) > (?, ?)` becomes one index seek. MariaDB walks
   * the index from the start instead (O(depth)), so it gets the expanded form (`keysetPredicate`).
   */
  readonly rowValueSeek: boolean;
  /** DDL inside a transaction (a failed migration run rolls back whole). Not MySQL's. */
  readonly transactionalDdl: boolean;
  /** Migrations run holding the database write lock (SQLite: Kysely's own lock there is per connection). */
  readonly migrationsLockDatabase: boolean;
  /** `drop index` of an index on a table. */
  readonly dropIndex: (index: RawBuilder<unknown>, table: RawBuilder<unknown>) => RawBuilder<unknown>;
  /** An identifier (or `schema.table`) quoted for a statement printed to the operator. */
  readonly quote: (id: string) => string;
  /** A member of the JSON `doc` column, as text. */
  readonly docText: DocMember;
  /** Whether the `doc` member is a string an indexed key column can hold (no NUL where text cannot, not wider than `maxKeyBytes`). */
  readonly docHasKeyText: (member: string) => RawBuilder<boolean>;
  /** `update …` that sets `column` to NULL on every row but the newest of each group holding one value (`newer(n, o)`: n is newer than o, same value). */
  readonly keepNewest: (table: string, column: string, newer: (n: string, o: string) => string) => string;
  /** Insert or replace `v` under the primary key `k` (two columns named `k` and `v`). */
  readonly upsertKeyValue: (table: RawBuilder<unknown>, k: string, v: string) => RawBuilder<unknown>;
  /** Insert a row, or update its other columns when its primary key (`key`, the first column of `row`'s keys named by it) exists. */
  readonly upsertRow: (table: RawBuilder<unknown>, key: string, row: Readonly<Record<string, unknown>>) => RawBuilder<unknown>;
  /** Insert `v` under `k` unless `k` exists (then nothing changes, and no row counts as affected). */
  readonly insertKeyValueIfAbsent: (table: RawBuilder<unknown>, k: string, v: string) => RawBuilder<unknown>;
  /** A unique-key violation: another writer created the same key first. */
  readonly isUniqueViolation: (err: unknown) => boolean;
  /** A deadlock or serialization failure (or SQLite's busy lock): the database rolled back; retrying is safe. */
  readonly isTransientConflict: (err: unknown) => boolean;
  /**
   * The tables among `names` that exist (in `schema`, or where an unqualified `create table` puts
   * them): one keyed catalog read, whatever else the database holds. What the migrations ask of the
   * catalog (`sql-migrations.ts`), instead of Kysely's introspection of every table.
   */
  readonly tablesNamed: (names: readonly string[], schema: string | undefined) => RawBuilder<{ name: string }>;
  /** A failed migration run worth running again (another process held the lock, or dropped a table meanwhile). */
  readonly retryMigration: (err: unknown, ownTables: readonly string[]) => boolean;
}

function errorCode(err: unknown): { code?: unknown; errno?: unknown; message?: unknown } {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown; errno?: unknown; message?: unknown }) : {};
}

/** MySQL's key columns are `varbinary(1024)`: longer keys are not indexed (the document keeps them). */
const MYSQL_KEY_BYTES = 1024;

const sqlOf = () => loadKysely().sql;
/** A JSON member as SQL literal text (members are the code's own names, never input). */
const memberLiteral = (member: string, prefix = '') => sqlOf().raw(`'${prefix}${member}'`);
const doubleQuoted = (id: string) => id.split('.').map((part) => `"${part}"`).join('.');

/** The update that keeps a value on the newest row of each group, in the `exists` form SQLite and PostgreSQL take. */
function keepNewestWhereExists(q: (id: string) => string): SqlDialect['keepNewest'] {
  return (table, column, newer) => {
    const [t, c] = [q(table), q(column)];
    return `update ${t} set ${c} = null where ${c} is not null and exists (select 1 from ${t} n where ${newer('n', t)});`;
  };
}

/** The column list and value list of an insert of `row`. */
const insertParts = (row: Readonly<Record<string, unknown>>) => {
  const sql = sqlOf();
  const names = Object.keys(row);
  return { names, columns: sql.join(names.map((n) => sql.id(n))), values: sql.join(names.map((n) => row[n])) };
};

/** `insert … on conflict (key) do update set …` (SQLite and PostgreSQL). */
const upsertRowOnConflict: SqlDialect['upsertRow'] = (table, key, row) => {
  const sql = sqlOf();
  const { names, columns, values } = insertParts(row);
  const set = sql.join(names.filter((n) => n !== key).map((n) => sql`${sql.id(n)} = excluded.${sql.id(n)}`));
  return sql`insert into ${table} (${columns}) values (${values}) on conflict (${sql.id(key)}) do update set ${set}`;
};

/** `insert … on conflict (k) do nothing` (SQLite and PostgreSQL). */
const insertOnConflictDoNothing: SqlDialect['insertKeyValueIfAbsent'] = (table, k, v) => {
  const sql = sqlOf();
  return sql`insert into ${table} (${sql.id('k')}, ${sql.id('v')}) values (${k}, ${v}) on conflict (${sql.id('k')}) do nothing`;
};

/** `insert … on conflict (k) do update` (SQLite and PostgreSQL). */
const upsertOnConflict: SqlDialect['upsertKeyValue'] = (table, k, v) => {
  const sql = sqlOf();
  return sql`insert into ${table} (${sql.id('k')}, ${sql.id('v')}) values (${k}, ${v}) on conflict (${sql.id('k')}) do update set ${sql.id('v')} = excluded.${sql.id('v')}`;
};

export const SQL_DIALECTS: { readonly [K in SqlKind]: SqlDialect & { readonly kind: K } } = {
  sqlite: {
    kind: 'sqlite',
    schemes: ['sqlite'],
    target: 'file',
    open: openSqlite,
    kyselyAdapter: 'SqliteAdapter',
    // SQLite's default BINARY collation is memcmp over UTF-8: code point order, no padding.
    columns: { id: 'text', sku: 'text', timestamp: 'integer', doc: 'text', entity: 'text', digest: 'text', tableSuffix: '' },
    schemas: false,
    textHoldsNul: true,
    rowLocks: false,
    rowValueSeek: true,
    transactionalDdl: true,
    migrationsLockDatabase: true,
    dropIndex: (index) => sqlOf()`drop index ${index}`,
    quote: doubleQuoted,
    docText: (member) => sqlOf()`json_extract(${sqlOf().ref('doc')}, ${memberLiteral(member, '$.')})`,
    docHasKeyText: (member) => sqlOf()<boolean>`json_type(${sqlOf().ref('doc')}, ${memberLiteral(member, '$.')}) = 'text'`,
    keepNewest: keepNewestWhereExists(doubleQuoted),
    upsertKeyValue: upsertOnConflict,
    upsertRow: upsertRowOnConflict,
    insertKeyValueIfAbsent: insertOnConflictDoNothing,
    isUniqueViolation: (err) => {
      const { code } = errorCode(err);
      return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
    },
    isTransientConflict: (err) => errorCode(err).code === 'SQLITE_BUSY',
    tablesNamed: (names) => sqlOf()<{ name: string }>`select name from sqlite_master where type = 'table' and name in (${sqlOf().join(names)})`,
    // Each migration holds the database write lock: a process that waited longer than busy_timeout for another one's gets SQLITE_BUSY.
    retryMigration: (err) => errorCode(err).code === 'SQLITE_BUSY',
  },
  postgres: {
    kind: 'postgres',
    schemes: ['postgres', 'postgresql'],
    target: 'url',
    open: openPostgres,
    kyselyAdapter: 'PostgresAdapter',
    // COLLATE "C": byte order whatever the database's default locale is, so the index order is the sort key order.
    columns: { id: 'text collate "C"', sku: 'text collate "C"', timestamp: 'bigint', doc: 'text', entity: 'text', digest: 'text', tableSuffix: '' },
    schemas: true,
    textHoldsNul: false,
    rowLocks: true,
    rowValueSeek: true,
    transactionalDdl: true,
    migrationsLockDatabase: false,
    dropIndex: (index) => sqlOf()`drop index ${index}`,
    quote: doubleQuoted,
    docText: (member) => sqlOf()`(${sqlOf().ref('doc')}::json ->> ${memberLiteral(member)})`,
    // Its `->>` fails on a string holding `\u0000`: such a member is not key text.
    docHasKeyText: (member) =>
      sqlOf()<boolean>`json_typeof(${sqlOf().ref('doc')}::json -> ${memberLiteral(member)}) = 'string' and strpos((${sqlOf().ref('doc')}::json -> ${memberLiteral(member)})::text, ${'\\u0000'}) = 0`,
    keepNewest: keepNewestWhereExists(doubleQuoted),
    upsertKeyValue: upsertOnConflict,
    upsertRow: upsertRowOnConflict,
    insertKeyValueIfAbsent: insertOnConflictDoNothing,
    isUniqueViolation: (err) => errorCode(err).code === '23505',
    isTransientConflict: (err) => {
      const { code } = errorCode(err);
      return code === '40001' || code === '40P01';
    },
    tablesNamed: (names, schema) =>
      sqlOf()<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${schema === undefined ? sqlOf()`current_schema()` : schema} and table_name in (${sqlOf().join(names)})`,
    // The migrator's catalog read fails (undefined_table, 42P01) when another program drops a table
    // meanwhile: worth a retry unless the table missing is one of ours.
    retryMigration: (err, ownTables) => {
      const { code, message } = errorCode(err);
      if (code !== '42P01' || typeof message !== 'string') return false;
      return !ownTables.some((name) => message.includes(`${name}"`));
    },
  },
  mysql: {
    kind: 'mysql',
    schemes: ['mysql', 'mariadb'],
    target: 'url',
    driverProtocol: 'mysql:',
    open: openMysql,
    kyselyAdapter: 'MysqlAdapter',
    // VARBINARY: byte order and exact equality (utf8mb4_bin is a PAD SPACE collation: 'a' = 'a ').
    // 1024 bytes holds MAX_ID_LENGTH (256) characters of up to 4 UTF-8 bytes each.
    columns: {
      id: 'varbinary(1024)',
      sku: 'varbinary(1024)',
      timestamp: 'bigint',
      doc: 'longtext character set utf8mb4 collate utf8mb4_bin',
      entity: 'varchar(16)',
      digest: 'varchar(64) character set ascii collate ascii_bin',
      tableSuffix: ' engine=InnoDB',
    },
    schemas: false,
    textHoldsNul: true,
    maxKeyBytes: MYSQL_KEY_BYTES,
    rowLocks: true,
    rowValueSeek: false,
    transactionalDdl: false,
    migrationsLockDatabase: false,
    dropIndex: (index, table) => sqlOf()`drop index ${index} on ${table}`,
    quote: (id) => `\`${id}\``,
    docText: (member) => sqlOf()`json_unquote(json_extract(${sqlOf().ref('doc')}, ${memberLiteral(member, '$.')}))`,
    docHasKeyText: (member) =>
      sqlOf()<boolean>`json_type(json_extract(${sqlOf().ref('doc')}, ${memberLiteral(member, '$.')})) = 'STRING' and length(json_unquote(json_extract(${sqlOf().ref('doc')}, ${memberLiteral(member, '$.')}))) <= ${MYSQL_KEY_BYTES}`,
    keepNewest: (table, column, newer) => {
      const q = (id: string) => `\`${id}\``;
      const [t, c] = [q(table), q(column)];
      return `update ${t} join (select o._id from ${t} o join ${t} n on ${newer('n', 'o')}) d on d._id = ${t}._id set ${t}.${c} = null;`;
    },
    upsertKeyValue: (table, k, v) => {
      const sql = sqlOf();
      return sql`insert into ${table} (${sql.id('k')}, ${sql.id('v')}) values (${k}, ${v}) on duplicate key update ${sql.id('v')} = values(${sql.id('v')})`;
    },
    upsertRow: (table, key, row) => {
      const sql = sqlOf();
      const { names, columns, values } = insertParts(row);
      const set = sql.join(names.filter((n) => n !== key).map((n) => sql`${sql.id(n)} = values(${sql.id(n)})`));
      return sql`insert into ${table} (${columns}) values (${values}) on duplicate key update ${set}`;
    },
    // Not `on duplicate key update k = k`: mysql2 connects with CLIENT_FOUND_ROWS, which counts that no-op as a row.
    insertKeyValueIfAbsent: (table, k, v) => {
      const sql = sqlOf();
      return sql`insert ignore into ${table} (${sql.id('k')}, ${sql.id('v')}) values (${k}, ${v})`;
    },
    isUniqueViolation: (err) => {
      const { code, errno } = errorCode(err);
      return errno === 1062 || code === 'ER_DUP_ENTRY';
    },
    isTransientConflict: (err) => {
      const { code, errno } = errorCode(err);
      return errno === 1213 || code === 'ER_LOCK_DEADLOCK';
    },
    tablesNamed: (names) => sqlOf()<{ name: string }>`select table_name as name from information_schema.tables where table_schema = database() and table_name in (${sqlOf().join(names)})`,
    retryMigration: () => false,
  },
};

/** Column types per database (the dialects' `columns`). */
export const COLUMN_TYPES: { readonly [K in SqlKind]: ColumnTypes } = {
  sqlite: SQL_DIALECTS.sqlite.columns,
  postgres: SQL_DIALECTS.postgres.columns,
  mysql: SQL_DIALECTS.mysql.columns,
};

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
  const dialect = SQL_DIALECTS[kind];
  if (!dialect.textHoldsNul) after = withoutNul(after, sortorder);
  const lu = columns?.lastUpdated ?? sql.ref('last_updated');
  const id = columns?.id ?? sql.ref('_id');
  const strict = sql.raw(sortorder === 'asc' ? '>' : '<');
  const loose = sql.raw(sortorder === 'asc' ? '>=' : '<=');
  if (!dialect.rowValueSeek || columns?.expanded) {
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

/** A unique-key violation: another writer created the same `_id` first. The transaction is retried. */
export function isUniqueViolation(kind: SqlKind, err: unknown): boolean {
  return SQL_DIALECTS[kind].isUniqueViolation(err);
}

/** Deadlocks and serialization failures: the database rolled the transaction back; retrying is safe. */
export function isTransientConflict(kind: SqlKind, err: unknown): boolean {
  return SQL_DIALECTS[kind].isTransientConflict(err);
}
