/**
 * The SQL adapter's schema, as Kysely migrations (run by Kysely's `Migrator`, which records what
 * ran in `<prefix>migrations` and holds a lock while it runs, so a re-run is a no-op and two
 * processes starting at once do not both migrate).
 *
 * Tables (`<prefix>` is the `tablePrefix` option, default `storebridge_`):
 * - `<prefix>products (_id PK, last_updated, sku, doc)`, index `(last_updated, _id)` and `(sku)`
 * - `<prefix>orders (_id PK, last_updated, doc)`, index `(last_updated, _id)`
 * - `<prefix>counts (entity PK, n)`: the exact number of rows per entity, maintained in the same
 *   transaction as every insert, so `itemsTotal` is a primary-key read instead of `count(*)`.
 *
 * `doc` is the item's webhook-form JSON text exactly as served (never re-serialized on reads).
 */
import type { Kysely, Migration, MigrationResultSet } from 'kysely';
import { COLUMN_TYPES, loadKysely, type SqlKind } from './sql-dialects';

/** Physical names of the adapter's tables for one prefix / schema. */
export interface SqlTableNames {
  readonly schema: string | undefined;
  readonly products: string;
  readonly orders: string;
  readonly counts: string;
  readonly migrations: string;
  readonly migrationLock: string;
}

export function tableNames(prefix: string, schema: string | undefined): SqlTableNames {
  return {
    schema,
    products: `${prefix}products`,
    orders: `${prefix}orders`,
    counts: `${prefix}counts`,
    migrations: `${prefix}migrations`,
    migrationLock: `${prefix}migrations_lock`,
  };
}

function migrations(kind: SqlKind, names: SqlTableNames): Record<string, Migration> {
  const { sql } = loadKysely();
  const t = COLUMN_TYPES[kind];
  const table = (name: string) => (names.schema ? sql.id(names.schema, name) : sql.id(name));
  const raw = (text: string) => sql.raw(text);
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
  };
}

/** Brings the schema up to date (idempotent). Throws the first migration error. */
export async function migrateSqlSchema(db: Kysely<any>, kind: SqlKind, names: SqlTableNames): Promise<MigrationResultSet> {
  const { Migrator, sql } = loadKysely();
  if (names.schema && kind === 'postgres') await sql`create schema if not exists ${sql.id(names.schema)}`.execute(db);
  const all = migrations(kind, names);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => all },
    migrationTableName: names.migrations,
    migrationLockTableName: names.migrationLock,
    ...(names.schema ? { migrationTableSchema: names.schema } : {}),
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

/** Drops every table of this prefix / schema (tests and `storebridge` uninstall). */
export async function dropSqlSchema(db: Kysely<any>, names: SqlTableNames): Promise<void> {
  const { sql } = loadKysely();
  for (const name of [names.products, names.orders, names.counts, names.migrations, names.migrationLock]) {
    await sql`drop table if exists ${names.schema ? sql.id(names.schema, name) : sql.id(name)}`.execute(db);
  }
}
