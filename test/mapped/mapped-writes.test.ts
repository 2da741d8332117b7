/**
 * Writes through the webhooks into mapped tables, over HTTP on loopback: off unless mapped (a 400
 * reason, nothing stored), only the mapped writable columns set (the rest, JSON members included,
 * as they were), creates given an integer id by the store, child rows matched by position, the
 * same write repeated (a retry after a lost reply) answered the same with no second row, and the
 * endpoint checker's write probes passing on a mapped store. PostgreSQL: a NUL in a text column
 * is refused before anything is stored, and new ids come from the table's sequence.
 */
import { sql, type Kysely } from 'kysely';
import { createMappedAdapter, MappedWriteRefusedError, type MappedAdapter } from '../../adapters/mapped';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import { checkEndpoints } from '../../lib/conformance';
import { UnstorableValueError } from '../../lib/errors';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from '../adapters/sql-databases';
import { get, KEY, post, startStore } from '../server/helpers';
import { createShopTables, dropShopTables, shopMapping, shopTables } from './mapped-fixtures';

const live = () => AbortSignal.timeout(10_000);

const ID: Record<SqlKind, string> = { sqlite: 'integer primary key', postgres: 'serial primary key', mysql: 'int auto_increment primary key' };
const TEXT: Record<SqlKind, string> = { sqlite: 'text', postgres: 'text', mysql: 'varchar(200) character set utf8mb4' };

/** A plain shop table: an integer id, a JSON column, columns the mapping does not know, and a child table. */
async function createTables(db: Kysely<any>, kind: SqlKind, prefix: string): Promise<{ items: string; lines: string }> {
  const items = `${prefix}items`;
  const lines = `${prefix}item_colors`;
  const suffix = sql.raw(kind === 'mysql' ? ' engine=InnoDB' : '');
  await sql`create table ${sql.table(items)} (id ${sql.raw(ID[kind])}, sku ${sql.raw(TEXT[kind])} not null, name ${sql.raw(TEXT[kind])} not null, price numeric(10, 2), stock integer, attrs ${sql.raw(TEXT[kind])}, notes ${sql.raw(TEXT[kind])}, updated_at bigint not null)${suffix}`.execute(db);
  await sql`create table ${sql.table(lines)} (item_id integer not null, position integer not null, color ${sql.raw(TEXT[kind])}, primary key (item_id, position))${suffix}`.execute(db);
  await db.insertInto(items).values([
    { sku: 'MUG-1', name: 'Mug', price: '12.50', stock: 3, attrs: '{"brand":"Old","origin":"PT"}', notes: 'keep me', updated_at: 1_000 },
    { sku: 'TEE-2', name: 'Tee', price: '20.00', stock: 0, attrs: null, notes: null, updated_at: 2_000 },
  ]).execute();
  return { items, lines };
}

function itemsMapping(t: { items: string; lines: string }, writes: Record<string, unknown> | undefined, childDelete = true): Record<string, unknown> {
  return {
    version: 1,
    products: {
      table: t.items,
      id: 'id',
      lastUpdated: { column: 'updated_at', type: 'epoch-ms' },
      fields: {
        sku: 'sku',
        title: 'name',
        brand: { column: 'attrs', path: 'brand' },
        variations: {
          table: t.lines,
          key: 'item_id',
          orderBy: 'position',
          fields: { color: 'color' },
          writes: { update: ['color'], create: ['position', 'color'], delete: childDelete },
        },
      },
      ...(writes ? { writes } : {}),
    },
  };
}

const WRITES = { update: ['name', 'attrs'], create: ['sku', 'name', 'attrs'] };

function writeSuite(kind: SqlKind, open: () => Kysely<any>): void {
  let tables: { items: string; lines: string };
  const opened: MappedAdapter[] = [];
  const adapter = async (writes: Record<string, unknown> | undefined, childDelete = true) => {
    const a = await createMappedAdapter({ db: open(), kind, map: itemsMapping(tables, writes, childDelete) });
    opened.push(a);
    return a;
  };

  beforeEach(async () => {
    tables = await createTables(open(), kind, uniquePrefix());
  });
  afterEach(async () => {
    for (const t of [tables.lines, tables.items]) await sql`drop table if exists ${sql.table(t)}`.execute(open());
  });

  test('without "writes", the write webhooks answer 400 with a reason and store nothing', async () => {
    const store = await startStore({ adapter: await adapter(undefined) });
    try {
      const update = await post(`${store.base}/products?id=1&jobid=5`, { sku: 'MUG-1', title: 'Changed' });
      expect(update.status).toBe(400);
      expect(update.body.reasons[0].msg).toMatch(/^this store does not update products through its webhooks: the mapping file's products\.writes has no "update" list/);
      const create = await post(`${store.base}/products?jobid=6`, { sku: 'NEW', title: 'New' });
      expect(create.body.reasons[0].msg).toMatch(/does not create products/);
      const orders = await post(`${store.base}/orders?jobid=7`, { status: 'paid' });
      expect(orders.body.reasons[0].msg).toBe('this store serves no orders: the mapping file does not map them');
      expect((await get(`${store.base}/products/1`)).body.product.title).toBe('Mug');
      expect(Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(tables.items)}`.execute(open())).rows[0].n)).toBe(2);
    } finally {
      await store.close();
    }
    await expect(opened[0].products.upsert({ _id: '1', title: 'x' }, { lastUpdated: 'touch', now: 5, signal: live() })).rejects.toBeInstanceOf(MappedWriteRefusedError);
  });

  test('an update sets the mapped writable columns only; a repeat is answered the same and stores nothing', async () => {
    const store = await startStore({ adapter: await adapter(WRITES) });
    try {
      const body = { sku: 'RENAMED', title: 'Big mug', brand: 'Acme', variations: [{ color: 'red' }, { color: 'blue' }] };
      const first = await post(`${store.base}/products?id=1&jobid=8`, body);
      expect(first.status).toBe(200);
      // sku is mapped but not writable on update; the child table takes creates.
      expect(first.body.product).toMatchObject({ _id: '1', sku: 'MUG-1', title: 'Big mug', brand: 'Acme', variations: [{ color: 'red' }, { color: 'blue' }] });
      expect(first.body.product.last_updated).toBeGreaterThan(2_000);
      const again = await post(`${store.base}/products?id=1&jobid=8`, body);
      expect(again.body).toEqual(first.body);
      const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(tables.items)} where id = 1`.execute(open());
      expect(rows).toHaveLength(1);
      expect(rows[0].notes).toBe('keep me');
      expect(JSON.parse(String(rows[0].attrs))).toEqual({ brand: 'Acme', origin: 'PT' });
      expect(Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(tables.lines)}`.execute(open())).rows[0].n)).toBe(2);
    } finally {
      await store.close();
    }
  });

  test('child rows are matched by position: updated, added, and deleted (or kept without delete)', async () => {
    const colors = async () => (await sql<{ color: string }>`select color from ${sql.table(tables.lines)} where item_id = 2 order by position`.execute(open())).rows.map((r) => r.color);
    const a = await adapter({ ...WRITES }, true);
    const write = (variations: Array<{ color: string }>) => a.products.upsert({ _id: '2', sku: 'TEE-2', title: 'Tee', variations }, { lastUpdated: 'touch', now: 10_000, signal: live() });
    await write([{ color: 'a' }, { color: 'b' }, { color: 'c' }]);
    expect(await colors()).toEqual(['a', 'b', 'c']);
    const r = await write([{ color: 'z' }]);
    expect(await colors()).toEqual(['z']);
    expect(r.item.variations).toEqual([{ color: 'z' }]);
    const keeping = await adapter({ ...WRITES }, false);
    const kept = await keeping.products.upsert({ _id: '2', sku: 'TEE-2', title: 'Tee', variations: [{ color: 'y' }] }, { lastUpdated: 'touch', now: 20_000, signal: live() });
    expect(await colors()).toEqual(['y']);
    await write([{ color: 'p' }, { color: 'q' }]);
    const short = await keeping.products.upsert({ _id: '2', sku: 'TEE-2', title: 'Tee', variations: [{ color: 'r' }] }, { lastUpdated: 'touch', now: 30_000, signal: live() });
    expect(await colors()).toEqual(['r', 'q']);
    expect(short.item.variations).toEqual([{ color: 'r' }, { color: 'q' }]); // what is stored, not what was sent
    expect(kept.changed).toBe(true);
  });

  test('a create gets an integer id from the store; repeated with that id it is the same item, one row', async () => {
    const store = await startStore({ adapter: await adapter(WRITES) });
    try {
      const created = await post(`${store.base}/products?jobid=9`, { sku: 'NEW-1', title: 'Fresh', brand: 'Acme' });
      expect(created.status).toBe(200);
      const id = created.body.product._id as string;
      expect(id).toMatch(/^[1-9]\d*$/);
      expect(Number(id)).toBeGreaterThan(2);
      const second = await post(`${store.base}/products?jobid=10`, { sku: 'NEW-2', title: 'Fresher' });
      expect(Number(second.body.product._id)).toBeGreaterThan(Number(id));
      const retry = await post(`${store.base}/products?id=${id}&jobid=9`, { sku: 'NEW-1', title: 'Fresh', brand: 'Acme' });
      expect(retry.body.product).toEqual(created.body.product);
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(tables.items)} where sku = 'NEW-1'`.execute(open());
      expect(Number(rows[0].n)).toBe(1);
      const bad = await post(`${store.base}/products?id=abc&jobid=11`, { sku: 'X', title: 'X' });
      expect(bad.status).toBe(400);
      expect(bad.body.reasons[0].msg).toBe('_id: the id column id holds integers, and "abc" is not one');
    } finally {
      await store.close();
    }
  });

  test('two stores (two processes) assigning ids at the same moment: a create never writes over the item another one just created', async () => {
    const [a, b] = [await adapter(WRITES), await adapter(WRITES)];
    // B takes its id (max + 1 on SQLite and MariaDB; a sequence value on PostgreSQL), then A creates before B writes.
    let aWritten!: () => void;
    const afterA = new Promise<void>((resolve) => (aWritten = resolve));
    const slowB: MappedAdapter = Object.assign(Object.create(b), {
      newId: async (...args: Parameters<MappedAdapter['newId']>) => {
        const id = await b.newId(...args);
        await afterA;
        return id;
      },
    });
    const [storeA, storeB] = [await startStore({ adapter: a }), await startStore({ adapter: slowB })];
    try {
      const fromB = post(`${storeB.base}/products?jobid=1`, { sku: 'RACE-B', title: 'From B' });
      await new Promise((r) => setTimeout(r, 100));
      const fromA = await post(`${storeA.base}/products?jobid=1`, { sku: 'RACE-A', title: 'From A' });
      aWritten();
      const second = await fromB;
      expect([fromA.status, second.status]).toEqual([200, 200]);
      expect(second.body.product._id).not.toBe(fromA.body.product._id);
      const { rows } = await sql<{ sku: string; name: string }>`select sku, name from ${sql.table(tables.items)} where sku like 'RACE-%' order by sku`.execute(open());
      expect(rows).toEqual([{ sku: 'RACE-A', name: 'From A' }, { sku: 'RACE-B', name: 'From B' }]);
    } finally {
      await storeA.close();
      await storeB.close();
    }
  });

  test('touch keeps last_updated monotonic in an epoch-seconds column', async () => {
    await sql`update ${sql.table(tables.items)} set updated_at = 1700000000`.execute(open());
    const m = itemsMapping(tables, WRITES) as Record<string, any>;
    m.products.lastUpdated.type = 'epoch-s';
    const a = await createMappedAdapter({ db: open(), kind, map: m });
    const first = await a.products.upsert({ _id: '1', sku: 'MUG-1', title: 'A' }, { lastUpdated: 'touch', now: 1_700_000_000_500, signal: live() });
    const second = await a.products.upsert({ _id: '1', sku: 'MUG-1', title: 'B' }, { lastUpdated: 'touch', now: 1_700_000_000_600, signal: live() });
    expect([first.item.last_updated, second.item.last_updated]).toEqual([1_700_000_001_000, 1_700_000_002_000]);
  });
}

describe('mapped writes on SQLite', () => {
  let db: Kysely<any> | undefined;
  writeSuite('sqlite', () => (db ??= connectKysely('sqlite::memory:').db));
  afterAll(async () => db?.destroy());
});

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `mapped writes on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}`, () => {
    let db: Kysely<any> | undefined;
    const open = () => (db ??= connectKysely(DATABASE_URLS[kind], { poolSize: 4 }).db);
    writeSuite(kind, open);
    if (kind === 'postgres') {
      test('a NUL in a text column is refused before anything is stored', async () => {
        const tables = shopTables(uniquePrefix());
        await createShopTables(open(), 'postgres', tables);
        const a = await createMappedAdapter({ db: open(), kind, map: shopMapping(tables) });
        const store = await startStore({ adapter: a });
        try {
          const r = await post(`${store.base}/products?id=p1&jobid=1`, { sku: 'S', title: 'a\u0000b' });
          expect(r.status).toBe(400);
          expect(r.body.reasons[0].msg).toBe('title: PostgreSQL text cannot hold U+0000 (NUL)');
          await expect(a.products.upsert({ _id: 'p1', title: 'a\u0000b' }, { lastUpdated: 'keep', now: 0, signal: live() })).rejects.toBeInstanceOf(UnstorableValueError);
          expect(await a.products.count({ signal: live() })).toBe(0);
        } finally {
          await store.close();
          await dropShopTables(open(), tables);
        }
      });
    }
    afterAll(async () => db?.destroy());
  });
}

describe('the endpoint checker\'s write probes on a mapped store', () => {
  test('storebridge check --writes passes (SQLite, writes mapped)', async () => {
    const { db } = connectKysely('sqlite::memory:');
    const tables = shopTables('shop_');
    await createShopTables(db, 'sqlite', tables);
    const a = await createMappedAdapter({ db, kind: 'sqlite', map: shopMapping(tables), destroyOnClose: true });
    await a.products.upsert({ _id: 'p1', sku: 'MUG-1', title: 'Mug', variations: [{ size: 'M', prices: [{ tag: 'default', currency: 'USD', number: 9.5 }] }] }, { lastUpdated: 'keep', now: 0, signal: live() });
    const store = await startStore({ adapter: a }, '/');
    try {
      const report = await checkEndpoints({ baseUrl: store.base, svcKey: KEY, writes: true });
      expect(report.checks.filter((c) => !c.ok && c.level === 'must').map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
      expect(report.checks.filter((c) => c.name.startsWith('orders.write')).length).toBeGreaterThan(0);
    } finally {
      await store.close();
      await a.close();
    }
  });
});
