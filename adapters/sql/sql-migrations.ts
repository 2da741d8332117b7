/**
 * The SQL adapter's schema, as Kysely migrations (run by Kysely's `Migrator`, which records what
 * ran in `<prefix>migrations` and holds a lock while it runs, so a re-run is a no-op and two
 * processes starting at once do not both migrate). A refused one leaves the ones before it done.
 *
 * Tables (`<prefix>` is the `tablePrefix` option, default `storebridge_`):
 * - `<prefix>products (_id PK, last_updated, sku, doc)`, index `(last_updated, _id)`, unique `(sku)`
 * - `<prefix>orders (_id PK, last_updated, orderid, doc)`, index `(last_updated, _id)`, unique `(orderid)`
 * - `<prefix>counts (entity PK, n)`: the exact number of rows per entity, maintained in the same
 *   transaction as every insert, so `itemsTotal` is a primary-key read instead of `count(*)`.
 * - `<prefix>idempotency (key PK, fingerprint, expires_at, outcome)`: writes made under an
 *   `Idempotency-Key` header.
 *
 * `doc` is the item's webhook-form JSON text exactly as served (never re-serialized on reads). The
 * `sku` / `orderid` columns hold the value an item is found by (`uniqueKeyOf`), NULL when it has
 * none, or when a replicated item repeats a key another item holds.
 */
import type { DatabaseIntrospector, Kysely, Migration, MigrationResultSet, MigratorProps, RawBuilder, TableMetadata } from 'kysely';
import { uniqueKeyOf, UNIQUE_MEMBERS } from '../../lib/adapter';
import type { Entity } from '../../lib/contract/entities';
import { StorebridgeError } from '../../lib/errors';
import { loadKysely, SQL_DIALECTS, type SqlKind } from './sql-dialects';

/** Physical names of the adapter's tables for one prefix / schema. */
export interface SqlTableNames {
  readonly schema: string | undefined;
  readonly products: string;
  readonly orders: string;
  readonly counts: string;
  readonly migrations: string;
  readonly migrationLock: string;
  readonly idempotency: string;
}

export function tableNames(prefix: string, schema: string | undefined): SqlTableNames {
  return {
    schema,
    products: `${prefix}products`,
    orders: `${prefix}orders`,
    counts: `${prefix}counts`,
    migrations: `${prefix}migrations`,
    migrationLock: `${prefix}migrations_lock`,
    idempotency: `${prefix}idempotency`,
  };
}

/**
 * Existing data that breaks a unique `sku` / `orderid` rule: the migration that adds the unique
 * index refuses to run (changing nothing) and says which values, how many items, and what to do.
 */
export class SqlDuplicateKeysError extends StorebridgeError {
  override readonly name = 'SqlDuplicateKeysError';
  readonly code = 'SQL_DUPLICATE_KEYS';
  constructor(
    readonly table: string,
    readonly column: string,
    /** Every value held by more than one item, with how many hold it (most first). */
    readonly duplicates: ReadonlyArray<{ readonly value: string; readonly count: number }>,
    /** The statement that keeps every document and leaves the value only on its newest item. */
    readonly fix: string,
  ) {
    const shown = duplicates.slice(0, 10).map((d) => `${JSON.stringify(d.value.length > 40 ? `${d.value.slice(0, 40)}…` : d.value)} (${d.count} items)`);
    const more = duplicates.length > 10 ? ` and ${duplicates.length - 10} more` : '';
    super(
      `cannot make ${column} unique in ${table}: ${duplicates.length} value${duplicates.length === 1 ? ' is' : 's are'} held by more than one item: ` +
        `${shown.join(', ')}${more}. Nothing was changed. Give each item its own ${column} (a write with the item's id), or keep the ` +
        `documents as they are (a replica of another store) and leave the ${column} only on the newest item of each: ${fix} ` +
        'Then open the store again (docs/sql-adapter.md "Unique sku and orderid").',
    );
  }
}

/** The column each entity's unique member lives in, and its table. */
function uniqueColumn(entity: Entity, names: SqlTableNames): { table: string; column: string } {
  return { table: entity === 'products' ? names.products : names.orders, column: UNIQUE_MEMBERS[entity] };
}

/** The idempotency table's key columns: SHA-256 hex digests, 64 ASCII characters. */

/** Text of a key column value (mysql2 returns VARBINARY as a Buffer). */
const textOf = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

/** Every migration, by name (exported for tests that build an older schema). */
export function sqlMigrations(kind: SqlKind, names: SqlTableNames): Record<string, Migration> {
  const { sql } = loadKysely();
  const dialect = SQL_DIALECTS[kind];
  const t = dialect.columns;
  const table = (name: string) => (names.schema ? sql.id(names.schema, name) : sql.id(name));
  const raw = (text: string) => sql.raw(text);
  const index = (name: string) => (names.schema && dialect.schemas ? sql.id(names.schema, name) : sql.id(name));

  /**
   * Makes an entity's key column unique: refuses with `SqlDuplicateKeysError` while two items hold
   * one non-blank value; clears blank values held twice (blanks are never keys: `uniqueKeyOf`).
   */
  async function makeUnique(db: Kysely<any>, entity: Entity, oldIndex: string | undefined): Promise<void> {
    const { table: name, column } = uniqueColumn(entity, names);
    const groups = await sql<{ k: unknown; n: unknown }>`select ${sql.id(column)} as k, count(*) as n from ${table(name)}
        where ${sql.id(column)} is not null group by ${sql.id(column)} having count(*) > 1`.execute(db);
    const held = groups.rows.map((r) => ({ value: textOf(r.k), count: Number(r.n) }));
    const isKey = (d: { value: string }) => uniqueKeyOf(entity, { [column]: d.value }) !== undefined;
    const duplicates = held.filter(isKey).sort((a, b) => b.count - a.count);
    if (duplicates.length > 0) throw new SqlDuplicateKeysError(name, column, duplicates, keepNewestStatement(kind, names.schema ? `${names.schema}.${name}` : name, column));
    for (const blank of held.filter((d) => !isKey(d))) await sql`update ${table(name)} set ${sql.id(column)} = null where ${sql.id(column)} = ${blank.value}`.execute(db);
    if (oldIndex) await dialect.dropIndex(index(oldIndex), table(name)).execute(db);
    await sql`create unique index ${sql.id(`${name}_${column}`)} on ${table(name)} (${sql.id(column)})`.execute(db);
  }

  return {
    '0001-items-and-counts': {
      async up(db: Kysely<any>) {
        for (const [name, hasSku] of [
          [names.products, true],
          [names.orders, false],
        ] as const) {
          await sql`create table ${table(name)} (
              ${sql.id('_id')} ${raw(t.id)} not null primary key,
              ${sql.id('last_updated')} ${raw(t.timestamp)} not null,
              ${hasSku ? sql`${sql.id('sku')} ${raw(t.sku)} null,` : sql``}
              ${sql.id('doc')} ${raw(t.doc)} not null
            )${raw(t.tableSuffix)}`.execute(db);
          // Index names are per schema in PostgreSQL: derive them from the (prefixed) table name.
          await sql`create index ${sql.id(`${name}_key`)} on ${table(name)} (${sql.id('last_updated')}, ${sql.id('_id')})`.execute(db);
          if (hasSku) await sql`create index ${sql.id(`${name}_sku`)} on ${table(name)} (${sql.id('sku')})`.execute(db);
        }
        await sql`create table ${table(names.counts)} (
            ${sql.id('entity')} ${raw(t.entity)} not null primary key,
            ${sql.id('n')} ${raw(t.timestamp)} not null
          )${raw(t.tableSuffix)}`.execute(db);
        await sql`insert into ${table(names.counts)} (${sql.id('entity')}, ${sql.id('n')}) values ('products', 0), ('orders', 0)`.execute(db);
      },
      async down(db: Kysely<any>) {
        for (const name of [names.counts, names.orders, names.products]) await sql`drop table ${table(name)}`.execute(db);
      },
    },
    // Issue 20 B: the SKU check read before it wrote, so concurrent creates on PostgreSQL and
    // MariaDB stored one SKU many times. The index makes the database refuse the second one.
    '0002-unique-product-sku': {
      up: (db: Kysely<any>) => makeUnique(db, 'products', `${names.products}_sku`),
    },
    // Issue 19: an order create is idempotent by its orderid, which needs a column to find it by.
    '0003-order-orderid-column': {
      async up(db: Kysely<any>) {
        await sql`alter table ${table(names.orders)} add ${sql.id('orderid')} ${raw(t.sku)} null`.execute(db);
        await sql`update ${table(names.orders)} set ${sql.id('orderid')} = ${dialect.docText('orderid')} where ${dialect.docHasKeyText('orderid')}`.execute(db);
      },
    },
    '0004-unique-order-orderid': {
      up: (db: Kysely<any>) => makeUnique(db, 'orders', undefined),
    },
    '0005-idempotency-keys': {
      async up(db: Kysely<any>) {
        await sql`create table ${table(names.idempotency)} (
            ${sql.id('key')} ${raw(t.digest)} not null primary key,
            ${sql.id('fingerprint')} ${raw(t.digest)} not null,
            ${sql.id('expires_at')} ${raw(t.timestamp)} not null,
            ${sql.id('outcome')} ${raw(t.doc)} null
          )${raw(t.tableSuffix)}`.execute(db);
        await sql`create index ${sql.id(`${names.idempotency}_expiry`)} on ${table(names.idempotency)} (${sql.id('expires_at')})`.execute(db);
      },
    },
  };
}

/** The statement `SqlDuplicateKeysError` suggests: the value stays on the newest item of each group (the sort key decides). */
function keepNewestStatement(kind: SqlKind, table: string, column: string): string {
  const { quote, keepNewest } = SQL_DIALECTS[kind];
  const c = quote(column);
  const newer = (n: string, o: string) => `${n}.${c} = ${o}.${c} and (${n}.last_updated > ${o}.last_updated or (${n}.last_updated = ${o}.last_updated and ${n}._id > ${o}._id))`;
  return keepNewest(table, column, newer);
}

/**
 * Brings the schema up to date (idempotent). Throws the first migration error
 * (`SqlDuplicateKeysError` when existing data breaks a unique index); the migrations before the
 * refused one stay done, so the fix its message gives can run.
 */
export async function migrateSqlSchema(db: Kysely<any>, kind: SqlKind, names: SqlTableNames): Promise<MigrationResultSet> {
  const { sql } = loadKysely();
  if (names.schema && SQL_DIALECTS[kind].schemas) await sql`create schema if not exists ${sql.id(names.schema)}`.execute(db);
  const all = sqlMigrations(kind, names);
  const props = {
    provider: { getMigrations: async () => all },
    migrationTableName: names.migrations,
    migrationLockTableName: names.migrationLock,
    ...(names.schema ? { migrationTableSchema: names.schema } : {}),
  };
  if (await upToDate(db, names, Object.keys(all))) return { results: [] };
  const done = await migrationRun(db, kind, props, 'latest');
  if (!done.error) return done;
  // Where one transaction held every pending migration, the refusal rolled them all back: run them
  // one at a time up to the refused one, which then fails alone.
  if (!(done.error instanceof SqlDuplicateKeysError) || !SQL_DIALECTS[kind].transactionalDdl) throw done.error;
  for (;;) {
    const step = await migrationRun(db, kind, props, 'up');
    if (step.error) throw step.error;
    if (!step.results?.length) return step;
  }
}

/**
 * Whether every migration is recorded already: one primary-key scan of the migrations table, so a
 * store that opens an up-to-date database never runs Kysely's migrator, whose introspection reads
 * the catalog of every table in the database (and on PostgreSQL fails when another program drops
 * a table at that moment).
 */
async function upToDate(db: Kysely<any>, names: SqlTableNames, expected: readonly string[]): Promise<boolean> {
  const { sql } = loadKysely();
  const table = names.schema ? sql.id(names.schema, names.migrations) : sql.id(names.migrations);
  try {
    const { rows } = await sql<{ name: string }>`select ${sql.id('name')} from ${table}`.execute(db);
    const done = new Set(rows.map((r) => r.name));
    return expected.every((name) => done.has(name));
  } catch {
    return false; // no migrations table yet
  }
}

/**
 * Runs the pending migrations (`latest`) or the next one (`up`). PostgreSQL runs them in one
 * transaction. Kysely runs SQLite migrations outside a transaction and its lock there is per
 * connection, so processes opening one new file at once would interleave them; here the run holds
 * the database write lock (`BEGIN IMMEDIATE`) throughout: the others wait (busy_timeout), then find
 * it done, and a failed run leaves nothing behind. MySQL has no transactional DDL: each migration
 * is recorded when it ends.
 */
async function migrationRun(db: Kysely<any>, kind: SqlKind, props: Omit<MigratorProps, 'db'>, how: 'latest' | 'up'): Promise<MigrationResultSet> {
  const { Migrator, sql } = loadKysely();
  const run = (on: Kysely<any>) => {
    const migrator = new Migrator({ ...props, db: withOwnCatalog(on, kind, props) });
    return how === 'latest' ? migrator.migrateToLatest() : migrator.migrateUp();
  };
  if (!SQL_DIALECTS[kind].migrationsLockDatabase) return run(db);
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    let result: MigrationResultSet;
    try {
      result = await run(conn);
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
    await sql.raw(result.error ? 'rollback' : 'commit').execute(conn);
    return result;
  });
}

/**
 * `db` as Kysely's `Migrator` sees it: its catalog questions ("does the migrations table exist?",
 * "does the schema?") answered by one keyed read of the two tables it asks about
 * (`SqlDialect.tablesNamed`). Kysely's own introspection reads the metadata of every table in the
 * database, columns included, several times a run: a database shared by many stores (a reverse
 * service with a table prefix per connection) made each store's first open O(tables), and opening
 * N stores O(N²) (259 s for 1,000 connections). Everything else goes to `db` itself (bound to it:
 * Kysely keeps its state in private fields a proxy cannot reach).
 */
function withOwnCatalog(db: Kysely<any>, kind: SqlKind, props: Omit<MigratorProps, 'db'>): Kysely<any> {
  const { sql } = loadKysely();
  const schema = props.migrationTableSchema;
  const tables = [props.migrationTableName, props.migrationLockTableName].filter((t): t is string => t !== undefined);
  const introspection: DatabaseIntrospector = {
    async getSchemas() {
      if (schema === undefined) return [];
      const { rows } = await sql<{ name: string }>`select schema_name as name from information_schema.schemata where schema_name = ${schema}`.execute(db);
      return rows.map((r) => ({ name: r.name }));
    },
    async getTables() {
      const { rows } = await SQL_DIALECTS[kind].tablesNamed(tables, schema).execute(db);
      return rows.map((r): TableMetadata => ({ name: r.name, schema, isView: false, columns: [] }));
    },
    async getMetadata() {
      return { tables: await this.getTables() };
    },
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Drops every table of this prefix / schema (tests and `storebridge` uninstall). */
export async function dropSqlSchema(db: Kysely<any>, names: SqlTableNames): Promise<void> {
  const { sql } = loadKysely();
  for (const name of [names.products, names.orders, names.counts, names.idempotency, names.migrations, names.migrationLock]) {
    await sql`drop table if exists ${names.schema ? sql.id(names.schema, name) : sql.id(name)}`.execute(db);
  }
}
