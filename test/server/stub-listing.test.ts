/**
 * The ids-only listing (`listing: 'stubs'`, the deployed "list by id" mode): pages of
 * `{_id, last_updated}` stubs (orders also `orderid`), the full item through `?id=` on the same
 * URL. On memory and on SQLite (whose adapter lists raw JSON text): walking the stubs and reading
 * each by id gives exactly the full listing.
 */
import { openSqlAdapter } from '../../adapters/sql';
import { createMemoryAdapter } from '../../adapters/memory';
import type { StoreAdapter } from '../../lib/adapter';
import { demoCatalog, seedDemo } from '../../lib/demo';
import { get, startStore } from './helpers';

const N = 57;
const catalog = demoCatalog(N);

const fixtures: Array<[string, () => Promise<StoreAdapter>]> = [
  ['memory', async () => createMemoryAdapter(structuredClone(catalog))],
  [
    'sqlite',
    async () => {
      const sql = await openSqlAdapter('sqlite::memory:');
      await seedDemo(sql, N);
      return sql;
    },
  ],
];

describe.each(fixtures)('stubs on %s', (_name, make) => {
  let full: Awaited<ReturnType<typeof startStore>>;
  let stubs: Awaited<ReturnType<typeof startStore>>;
  beforeAll(async () => {
    const adapter = await make();
    full = await startStore({ adapter });
    stubs = await startStore({ adapter, listing: 'stubs' });
  });
  afterAll(async () => {
    await full.close();
    await stubs.close();
  });

  async function walk(base: string, entity: string): Promise<any[]> {
    const out: any[] = [];
    for (let offset = 0; ; ) {
      const page = await get(`${base}/${entity}?offset=${offset}&limit=10`);
      expect(page.status).toBe(200);
      out.push(...page.body[entity]);
      offset += page.body.paging.pageSize;
      if (!page.body.paging.next) return out;
    }
  }

  it.each(['products', 'orders'])('%s: stubs carry only _id and last_updated (orders also orderid); ?id= gives the listed item', async (entity) => {
    const items = await walk(full.base, entity);
    const listed = await walk(stubs.base, entity);
    expect(listed).toHaveLength(items.length);
    const expected = items.map((x) => (entity === 'orders' ? { _id: x._id, last_updated: x.last_updated, orderid: x.orderid } : { _id: x._id, last_updated: x.last_updated }));
    expect(listed).toEqual(expected);
    for (const stub of listed.filter((_, i) => i % 7 === 0)) {
      const one = await get(`${stubs.base}/${entity}?id=${encodeURIComponent(stub._id)}`);
      expect(one.body).toEqual(items.find((x) => x._id === stub._id));
    }
    // The paging envelope is the same: same totals, same cursors' positions.
    const a = await get(`${full.base}/${entity}?sortorder=desc&limit=5`);
    const b = await get(`${stubs.base}/${entity}?sortorder=desc&limit=5`);
    expect(b.body.paging.itemsTotal).toBe(a.body.paging.itemsTotal);
    expect(b.body[entity].map((x: any) => x._id)).toEqual(a.body[entity].map((x: any) => x._id));
  });

  it('a stub page holds up to 10,000 stubs when asked with limit, above maxPageSize; a full page stays capped', async () => {
    const adapter = await make();
    const capped = { full: await startStore({ adapter, pageSize: 10, maxPageSize: 10 }), stubs: await startStore({ adapter, listing: 'stubs', pageSize: 10, maxPageSize: 10 }) };
    try {
      const f = await get(`${capped.full.base}/products?offset=0&limit=50`);
      expect(f.body.products).toHaveLength(10);
      const s = await get(`${capped.stubs.base}/products?offset=0&limit=50`);
      expect(s.body.products).toHaveLength(50);
      expect(s.body.paging.pageSize).toBe(50);
      // Without limit, the page size is the store's.
      const d = await get(`${capped.stubs.base}/products?offset=0`);
      expect(d.body.products).toHaveLength(10);
    } finally {
      await capped.full.close();
      await capped.stubs.close();
    }
  });

  it('a stub page obeys the byte budget (many stubs per page, never over it)', async () => {
    const small = await startStore({ adapter: await make(), listing: 'stubs', maxPageBytes: 600 });
    try {
      let offset = 0;
      const seen: string[] = [];
      for (;;) {
        const page = await get(`${small.base}/products?offset=${offset}&limit=1000`);
        expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(600);
        seen.push(...page.body.products.map((p: any) => p._id));
        offset += page.body.paging.pageSize;
        if (!page.body.paging.next) break;
      }
      expect(seen).toHaveLength(N);
      expect(new Set(seen).size).toBe(N);
    } finally {
      await small.close();
    }
  });
});
