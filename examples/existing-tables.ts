/**
 * Serving a catalog that already lives in your own tables: a custom `EntityStore` over a shop's
 * existing `shop_items` table (built on `BaseEntityStore`), while orders go to the SQL adapter's
 * own tables in the same database. (For tables a mapping file can describe, the mapped adapter
 * does this without code: `storebridge map infer`, then `storebridge serve --map`; docs/mapping.md.
 * This example is for what a mapping cannot say, such as prices stored in cents.)
 *
 * The shop's table is not changed except for an index on `(updated_at, code)` (keyset paging
 * needs it) and a tiny count table kept by triggers (so `itemsTotal` is not a `count(*)` per
 * request). Rows map to webhook-form products; writes from the sync service map back onto the
 * columns the table has.
 *
 * Run from the repository root (prints one page of products as the sync service would get it):
 *   npx tsc -p examples --outDir /tmp/sb-examples
 *   NODE_PATH=$PWD/node_modules node /tmp/sb-examples/examples/existing-tables.js
 */
import type { AddressInfo } from 'node:net';
import { sql, type Kysely } from 'kysely';
import express from 'express';
import { BaseEntityStore, BaseStoreAdapter, type ListOptions, type SignalOptions } from '../lib/adapter';
import type { Order, Product } from '../lib/contract/webhook';
import { createSqlAdapter, type SqlAdapter } from '../adapters/sql';
import { createStoreRouter } from '../lib/server';

/** The shop's own table, as it was before storebridge. */
interface ShopItemRow {
  code: string;
  name: string;
  price_cents: number;
  currency: string;
  stock: number;
  updated_at: number;
}

function toProduct(row: ShopItemRow): Product {
  return {
    _id: row.code,
    sku: row.code,
    last_updated: Number(row.updated_at),
    title: row.name,
    variations: [
      {
        availabilities: [{ tag: 'default', quantity: Number(row.stock) }],
        prices: [{ tag: 'default', currency: row.currency, number: Number(row.price_cents) / 100 }],
      },
    ],
  };
}

function toRow(p: Product): ShopItemRow {
  const v = p.variations?.[0];
  const price = v?.prices?.[0];
  return {
    code: p._id,
    name: p.title ?? '',
    price_cents: Math.round((price?.number ?? 0) * 100),
    currency: price?.currency ?? 'USD',
    stock: v?.availabilities?.[0]?.quantity ?? 0,
    updated_at: p.last_updated ?? 0,
  };
}

/** Products from `shop_items`: `_id` = `code`, sort key `(updated_at, code)`. */
export class ShopItemsStore extends BaseEntityStore<Product> {
  constructor(private readonly db: Kysely<any>) {
    super();
  }

  async list({ sortorder, limit, offset = 0, after, signal }: ListOptions): Promise<Product[]> {
    signal.throwIfAborted();
    let q = this.db.selectFrom('shop_items').selectAll();
    if (after) {
      const op = sql.raw(sortorder === 'asc' ? '>' : '<');
      q = q.where(sql<boolean>`(updated_at, code) ${op} (${after.last_updated}, ${after._id})`);
    }
    q = q.orderBy('updated_at', sortorder).orderBy('code', sortorder).limit(limit);
    if (!after && offset) q = q.offset(offset);
    return ((await q.execute()) as ShopItemRow[]).map(toProduct);
  }

  async count({ signal }: SignalOptions): Promise<number> {
    signal.throwIfAborted();
    const row = await this.db.selectFrom('shop_items_count').select('n').executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async get(id: string, { signal }: SignalOptions): Promise<Product | undefined> {
    signal.throwIfAborted();
    const row = (await this.db.selectFrom('shop_items').selectAll().where('code', '=', id).executeTakeFirst()) as ShopItemRow | undefined;
    return row && toProduct(row);
  }

  protected async put(item: Product, { signal }: SignalOptions): Promise<void> {
    signal.throwIfAborted();
    const row = toRow(item);
    await this.db
      .insertInto('shop_items')
      .values(row)
      .onConflict((oc) => oc.column('code').doUpdateSet({ name: row.name, price_cents: row.price_cents, currency: row.currency, stock: row.stock, updated_at: row.updated_at }))
      .execute();
  }

  async bySku(sku: string, options: SignalOptions): Promise<Product | undefined> {
    return this.get(sku, options);
  }
}

export class ShopAdapter extends BaseStoreAdapter {
  readonly products: ShopItemsStore;
  readonly orders: SqlAdapter['orders'];
  constructor(
    /** The shop's database (shared with the SQL adapter that holds the orders). */
    readonly db: Kysely<any>,
    private readonly own: SqlAdapter,
  ) {
    super();
    this.products = new ShopItemsStore(db);
    this.orders = own.orders;
  }
  override productBySku(sku: string, options: SignalOptions): Promise<Product | undefined> {
    return this.products.bySku(sku, options);
  }
  override async close(): Promise<void> {
    await this.own.close();
  }
}

/** What the shop's database looked like before; then the index and count the adapter needs. */
export async function prepareShopDatabase(db: Kysely<any>): Promise<void> {
  await sql`create table if not exists shop_items (
    code text primary key, name text not null, price_cents integer not null,
    currency text not null, stock integer not null, updated_at integer not null)`.execute(db);
  // Added for storebridge: the keyset index and a trigger-maintained row count.
  await sql`create index if not exists shop_items_key on shop_items (updated_at, code)`.execute(db);
  await sql`create table if not exists shop_items_count (n integer not null)`.execute(db);
  await sql`insert into shop_items_count (n) select count(*) from shop_items where not exists (select 1 from shop_items_count)`.execute(db);
  await sql`create trigger if not exists shop_items_ins after insert on shop_items begin update shop_items_count set n = n + 1; end`.execute(db);
  await sql`create trigger if not exists shop_items_del after delete on shop_items begin update shop_items_count set n = n - 1; end`.execute(db);
}

/** Opens the shop adapter on a SQLite database: products from `shop_items`, orders in `storebridge_orders`. */
export async function openShopAdapter(file: string): Promise<ShopAdapter> {
  const own = await createSqlAdapter({ connection: `sqlite:${file}` });
  await prepareShopDatabase(own.db);
  return new ShopAdapter(own.db, own);
}

async function main(): Promise<void> {
  const adapter = await openShopAdapter(':memory:');
  await sql`insert into shop_items values ('MUG-1', 'Mug', 1299, 'USD', 12, 1700000000000), ('TEE-2', 'T-shirt', 1999, 'EUR', 3, 1700000005000)`.execute(adapter.db);
  const app = express();
  app.use('/sync', createStoreRouter({ adapter, svcKeys: ['example-key'] }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((ok) => server.once('listening', ok));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sync`;
  const page = await fetch(`${base}/products?jobid=1&sortorder=asc`, { headers: { SvcKey: 'example-key' } });
  console.log(await page.text());
  server.close();
  await adapter.close();
}

if (require.main === module) void main();
