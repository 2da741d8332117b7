/**
 * Everything that differs between SQLite, PostgreSQL and MySQL/MariaDB, in one place: one
 * `SqlDialect` object per database (`SQL_DIALECTS`) holding each difference as data or as a small
 * SQL builder: how a spec names it and how it is opened, column types and collations, the keyset
 * predicate, row locks and isolation, schemas, NUL in text, key widths, JSON members of a document,
 * upserts, index drops, DDL in transactions, and which driver errors mean "retry"; and for the mapped
 * adapter (adapters/mapped), which serves a shop's own tables: how the catalog describes them, typed
 * columns and timestamps, byte-ordered ids, expression and partial indexes, query plans, key locks,
 * sequences and row-count triggers.
 *
 * Everything else (queries, transactions, migrations, the mapped adapter) is one Kysely
 * implementation that reads the dialect object; no other file of adapters/sql or adapters/mapped
 * compares a database kind (test/architecture/wire-rules.test.ts).
 */
import { createHash } from 'node:crypto';
import type { Kysely, RawBuilder } from 'kysely';
import type { SortOrder } from '../../lib/contract/messages';
import { loadKysely, openMysql, openPostgres, openSqlite, type ConnectionOptions } from './sql-drivers';

/** A column value as text: mysql2 returns VARBINARY columns as Buffers. */
export function columnText(value: unknown): string {
  return typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}

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

/** What the catalog says of a column of a shop's table (the mapped adapter's start-up inspection). */
export interface CatalogColumn {
  readonly name: string;
  /** The declared type, lower case (`integer`, `timestamp with time zone`, `varchar`, …). */
  readonly type: string;
  readonly nullable: boolean;
  /** Its collation when the database reports one (PostgreSQL, MariaDB). */
  readonly collation?: string;
  /** Fractional-second digits of a timestamp column (PostgreSQL, MariaDB). */
  readonly precision?: number;
  /** PostgreSQL: the column's default takes a sequence value (`serial`, `identity`). */
  readonly sequence?: boolean;
  /** Part of the primary key. */
  readonly primaryKey?: boolean;
}

/** A timestamp column as the mapped adapter sorts, reads and writes it, in milliseconds (see `TimeKey` in adapters/mapped/mapped-keys.ts). */
export interface TimestampColumn {
  readonly resolutionMs: number;
  readonly sort: RawBuilder<unknown>;
  /** The column as milliseconds since 1970. */
  readonly select: RawBuilder<unknown>;
  value(ms: number): unknown;
  write(ms: number): unknown;
}

/** The names of the two row-count triggers of a table (`both`: PostgreSQL's one trigger for both). */
export interface CountTriggerNames {
  readonly insert: string;
  readonly delete: string;
  readonly both: string;
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

  // The mapped adapter (adapters/mapped): a shop's own tables, as the catalog describes them.

  /** The columns of `schema.name` (no schema: the connection's default), in table order; none when there is no such table. */
  readonly columnsOf: (db: Kysely<any>, schema: string | undefined, name: string) => Promise<CatalogColumn[]>;
  /** A column holds only values of its declared type. SQLite's types are affinities (any column holds any value), so no declared type is checked there. */
  readonly typedColumns: boolean;
  /** Whether a declared type is an integer type (SQLite: by its affinity rule, "INT" anywhere in the name). */
  readonly isIntegerType: (type: string) => boolean;
  /** A date-time column (`timestamp`, `datetime`) as sorted, read and written in ms; absent where there is no date-time type (SQLite: a `timestamp` column holds ISO text). */
  readonly timestampColumn?: (column: CatalogColumn) => TimestampColumn;
  /** The native UUID type (PostgreSQL's `uuid`: lower-case text whose order is its bytes' order); absent where there is none. */
  readonly uuidType?: string;
  /** An id column's values in their text's byte order (the order ids compare in) when the column does not sort so itself (an integer, a linguistic or PAD SPACE collation); else `undefined`. */
  readonly byteOrder: (ref: RawBuilder<unknown>, column: CatalogColumn, integer: boolean) => RawBuilder<unknown> | undefined;
  /** `column = value` matching exactly: MySQL/MariaDB text collations may be case-insensitive or PAD SPACE, so there the bytes are compared too. */
  readonly exactlyEquals: (ref: RawBuilder<unknown>, column: CatalogColumn, value: unknown) => RawBuilder<unknown>;
  /** An index can hold an expression (`cast(id as text)`). MariaDB's cannot (only a generated column): a page sorted by one is bounded by the time index first. */
  readonly expressionIndexes: boolean;
  /** A unique index can leave rows out (`create unique index … where …`). MariaDB and MySQL have no partial index. */
  readonly partialIndexes: boolean;
  /** Whether the database reads `query`'s rows from an index in their order, sorting none (read from its query plan). */
  readonly indexServesOrder: (db: Kysely<any>, query: RawBuilder<unknown>) => Promise<boolean>;
  /** The unique indexes on `column` alone (not a prefix, not an expression) of `table` (`schema.name` split), and whether each is partial. */
  readonly uniqueIndexesOn: (db: Kysely<any>, table: string, schema: string | undefined, name: string, column: string) => Promise<Array<{ partial: boolean }>>;
  /** Locks `key` of `table` for the write transaction `trx` (`false`: not got in `waitS` s; `release`: MariaDB's session lock, released after it ends; SQLite: none, its write lock is the database's). */
  readonly lockKey: (trx: Kysely<any>, table: string, key: string, waitS: number) => Promise<false | { release?: RawBuilder<unknown> }>;
  /** Key locks belong to the session, not the transaction (MariaDB): writes that take them run on one connection, released after the transaction. */
  readonly sessionKeyLocks: boolean;
  /** The next value of an id column's sequence (`serial`, identity), where the database keeps one (PostgreSQL); elsewhere a new integer id is the largest plus one. */
  readonly nextSequenceValue?: (qualifiedTable: string, column: string) => RawBuilder<{ n: unknown }>;
  /** The install of a trigger-kept row count (mapped-counts.ts), in order: in one transaction, or with `unlock` (MariaDB: no DDL in transactions) in one session under LOCK TABLES. */
  readonly rowCountInstall: (counts: RawBuilder<unknown>, table: RawBuilder<unknown>, key: RawBuilder<unknown>, names: CountTriggerNames) => { steps: RawBuilder<unknown>[]; unlock?: RawBuilder<unknown> };
  /** Whether the row-count triggers of `table` are all in place. */
  readonly rowCountTriggersFound: (db: Kysely<any>, table: string, names: CountTriggerNames) => Promise<boolean>;
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

// ---------------------------------------------------------------------------------------------
// The mapped adapter's catalog reads and per-database SQL (adapters/mapped)
// ---------------------------------------------------------------------------------------------

type CatalogRows = Array<Record<string, unknown>>;
const catalogRows = async (db: Kysely<any>, query: RawBuilder<unknown>): Promise<CatalogRows> => (await query.execute(db)).rows as CatalogRows;

/** PostgreSQL and MariaDB name integer types so; SQLite's affinity rule is looser (`isIntegerType`). */
const INTEGER_TYPE = /^(tinyint|smallint|mediumint|int|integer|bigint|int2|int4|int8|serial|bigserial|smallserial)\b/;
const isServerIntegerType = (type: string) => INTEGER_TYPE.test(type);

/** Whether a MariaDB column compares by bytes, without padding. */
const mysqlBinary = (column: CatalogColumn) => /binary|blob/.test(column.type) || /_nopad_bin$/.test(column.collation ?? '');

/** Whether a query plan as rows of text has a row matching `sorts` (a sort of the rows, not an index's order). */
const planSorts = async (db: Kysely<any>, explain: RawBuilder<unknown>, sorts: (row: Record<string, unknown>) => boolean) => (await catalogRows(db, explain)).some(sorts);

/** The count of `table`'s row-count triggers among `names`, compared with how many there are. */
const triggersFound = async (db: Kysely<any>, query: RawBuilder<{ c: unknown }>, want: number) => Number((await query.execute(db)).rows[0].c) === want;

/**
 * PostgreSQL's timestamps: `extract(epoch …)` reads a `timestamp` (without time zone) as UTC, and
 * values are written the same way. Finer than ms (the default, 6 digits): sorted by `date_trunc` to
 * ms (of the UTC time for `timestamptz`, so that an expression index can hold it: that form is immutable).
 */
function postgresTimestamp(info: CatalogColumn): TimestampColumn {
  const sql = sqlOf();
  const ref = sql.ref(info.name);
  const zoned = info.type.includes('with time zone');
  const precision = info.precision ?? 6;
  const utc = zoned ? sql`(${ref} at time zone 'UTC')` : ref;
  const sort = precision > 3 ? sql`date_trunc('milliseconds', ${utc})` : ref;
  const literal = (ms: number, zone: boolean) => {
    const text = new Date(ms).toISOString().replace('T', ' ').replace('Z', zone ? '+00' : '');
    return sql`cast(${text} as ${sql.raw(zone ? 'timestamptz' : 'timestamp')})`;
  };
  return {
    resolutionMs: 10 ** (3 - Math.min(precision, 3)),
    sort,
    select: sql`floor(extract(epoch from ${sort}) * 1000)`,
    // Truncated, `sort` is a UTC time without a zone; otherwise it is the column itself.
    value: (ms) => literal(ms, zoned && precision <= 3),
    write: (ms) => literal(ms, zoned),
  };
}

/**
 * MariaDB / MySQL's DATETIME and TIMESTAMP: `UNIX_TIMESTAMP` and `FROM_UNIXTIME` convert in the
 * session's time zone, both ways, so a DATETIME is read as the time the shop's own `NOW()` wrote.
 * Finer than ms: sorted by a cast to DATETIME(3) (no index can hold that; see docs/mapping.md for a
 * generated column).
 */
function mysqlTimestamp(info: CatalogColumn): TimestampColumn {
  const sql = sqlOf();
  const ref = sql.ref(info.name);
  const precision = info.precision ?? 0;
  const sort = precision > 3 ? sql`cast(${ref} as datetime(3))` : ref;
  // Seconds as decimal text: exact, where a float parameter could round the milliseconds.
  const fromUnixtime = (ms: number) => sql`from_unixtime(${`${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`})`;
  return {
    resolutionMs: 10 ** (3 - Math.min(precision, 3)),
    sort,
    select: sql`floor(unix_timestamp(${sort}) * 1000)`,
    value: fromUnixtime,
    write: fromUnixtime,
  };
}

/** A trigger statement's `update` of one table's count. */
const bumpCount = (counts: RawBuilder<unknown>, key: RawBuilder<unknown>, delta: string) => sqlOf()`update ${counts} set n = n ${sqlOf().raw(delta)} where table_name = ${key}`;
const createCounts = (counts: RawBuilder<unknown>) => sqlOf()`create table if not exists ${counts} (table_name varchar(255) not null primary key, n bigint not null)`;

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
    columnsOf: async (db, _schema, name) =>
      (await catalogRows(db, sqlOf()`select name, type, "notnull", pk from pragma_table_xinfo(${name})`)).map((r) => ({
        name: String(r.name),
        type: String(r.type ?? '').toLowerCase(),
        nullable: !Number(r.notnull) && !Number(r.pk),
        primaryKey: Number(r.pk) > 0,
      })),
    typedColumns: false,
    isIntegerType: (type) => /int/i.test(type),
    byteOrder: (ref, _column, integer) => (integer ? sqlOf()`cast(${ref} as text)` : undefined),
    exactlyEquals: (ref, _column, value) => sqlOf()`${ref} = ${value}`,
    expressionIndexes: true,
    partialIndexes: true,
    indexServesOrder: async (db, query) => !(await planSorts(db, sqlOf()`explain query plan ${query}`, (r) => /TEMP B-TREE/.test(String(r.detail)))),
    uniqueIndexesOn: async (db, _table, _schema, name, column) =>
      (
        await catalogRows(
          db,
          sqlOf()`select l.partial from pragma_index_list(${name}) l where l."unique" = 1 and (select count(*) from pragma_index_info(l.name)) = 1 and (select i.name from pragma_index_info(l.name) i) = ${column}`,
        )
      ).map((r) => ({ partial: Number(r.partial) === 1 })),
    // The write transaction took the database's write lock first (runWriteTransaction's lockSqlite).
    lockKey: async () => ({}),
    sessionKeyLocks: false,
    rowCountInstall: (counts, table, key, names) => {
      const sql = sqlOf();
      return {
        steps: [
          createCounts(counts),
          sql`insert or replace into ${counts} (table_name, n) select ${key}, count(*) from ${table}`,
          sql`create trigger ${sql.id(names.insert)} after insert on ${table} begin ${bumpCount(counts, key, '+ 1')}; end`,
          sql`create trigger ${sql.id(names.delete)} after delete on ${table} begin ${bumpCount(counts, key, '- 1')}; end`,
        ],
      };
    },
    rowCountTriggersFound: (db, _table, names) =>
      triggersFound(db, sqlOf()<{ c: unknown }>`select count(*) as c from sqlite_master where type = 'trigger' and name in (${names.insert}, ${names.delete})`, 2),
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
    columnsOf: async (db, schema, name) =>
      (
        await catalogRows(
          db,
          sqlOf()`select c.column_name, c.data_type, c.is_nullable, c.collation_name, c.datetime_precision, c.column_default, c.is_identity,
            exists (select 1 from information_schema.table_constraints tc
                    join information_schema.key_column_usage k on k.constraint_schema = tc.constraint_schema and k.constraint_name = tc.constraint_name
                    where tc.constraint_type = 'PRIMARY KEY' and tc.table_schema = c.table_schema and tc.table_name = c.table_name and k.column_name = c.column_name) as pk
          from information_schema.columns c
          where c.table_schema = coalesce(${schema ?? null}::text, current_schema()) and c.table_name = ${name}
          order by c.ordinal_position`,
        )
      ).map((r) => ({
        name: String(r.column_name),
        type: String(r.data_type).toLowerCase(),
        nullable: r.is_nullable === 'YES',
        ...(r.collation_name ? { collation: String(r.collation_name) } : {}),
        ...(r.datetime_precision !== null ? { precision: Number(r.datetime_precision) } : {}),
        sequence: r.is_identity === 'YES' || /^nextval\(/.test(String(r.column_default ?? '')),
        primaryKey: r.pk === true,
      })),
    typedColumns: true,
    isIntegerType: isServerIntegerType,
    timestampColumn: postgresTimestamp,
    uuidType: 'uuid',
    byteOrder: (ref, column, integer) => {
      if (integer) return sqlOf()`(cast(${ref} as text) collate "C")`;
      // A uuid sorts by its 16 bytes, which is the byte order of its fixed-layout lower-case text.
      return column.type === 'uuid' || /^(C|POSIX)$/.test(column.collation ?? '') ? undefined : sqlOf()`(${ref} collate "C")`;
    },
    exactlyEquals: (ref, _column, value) => sqlOf()`${ref} = ${value}`,
    expressionIndexes: true,
    partialIndexes: true,
    // With sorting and sequential scans priced out, a sort node remains only when no index gives the order.
    indexServesOrder: (db, query) =>
      db.transaction().execute(async (trx) => {
        const sql = sqlOf();
        for (const setting of ['enable_seqscan', 'enable_sort', 'enable_incremental_sort']) await sql`select set_config(${setting}, 'off', true)`.execute(trx);
        const plan = (await sql`explain (format json) ${query}`.execute(trx)).rows[0] as Record<string, unknown>;
        return !/"Node Type":\s*"(Incremental )?Sort"/.test(JSON.stringify(plan));
      }),
    uniqueIndexesOn: async (db, table, _schema, _name, column) => {
      const sql = sqlOf();
      const qualified = sql.table(table).compile(db).sql;
      const list = await catalogRows(
        db,
        sql`select i.indpred is not null as partial from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
          where i.indrelid = to_regclass(${qualified}) and i.indisunique and i.indnkeyatts = 1 and i.indexprs is null and a.attname = ${column}`,
      );
      return list.map((r) => ({ partial: r.partial === true }));
    },
    // Two 32-bit keys (a space apart from one 64-bit key): a collision only makes two keys wait for each other.
    lockKey: async (trx, table, key) => {
      await sqlOf()`select pg_advisory_xact_lock(hashtext(${table}), hashtext(${key}))`.execute(trx);
      return {};
    },
    sessionKeyLocks: false,
    nextSequenceValue: (qualifiedTable, column) => sqlOf()<{ n: unknown }>`select nextval(pg_get_serial_sequence(${qualifiedTable}, ${column})) as n`,
    rowCountInstall: (counts, table, key, names) => {
      const sql = sqlOf();
      return {
        steps: [
          createCounts(counts),
          sql`create or replace function storebridge_count_rows() returns trigger language plpgsql as $$
begin
  update ${counts} set n = n + (case when tg_op = 'INSERT' then 1 else -1 end) where table_name = tg_argv[0];
  return null;
end $$`,
          sql`lock table ${table} in share row exclusive mode`,
          sql`insert into ${counts} (table_name, n) select ${key}, count(*) from ${table} on conflict (table_name) do update set n = excluded.n`,
          sql`create trigger ${sql.id(names.both)} after insert or delete on ${table} for each row execute function storebridge_count_rows(${key})`,
        ],
      };
    },
    rowCountTriggersFound: (db, table, names) =>
      triggersFound(db, sqlOf()<{ c: unknown }>`select count(*) as c from pg_trigger where tgname = ${names.both} and tgrelid = to_regclass(${sqlOf().table(table).compile(db).sql})`, 1),
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
    columnsOf: async (db, schema, name) =>
      (
        await catalogRows(
          db,
          sqlOf()`select column_name as n, data_type as t, is_nullable as nl, collation_name as co, datetime_precision as p, column_key as k
          from information_schema.columns
          where table_schema = coalesce(${schema ?? null}, database()) and table_name = ${name}
          order by ordinal_position`,
        )
      ).map((r) => ({
        name: columnText(r.n),
        type: columnText(r.t).toLowerCase(),
        nullable: columnText(r.nl) === 'YES',
        ...(r.co ? { collation: columnText(r.co) } : {}),
        ...(r.p !== null && r.p !== undefined ? { precision: Number(r.p) } : {}),
        primaryKey: columnText(r.k) === 'PRI',
      })),
    typedColumns: true,
    isIntegerType: isServerIntegerType,
    timestampColumn: mysqlTimestamp,
    byteOrder: (ref, column, integer) => (integer || !mysqlBinary(column) ? sqlOf()`cast(${ref} as binary)` : undefined),
    // The indexed comparison narrows the rows; the bytes then decide (`'mug-1' = 'MUG-1 '` in a case-insensitive PAD SPACE collation).
    exactlyEquals: (ref, column, value) =>
      isServerIntegerType(column.type) || mysqlBinary(column) ? sqlOf()`${ref} = ${value}` : sqlOf()`${ref} = ${value} and cast(${ref} as binary) = cast(${value} as binary)`,
    expressionIndexes: false,
    partialIndexes: false,
    indexServesOrder: async (db, query) => !(await planSorts(db, sqlOf()`explain ${query}`, (r) => /filesort/i.test(String(r.Extra ?? r.extra ?? '')))),
    // A prefix (`sub_part`) is unique only in its first characters: not an index on the whole key.
    uniqueIndexesOn: async (db, _table, schema, name, column) =>
      (
        await catalogRows(
          db,
          sqlOf()`select index_name from information_schema.statistics where table_schema = coalesce(${schema ?? null}, database()) and table_name = ${name} and non_unique = 0
          group by index_name having count(*) = 1 and max(column_name) = ${column} and max(sub_part) is null`,
        )
      ).map(() => ({ partial: false })),
    lockKey: async (trx, table, key, waitS) => {
      const sql = sqlOf();
      const name = `storebridge:${createHash('sha1').update(`${table}\u0000${key}`).digest('hex')}`; // names: at most 64 characters
      const { rows: got } = await sql<{ ok: unknown }>`select get_lock(${name}, ${waitS}) as ok`.execute(trx);
      return Number(got[0].ok) === 1 && { release: sql`do release_lock(${name})` };
    },
    sessionKeyLocks: true,
    rowCountInstall: (counts, table, key, names) => {
      const sql = sqlOf();
      return {
        steps: [
          sql`${createCounts(counts)} engine=InnoDB`,
          sql`lock tables ${table} write, ${counts} write`,
          sql`create trigger ${sql.id(names.insert)} after insert on ${table} for each row ${bumpCount(counts, key, '+ 1')}`,
          sql`create trigger ${sql.id(names.delete)} after delete on ${table} for each row ${bumpCount(counts, key, '- 1')}`,
          sql`replace into ${counts} (table_name, n) select ${key}, count(*) from ${table}`,
          sql`unlock tables`,
        ],
        unlock: sql`unlock tables`,
      };
    },
    rowCountTriggersFound: (db, _table, names) =>
      triggersFound(
        db,
        sqlOf()<{ c: unknown }>`select count(*) as c from information_schema.triggers where trigger_schema = database() and trigger_name in (${names.insert}, ${names.delete})`,
        2,
      ),
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
