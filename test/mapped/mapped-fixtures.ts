/**
 * Tables and mappings for the mapped adapter's tests: a shop schema with writes mapped (products
 * with a variations child table, orders with a money object), created under a random prefix on the
 * shared servers (or in a private SQLite database), and dropped afterwards.
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { createMappedAdapter, type MappedAdapter } from '../../adapters/mapped';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import { uniquePrefix } from '../adapters/sql-databases';

/** Column types per dialect: byte-ordered ids and SKUs (as the SQL adapter declares its own), UTF-8 text, exact money. */
const TYPES: Record<SqlKind, { id: string; text: string; big: string; money: string; suffix: string }> = {
  sqlite: { id: 'text', text: 'text', big: 'integer', money: 'real', suffix: '' },
  postgres: { id: 'text collate "C"', text: 'text', big: 'bigint', money: 'numeric(14, 2)', suffix: '' },
  mysql: { id: 'varbinary(1024)', text: 'longtext character set utf8mb4 collate utf8mb4_bin', big: 'bigint', money: 'decimal(14, 2)', suffix: ' engine=InnoDB' },
};

export interface ShopTables {
  readonly products: string;
  readonly variations: string;
  readonly orders: string;
}

export function shopTables(prefix: string): ShopTables {
  return { products: `${prefix}products`, variations: `${prefix}variations`, orders: `${prefix}orders` };
}

/** Creates the shop's tables (with the paging indexes) under `prefix`. */
export async function createShopTables(db: Kysely<any>, kind: SqlKind, tables: ShopTables): Promise<void> {
  const t = TYPES[kind];
  const raw = (s: string) => sql.raw(s);
  await sql`create table ${sql.table(tables.products)} (id ${raw(t.id)} primary key, sku ${raw(t.id)}, title ${raw(t.text)}, description ${raw(t.text)}, updated_at ${raw(t.big)} not null)${raw(t.suffix)}`.execute(db);
  await sql`create index ${sql.id(`${tables.products}_page`)} on ${sql.table(tables.products)} (updated_at, id)`.execute(db);
  await sql`create index ${sql.id(`${tables.products}_sku`)} on ${sql.table(tables.products)} (sku)`.execute(db);
  await sql`create table ${sql.table(tables.variations)} (product_id ${raw(t.id)} not null, position integer not null, variationid ${raw(t.text)}, size ${raw(t.text)}, quantity integer, currency ${raw(t.text)}, price ${raw(t.money)}, primary key (product_id, position))${raw(t.suffix)}`.execute(db);
  await sql`create table ${sql.table(tables.orders)} (id ${raw(t.id)} primary key, status ${raw(t.text)}, total_amount ${raw(t.money)}, total_currency ${raw(t.text)}, feedback ${raw(t.text)}, updated_at ${raw(t.big)} not null)${raw(t.suffix)}`.execute(db);
  await sql`create index ${sql.id(`${tables.orders}_page`)} on ${sql.table(tables.orders)} (updated_at, id)`.execute(db);
}

export async function dropShopTables(db: Kysely<any>, tables: ShopTables): Promise<void> {
  for (const t of [tables.variations, tables.products, tables.orders]) await sql`drop table if exists ${sql.table(t)}`.execute(db);
}

/** The mapping of the shop's tables, with every write mapped. */
export function shopMapping(tables: ShopTables): Record<string, unknown> {
  const def = { const: 'default' };
  return {
    version: 1,
    products: {
      table: tables.products,
      id: 'id',
      lastUpdated: { column: 'updated_at', type: 'epoch-ms' },
      fields: {
        sku: 'sku',
        title: 'title',
        description: 'description',
        variations: {
          table: tables.variations,
          key: 'product_id',
          orderBy: 'position',
          fields: {
            variationid: 'variationid',
            size: 'size',
            availabilities: { fromRow: { tag: def, quantity: 'quantity' } },
            prices: { fromRow: { tag: def, currency: 'currency', number: 'price' } },
          },
          writes: { update: ['variationid', 'size', 'quantity', 'currency', 'price'], create: ['position', 'variationid', 'size', 'quantity', 'currency', 'price'], delete: true },
        },
      },
      writes: { update: ['sku', 'title', 'description'], create: ['sku', 'title', 'description'] },
    },
    orders: {
      table: tables.orders,
      id: 'id',
      lastUpdated: { column: 'updated_at', type: 'epoch-ms' },
      fields: { status: 'status', total: { amount: 'total_amount', currency: 'total_currency' }, feedback: 'feedback' },
      writes: { update: ['status', 'total_amount', 'total_currency', 'feedback'], create: ['status', 'total_amount', 'total_currency', 'feedback'] },
    },
  };
}

/** A mapped adapter on fresh shop tables; its `teardown` drops them. */
export interface ShopAdapter {
  readonly adapter: MappedAdapter;
  readonly tables: ShopTables;
}

const tablesOf = new WeakMap<MappedAdapter, ShopTables>();

/** On a shared server's pool: fresh tables under a random prefix. */
export async function shopAdapter(db: Kysely<any>, kind: SqlKind): Promise<MappedAdapter> {
  const tables = shopTables(uniquePrefix());
  await createShopTables(db, kind, tables);
  const adapter = await createMappedAdapter({ db, kind, map: shopMapping(tables) });
  tablesOf.set(adapter, tables);
  return adapter;
}

export async function dropShopAdapter(adapter: MappedAdapter): Promise<void> {
  const tables = tablesOf.get(adapter);
  if (tables) await dropShopTables(adapter.db, tables);
  await adapter.close();
}

/** In a private in-memory SQLite database (closed with the adapter). */
export async function sqliteShopAdapter(): Promise<MappedAdapter> {
  const { db } = connectKysely('sqlite::memory:');
  const tables = shopTables('shop_');
  await createShopTables(db, 'sqlite', tables);
  return createMappedAdapter({ db, kind: 'sqlite', map: shopMapping(tables), destroyOnClose: true });
}
