/**
 * Tables and mappings for the mapped adapter's tests: a shop schema with writes mapped (products
 * with a variations child table and members inside a JSON column, orders with a money object and an
 * order number), created under a random prefix on the shared servers (or in a private SQLite
 * database), and dropped afterwards. The `sku` and `orderid` columns have ordinary indexes, not
 * unique ones (as many shops' tables): the adapter keeps them unique by itself.
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
  await sql`create table ${sql.table(tables.products)} (id ${raw(t.id)} primary key, sku ${raw(t.id)}, title ${raw(t.text)}, description ${raw(t.text)}, brand ${raw(t.text)}, url ${raw(t.text)}, attrs ${raw(t.text)}, updated_at ${raw(t.big)} not null)${raw(t.suffix)}`.execute(db);
  await sql`create index ${sql.id(`${tables.products}_page`)} on ${sql.table(tables.products)} (updated_at, id)`.execute(db);
  await sql`create index ${sql.id(`${tables.products}_sku`)} on ${sql.table(tables.products)} (sku)`.execute(db);
  await sql`create table ${sql.table(tables.variations)} (product_id ${raw(t.id)} not null, position integer not null, variationid ${raw(t.text)}, size ${raw(t.text)}, quantity integer, currency ${raw(t.text)}, price ${raw(t.money)}, primary key (product_id, position))${raw(t.suffix)}`.execute(db);
  await sql`create table ${sql.table(tables.orders)} (id ${raw(t.id)} primary key, orderid ${raw(t.id)}, status ${raw(t.text)}, total_amount ${raw(t.money)}, total_currency ${raw(t.text)}, feedback ${raw(t.text)}, updated_at ${raw(t.big)} not null)${raw(t.suffix)}`.execute(db);
  await sql`create index ${sql.id(`${tables.orders}_page`)} on ${sql.table(tables.orders)} (updated_at, id)`.execute(db);
  await sql`create index ${sql.id(`${tables.orders}_orderid`)} on ${sql.table(tables.orders)} (orderid)`.execute(db);
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
        brand: 'brand',
        url: 'url',
        mpn: { column: 'attrs', path: 'mpn' },
        model: { column: 'attrs', path: 'model' },
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
      writes: { update: ['sku', 'title', 'description', 'brand', 'url', 'attrs'], create: ['sku', 'title', 'description', 'brand', 'url', 'attrs'] },
    },
    orders: {
      table: tables.orders,
      id: 'id',
      lastUpdated: { column: 'updated_at', type: 'epoch-ms' },
      fields: { orderid: 'orderid', status: 'status', total: { amount: 'total_amount', currency: 'total_currency' }, feedback: 'feedback' },
      writes: { update: ['orderid', 'status', 'total_amount', 'total_currency', 'feedback'], create: ['orderid', 'status', 'total_amount', 'total_currency', 'feedback'] },
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

/**
 * A shop's plain tables as they often are: integer ids, `sku`, `name`, `price`, `stock`, an order
 * number (no unique index on either) and an update time the shop's own code writes (ISO text on SQLite; a microsecond `timestamp` on
 * PostgreSQL, a `datetime` on MariaDB; the orders' in another precision), many rows sharing one.
 */
export async function createPlainShop(db: Kysely<any>, kind: SqlKind, tables: { products: string; orders: string }, counts = { products: 60, orders: 15 }): Promise<void> {
  const p = sql.table(tables.products);
  const o = sql.table(tables.orders);
  if (kind === 'sqlite') {
    await sql`create table ${p} (id integer primary key, sku text not null, name text not null, price real, stock integer, updated_at text not null)`.execute(db);
    await sql`create table ${o} (id integer primary key, order_number text, status text, total real, currency text, email text, created_at text, updated_at text not null)`.execute(db);
  } else if (kind === 'postgres') {
    await sql`create table ${p} (id serial primary key, sku varchar(64) not null, name text not null, price numeric(10, 2), stock integer, updated_at timestamp not null)`.execute(db);
    await sql`create table ${o} (id serial primary key, order_number varchar(32), status varchar(20), total numeric(10, 2), currency char(3), email text, created_at timestamptz, updated_at timestamptz(3) not null)`.execute(db);
  } else {
    await sql`create table ${p} (id int auto_increment primary key, sku varchar(64) not null, name varchar(200) not null, price decimal(10, 2), stock int, updated_at datetime not null) engine=InnoDB default charset=utf8mb4`.execute(db);
    await sql`create table ${o} (id int auto_increment primary key, order_number varchar(32), status varchar(20), total decimal(10, 2), currency char(3), email varchar(200), created_at datetime, updated_at timestamp(3) not null) engine=InnoDB default charset=utf8mb4`.execute(db);
  }
  // Four rows per second of product time (ties broken by id), one order per 1.5 s.
  const time = (ms: number) => (kind === 'sqlite' ? new Date(ms).toISOString() : new Date(ms).toISOString().replace('T', ' ').replace('Z', kind === 'postgres' ? '+00' : ''));
  const base = Date.UTC(2024, 0, 15, 9, 0, 0);
  const products = Array.from({ length: counts.products }, (_, i) => ({ sku: `SKU-${i}`, name: `Product ${i}`, price: (i * 1.25 + 0.99).toFixed(2), stock: i % 7, updated_at: time(base + Math.floor(i / 4) * 1000) }));
  for (let i = 0; i < products.length; i += 200) await db.insertInto(tables.products).values(products.slice(i, i + 200)).execute();
  const orders = Array.from({ length: counts.orders }, (_, i) => ({ order_number: `ORD-${1000 + i}`, status: 'paid', total: (i * 3.5 + 1).toFixed(2), currency: 'EUR', email: `buyer${i}@example.test`, created_at: time(base + i * 1500), updated_at: time(base + i * 1500 + 250) }));
  for (let i = 0; i < orders.length; i += 200) await db.insertInto(tables.orders).values(orders.slice(i, i + 200)).execute();
}
