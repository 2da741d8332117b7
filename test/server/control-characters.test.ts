/**
 * A C0 control character (NUL included) in a path id, `?id=`, a write's `id` or body `_id`, a
 * `sku`, an order item's id or a cursor is a 400 on every adapter, decided in the core before any
 * adapter is asked (issue 14, D3: PostgreSQL answered 500, "invalid byte sequence 0x00"). Run on
 * memory, SQLite and a real PostgreSQL.
 */
import type { StoreAdapter } from '../../lib/adapter';
import { openSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import { createMemoryAdapter } from '../../adapters/memory';
import { CursorCodec } from '../../lib/server/cursor';
import { demoCatalog, seedDemo } from '../../lib/demo';
import { describeDatabase, isolatedAdapter, sharedDatabase } from '../adapters/sql-databases';
import { get, KEY, post, startStore } from './helpers';

const N = 12;
const catalog = demoCatalog(N);
const p0 = catalog.products[0];
const json = { SvcKey: KEY, 'content-type': 'application/json' };

/** Every request carrying a control character somewhere the adapter would see it. */
function requests(base: string, forgedCursor: string): Array<[string, () => ReturnType<typeof get>]> {
  const out: Array<[string, () => ReturnType<typeof get>]> = [];
  for (const c of ['%00', '%01', '%09', '%0A', '%1F']) {
    const raw = decodeURIComponent(c);
    out.push(
      [`path id ${c}`, () => get(`${base}/products/a${c}b`)],
      [`order path id ${c}`, () => get(`${base}/orders/a${c}b`)],
      [`?id= ${c}`, () => get(`${base}/products?id=a${c}b`)],
      [`write id ${c}`, () => post(`${base}/products?id=a${c}b`, { title: 't' }, json)],
      [`body _id ${c}`, () => post(`${base}/products`, { _id: `a${raw}b`, title: 't' }, json)],
      [`sku ${c}`, () => post(`${base}/products?id=p-nul`, { sku: `S${raw}1` }, json)],
      [`order item id ${c}`, () => post(`${base}/orders?id=o-nul`, { orderItems: [{ id: `S${raw}1`, quantity: 1 }] }, json)],
      [`next ${c}`, () => get(`${base}/products?next=abc${c}`)],
    );
  }
  out.push(['a cursor signed for an id with a NUL', () => get(`${base}/products?next=${forgedCursor}`)]);
  return out;
}

function suite(make: () => Promise<StoreAdapter>, cleanup: (a: StoreAdapter) => Promise<void>) {
  let adapter: StoreAdapter;
  let store: Awaited<ReturnType<typeof startStore>>;
  beforeAll(async () => {
    adapter = await make();
    store = await startStore({ adapter, cursorSecret: 'a cursor secret of enough bytes' });
  });
  afterAll(async () => {
    await store.close();
    await cleanup(adapter);
  });

  it('every control character is a 400 JSON answer, never a 500, and nothing is written', async () => {
    // A cursor carrying a NUL, signed with the store's own secret: the MAC passes, the id must not.
    const forged = new CursorCodec(Buffer.from('a cursor secret of enough bytes')).encode({ entity: 'products', sortorder: 'asc', after: { last_updated: 1, _id: 'a\u0000b' } });
    const before = await get(`${store.base}/products?limit=1000`);
    for (const [name, send] of requests(store.base, forged)) {
      const r = await send();
      expect({ name, status: r.status }).toEqual({ name, status: 400 });
      expect(typeof (r.body.error ?? r.body.reasons?.[0]?.msg)).toBe('string');
    }
    expect((await get(`${store.base}/products?limit=1000`)).body).toEqual(before.body);
    expect((await get(`${store.base}/products/${p0._id}`)).status).toBe(200);
  });
}

describe('control characters on memory', () => suite(async () => createMemoryAdapter(structuredClone(catalog)), async () => undefined));

describe('control characters on SQLite', () =>
  suite(
    async () => {
      const sql = await openSqlAdapter('sqlite::memory:');
      await seedDemo(sql, N);
      return sql;
    },
    (a) => (a as SqlAdapter).close(),
  ));

describeDatabase('postgres', 'control characters on PostgreSQL', () => {
  const shared = sharedDatabase('postgres');
  suite(
    async () => {
      const sql = await isolatedAdapter(shared.db());
      await seedDemo(sql, N);
      return sql;
    },
    (a) => (a as SqlAdapter).dropTables(),
  );
  // After the suite's own afterAll (hooks run in the order they are declared).
  afterAll(() => shared.close());
});
