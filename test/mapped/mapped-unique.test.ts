/**
 * SKUs and order numbers in a shop's own tables (docs/mapping.md "SKUs and order numbers"):
 * - 200 concurrent creates of distinct items with one `sku` / `orderid`, half through each of two
 *   connection pools (as two server processes): exactly one stored, the others `DuplicateKeyError`;
 *   with no unique index on the column (the adapter's key locks) and with the index it advises;
 * - the start-up advice names the statement, which runs, and is then gone; values several rows
 *   already share are named;
 * - under a unique index, what the index would refuse (a `keep` write of a held value; on MariaDB a
 *   blank value, or one differing only in case in a case-insensitive collation) is a
 *   `DuplicateKeyError`, never a retried violation;
 * - look-ups answer the lowest id of the rows sharing a key; an integer order-number column looked
 *   up with text finds nothing and fails nothing;
 * - partial writes over HTTP: omitted members keep their columns, null clears a nullable column,
 *   JSON members merge, a NOT NULL column refuses removal with a 400 reason.
 */
import { sql, type Kysely } from 'kysely';
import { createMappedAdapter, type MappedAdapter } from '../../adapters/mapped';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import type { WriteOptions } from '../../lib/adapter';
import type { Entity } from '../../lib/contract/entities';
import { DuplicateKeyError } from '../../lib/errors';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from '../adapters/sql-databases';
import { post, startStore } from '../server/helpers';
import { createShopTables, dropShopTables, shopMapping, shopTables, type ShopTables } from './mapped-fixtures';

const live = () => AbortSignal.timeout(60_000);
const touch = (now: number): WriteOptions => ({ lastUpdated: 'touch', now, signal: live() });
const keep = (): WriteOptions => ({ lastUpdated: 'keep', now: 0, signal: live() });
const KEY = { products: 'sku', orders: 'orderid' } as const;

function item(entity: Entity, _id: string, key: string, extra: Record<string, unknown> = {}) {
  return entity === 'products' ? { _id, sku: key, title: `t ${_id}`, ...extra } : { _id, orderid: key, status: 'paid', ...extra };
}

/** The statement of a start-up warning's advice (`…; run: STATEMENT`). */
function advice(warnings: readonly string[], column: string): string | undefined {
  const line = warnings.find((w) => w.includes(`no unique index on ${column},`));
  return line?.slice(line.indexOf('; run: ') + '; run: '.length);
}

async function rowsWith(db: Kysely<any>, table: string, column: string, value: string): Promise<number> {
  const { rows } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} = ${value}`.execute(db);
  return Number(rows[0].n);
}

function suite(kind: SqlKind, open: () => Kysely<any>, second: () => Kysely<any>): void {
  let tables: ShopTables;
  const adapter = (db = open(), map: Record<string, unknown> = shopMapping(tables)) => createMappedAdapter({ db, kind, map });

  beforeEach(async () => {
    tables = shopTables(uniquePrefix());
    await createShopTables(open(), kind, tables);
  });
  afterEach(async () => dropShopTables(open(), tables));

  async function race(a: MappedAdapter, b: MappedAdapter): Promise<void> {
    for (const entity of ['products', 'orders'] as const) {
      const n = 200;
      const outcomes = await Promise.allSettled(Array.from({ length: n }, (_, i) => (i % 2 ? a : b)[entity].upsert(item(entity, `race-${i}`, 'RACE') as never, touch(1000 + i))));
      const stored = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
      expect({ entity, stored: stored.length, otherwise: refused.filter((e) => !(e instanceof DuplicateKeyError)).map(String).slice(0, 3) }).toEqual({ entity, stored: 1, otherwise: [] });
      expect(refused.every((e: DuplicateKeyError) => e.value === 'RACE' && e.field === KEY[entity])).toBe(true);
      expect(await rowsWith(open(), tables[entity], KEY[entity], 'RACE')).toBe(1);
    }
  }

  test('200 concurrent creates of one key through two pools store one, without a unique index (key locks)', async () => {
    const a = await adapter();
    expect(advice(a.warnings, 'sku')).toBeDefined();
    await race(a, await adapter(second()));
  }, 120_000);

  test('the advised unique index: the statement runs, the warning goes, and 200 concurrent creates still store one', async () => {
    const first = await adapter();
    for (const column of ['sku', 'orderid']) await sql.raw(advice(first.warnings, column)!).execute(open());
    const a = await adapter();
    expect(a.warnings.filter((w) => w.includes('unique'))).toEqual([]);
    await race(a, await adapter(second()));
    // PostgreSQL and SQLite: the index leaves blanks out, so they never collide; MariaDB's holds them.
    await a.products.upsert(item('products', 'b1', '') as never, touch(5000));
    const blank = a.products.upsert(item('products', 'b2', '') as never, touch(5001));
    if (kind === 'mysql') await expect(blank).rejects.toMatchObject({ code: 'DUPLICATE_KEY', value: '', holder: 'b1' });
    else await expect(blank).resolves.toMatchObject({ created: true });
    // The index refuses a held value whatever the write: a keep write too, refused cleanly.
    await expect(a.products.upsert({ ...item('products', 'k1', 'RACE'), last_updated: 7 } as never, keep())).rejects.toBeInstanceOf(DuplicateKeyError);
  }, 120_000);

  test('values rows already share are named at start-up; a look-up answers the lowest id; a row keeps its key', async () => {
    const a = await adapter();
    await a.products.upsert(item('products', 'p2', 'SHARED') as never, touch(10));
    await a.products.upsert({ ...item('products', 'p1', 'SHARED'), last_updated: 20 } as never, keep());
    await a.products.upsert({ ...item('products', 'p3', 'SHARED'), last_updated: 5 } as never, keep());
    expect((await a.productBySku('SHARED', { signal: live() }))?._id).toBe('p1');
    // p2 had the key before the keep writes: it keeps it; a row without it may not take it.
    await expect(a.products.upsert(item('products', 'p2', 'SHARED', { title: 'renamed' }) as never, touch(30))).resolves.toMatchObject({ changed: true });
    await expect(a.products.upsert(item('products', 'p4', 'SHARED') as never, touch(31))).rejects.toMatchObject({ code: 'DUPLICATE_KEY', holder: 'p1' });
    const again = await adapter();
    expect(again.warnings).toContainEqual(expect.stringMatching(new RegExp(`^${tables.products}: some values of sku are on more than one row, e\\.g\\. "SHARED" \\(3 rows\\): the unique index cannot be created until they differ`)));
  });

  test('orderByOrderId reads the mapped orderid column, exactly', async () => {
    const a = await adapter();
    await a.orders.upsert(item('orders', 'o1', 'MKT-1') as never, touch(10));
    expect((await a.orderByOrderId('MKT-1', { signal: live() }))?._id).toBe('o1');
    for (const other of ['mkt-1', 'MKT-1 ', 'MKT', '', ' ']) expect(await a.orderByOrderId(other, { signal: live() })).toBeUndefined();
  });

  test('partial writes over HTTP: omitted members keep their columns, null clears one, JSON members merge, NOT NULL refuses removal', async () => {
    const a = await adapter();
    await a.products.upsert(item('products', 'm', 'M-1', { brand: 'B', url: 'https://x.test/m', mpn: 'MPN', model: 'MOD', variations: [{ size: 'L' }] }) as never, touch(10));
    const store = await startStore({ adapter: a });
    try {
      const r = await post(`${store.base}/products?id=m&jobid=1`, { title: 'New', url: null, model: 'MOD2' });
      expect(r.status).toBe(200);
      expect(r.body.product).toMatchObject({ _id: 'm', sku: 'M-1', title: 'New', brand: 'B', mpn: 'MPN', model: 'MOD2', variations: [{ size: 'L' }] });
      expect(r.body.product.url).toBeUndefined();
      const { rows } = await sql<Record<string, unknown>>`select url, attrs from ${sql.table(tables.products)} where id = 'm'`.execute(open());
      expect(rows[0].url).toBeNull();
      expect(JSON.parse(String(rows[0].attrs))).toEqual({ mpn: 'MPN', model: 'MOD2' });
    } finally {
      await store.close();
    }
    // A NOT NULL column (the orders' status here) cannot be cleared: a reason, nothing stored.
    await sql`create table ${sql.table(`${tables.orders}_strict`)} (id varchar(64) primary key, orderid varchar(64), status varchar(20) not null, updated_at bigint not null)`.execute(open());
    try {
      const map = { version: 1, orders: { table: `${tables.orders}_strict`, id: 'id', lastUpdated: { column: 'updated_at', type: 'epoch-ms' }, fields: { orderid: 'orderid', status: 'status' }, writes: { update: ['orderid', 'status'], create: ['orderid', 'status'] } } };
      const strict = await adapter(open(), map);
      await strict.orders.upsert(item('orders', 's1', 'S-1') as never, touch(10));
      const store2 = await startStore({ adapter: strict });
      try {
        const r = await post(`${store2.base}/orders?id=s1&jobid=2`, { status: null });
        expect(r.status).toBe(400);
        expect(r.body.reasons.map((x: { msg: string }) => x.msg)).toEqual(['status: cannot be removed: its column status is NOT NULL (send a value instead)']);
        expect((await strict.orders.get('s1', { signal: live() }))?.status).toBe('paid');
      } finally {
        await store2.close();
      }
    } finally {
      await sql`drop table if exists ${sql.table(`${tables.orders}_strict`)}`.execute(open());
    }
  });

  test('an order numbered by its id column: a create takes its orderid as the id, so a repeat, raced or not, is that order', async () => {
    const table = `${tables.orders}_numbered`;
    await sql`create table ${sql.table(table)} (order_no varchar(64) primary key, status varchar(20), updated_at bigint not null)`.execute(open());
    try {
      const map = { version: 1, orders: { table, id: 'order_no', lastUpdated: { column: 'updated_at', type: 'epoch-ms' }, fields: { orderid: 'order_no', status: 'status' }, writes: { update: ['status'], create: ['status'] } } };
      const store = await startStore({ adapter: await adapter(open(), map) });
      try {
        const first = await post(`${store.base}/orders?jobid=1`, { orderid: 'MKT-1', status: 'paid' });
        expect(first.body.order).toMatchObject({ _id: 'MKT-1', orderid: 'MKT-1', status: 'paid' });
        const raced = await Promise.all(Array.from({ length: 10 }, () => post(`${store.base}/orders?jobid=2`, { orderid: 'MKT-2', status: 'paid' })));
        expect(raced.map((r) => [r.status, r.body.order?._id])).toEqual(raced.map(() => [200, 'MKT-2']));
        const again = await post(`${store.base}/orders?jobid=3`, { orderid: 'MKT-1', status: 'paid' });
        expect(again.body.order).toEqual(first.body.order);
        // An order number that cannot be an id (not safe in a raw URL) is refused, not stored under another number.
        const slash = await post(`${store.base}/orders?jobid=4`, { orderid: 'MKT/3', status: 'paid' });
        expect(slash.status).toBe(400);
        expect(slash.body.reasons[0].msg).toMatch(/^orderid: "MKT\/3" cannot be stored apart from the _id "order-[0-9a-f-]+": the column order_no holds both here$/);
        const { rows } = await sql<{ order_no: unknown }>`select order_no from ${sql.table(table)} order by order_no`.execute(open());
        expect(rows.map((r) => String(r.order_no))).toEqual(['MKT-1', 'MKT-2']);
      } finally {
        await store.close();
      }
    } finally {
      await sql`drop table if exists ${sql.table(table)}`.execute(open());
    }
  });

  test('a key read from a JSON path and written warns that it is not kept unique', async () => {
    const map = shopMapping(tables) as { products: { fields: Record<string, unknown>; writes: Record<string, string[]> } };
    map.products.fields.sku = { column: 'attrs', path: 'sku' };
    for (const mode of ['update', 'create']) map.products.writes[mode] = map.products.writes[mode].filter((c) => c !== 'sku');
    const a = await adapter(open(), map as Record<string, unknown>);
    expect(a.warnings).toContainEqual(`${tables.products}: products.fields.sku is read from inside the JSON of attrs, where this adapter cannot keep each sku on one row; map sku to a column of its own to have creates with a sku another row has refused`);
  });
}

describe('mapped keys on SQLite', () => {
  let db: Kysely<any> | undefined;
  const open = () => (db ??= connectKysely('sqlite::memory:').db);
  // One process has one SQLite connection (a second one would block the event loop waiting for the
  // first's lock); two processes on one file are tested through the CLI (mapped-cli-e2e.test.ts).
  suite('sqlite', open, open);
  afterAll(async () => db?.destroy());
});

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `mapped keys on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}`, () => {
    const pools: Kysely<any>[] = [];
    const pool = (i: number) => () => (pools[i] ??= connectKysely(DATABASE_URLS[kind], { poolSize: 5 }).db);
    suite(kind, pool(0), pool(1));
    afterAll(async () => Promise.all(pools.map((p) => p.destroy())));
  });

  if (kind === 'mysql') {
    describeDatabase(kind, 'a case-insensitive unique index on MariaDB', () => {
      test('a value differing only in case is refused as the index compares, not retried into an error', async () => {
        const { db } = connectKysely(DATABASE_URLS.mysql, { poolSize: 2 });
        const table = `${uniquePrefix()}items`;
        try {
          await sql`create table ${sql.table(table)} (id int auto_increment primary key, sku varchar(64) collate utf8mb4_general_ci not null, updated_at bigint not null, unique key (sku)) engine=InnoDB`.execute(db);
          const map = { version: 1, products: { table, id: 'id', lastUpdated: { column: 'updated_at', type: 'epoch-ms' }, fields: { sku: 'sku' }, writes: { update: ['sku'], create: ['sku'] } } };
          const a = await createMappedAdapter({ db, kind: 'mysql', map });
          expect(a.warnings.filter((w) => w.includes('unique'))).toEqual([]);
          await a.products.upsert({ _id: '1', sku: 'abc' }, touch(10));
          await expect(a.products.upsert({ _id: '2', sku: 'ABC' }, touch(11))).rejects.toMatchObject({ code: 'DUPLICATE_KEY', value: 'ABC', holder: '1' });
          await expect(a.products.upsert({ _id: '1', sku: 'ABC' }, touch(12))).resolves.toMatchObject({ changed: true });
          expect(await a.productBySku('abc', { signal: live() })).toBeUndefined(); // look-ups stay exact
        } finally {
          await sql`drop table if exists ${sql.table(table)}`.execute(db);
          await db.destroy();
        }
      });
    });
  }

  if (kind === 'postgres') {
    describeDatabase(kind, 'an integer order-number column on PostgreSQL', () => {
      test('a look-up with text finds nothing and fails nothing; a number finds its order', async () => {
        const { db } = connectKysely(DATABASE_URLS.postgres, { poolSize: 2 });
        const table = `${uniquePrefix()}orders`;
        try {
          await sql`create table ${sql.table(table)} (id serial primary key, order_no integer, updated_at bigint not null)`.execute(db);
          await sql`insert into ${sql.table(table)} (order_no, updated_at) values (1001, 5)`.execute(db);
          const map = { version: 1, orders: { table, id: 'id', lastUpdated: { column: 'updated_at', type: 'epoch-ms' }, fields: { orderid: 'order_no' } } };
          const a = await createMappedAdapter({ db, kind: 'postgres', map });
          expect(await a.orderByOrderId('MKT-1', { signal: live() })).toBeUndefined();
          expect((await a.orderByOrderId('1001', { signal: live() }))?.orderid).toBe('1001');
        } finally {
          await sql`drop table if exists ${sql.table(table)}`.execute(db);
          await db.destroy();
        }
      });
    });
  }
}
