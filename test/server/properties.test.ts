/**
 * Property tests of the list webhooks over loopback HTTP (fast-check):
 * (a) random query strings never produce a 5xx, and every body is JSON;
 * (b) for random catalogs, page sizes and byte budgets, paging in both modes and both sort orders
 *     returns every item exactly once, in order, and every body is within the budget;
 * (c) with cursor paging, items that exist throughout and do not change appear exactly once while
 *     other items are inserted and updated between pages.
 */
import fc from 'fast-check';
import { compareKeys, keyOf, type StoreAdapter } from '../../lib/adapter';
import type { Product } from '../../lib/contract';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createStoreRouter, type StoreRouterOptions } from '../../lib/server';
import { KEY, listen } from './helpers';

/** One loopback server whose router is swapped per property run (starting servers is the slow part). */
let current: (req: any, res: any, next: () => void) => void = () => undefined;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  server = await listen((req: any, res: any) =>
    current(req, res, () => {
      res.statusCode = 599;
      res.end('not routed');
    }),
  );
});
afterAll(() => server.close());

function use(options: Partial<StoreRouterOptions> & { adapter: StoreAdapter }): void {
  current = createStoreRouter({ svcKeys: [KEY], rateLimit: false, ...options } as StoreRouterOptions) as any;
}

async function getPage(path: string): Promise<{ status: number; text: string; body: any }> {
  const res = await fetch(`${server.url}${path}`, { headers: { SvcKey: KEY } });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

describe('(a) random query strings on both list routes', () => {
  const demo = createMemoryAdapter(demoCatalog(40));
  const names = fc.constantFrom('sortorder', 'jobid', 'offset', 'next', 'limit', 'SvcKey', 'sortorder[]', 'offset[a]', '__proto__', 'constructor', 'x');
  const values = fc.oneof(
    fc.constantFrom('asc', 'desc', 'ASC', '0', '1', '-1', '20', '1e3', '0x10', '9007199254740993', '', ' ', 'null', '[]', '{}'),
    fc.string({ maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.integer().map(String),
    fc.base64String({ maxLength: 120 }),
  );
  const encode = (s: string, how: number) => (how === 0 ? encodeURIComponent(s) : how === 1 ? s.replace(/[#&\s]/g, '') : escape(s));
  const pairs = fc.array(fc.tuple(names, values, fc.integer({ min: 0, max: 2 })), { maxLength: 4 }).map((ps) => ps.map(([n, v, how]) => `${n}=${encode(v, how)}`));
  const queryString = fc.oneof(
    // A valid request with random extra or repeated parameters mixed in.
    fc.tuple(fc.constantFrom('asc', 'desc'), fc.integer(), pairs).map(([o, j, extra]) => [`sortorder=${o}`, `jobid=${j}`, ...extra].join('&')),
    fc.array(fc.tuple(names, values, fc.integer({ min: 0, max: 2 })), { maxLength: 7 }).map((pairs) => pairs.map(([n, v, how]) => `${n}=${encode(v, how)}`).join('&')),
    fc.string({ maxLength: 80 }).map((s) => s.replace(/[#\s]/g, '')),
    fc.string({ unit: 'binary', maxLength: 60 }).map((s) => encodeURIComponent(s)),
  );

  it('2,000 runs × 2 routes: no status ≥ 500, every body JSON with an error or a page', async () => {
    use({ adapter: demo });
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(queryString, async (q) => {
        for (const route of ['products', 'orders']) {
          const r = await getPage(`/${route}?${q}`);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          expect(r.status).toBeLessThan(500);
          if (r.status === 200) expect(Array.isArray(r.body[route])).toBe(true);
          else expect(typeof r.body.error).toBe('string');
        }
      }),
      { numRuns: 2000 },
    );
    // The generator reaches both the valid and the invalid side.
    expect(statuses.get(200)).toBeGreaterThan(0);
    expect(statuses.get(400)).toBeGreaterThan(0);
  });
});

/** Items with colliding timestamps (ties broken by _id) and varied sizes. */
const catalogArb = fc
  .uniqueArray(
    fc.record({
      _id: fc.stringMatching(/^[a-zA-Z0-9_-]{1,12}$/),
      last_updated: fc.integer({ min: 0, max: 20 }),
      title: fc.string({ maxLength: 300 }),
    }),
    { selector: (p) => p._id, maxLength: 45 },
  )
  .map((ps) => ps as Product[]);

function sorted(items: Product[], sortorder: 'asc' | 'desc'): string[] {
  const ids = [...items].sort((a, b) => compareKeys(keyOf(a), keyOf(b))).map((p) => p._id);
  return sortorder === 'asc' ? ids : ids.reverse();
}

describe('(b) paging returns every item exactly once within the byte budget', () => {
  it('random catalogs × page sizes × byte budgets × both modes × both sort orders', async () => {
    await fc.assert(
      fc.asyncProperty(
        catalogArb,
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1_300, max: 6_000 }),
        fc.constantFrom('asc' as const, 'desc' as const),
        fc.constantFrom('offset' as const, 'cursor' as const),
        async (products, pageSize, maxPageBytes, sortorder, mode) => {
          use({ adapter: createMemoryAdapter({ products }), pageSize, maxPageBytes });
          const seen: string[] = [];
          let offset = 0;
          let next: string | undefined;
          for (let guard = 0; ; guard++) {
            expect(guard).toBeLessThanOrEqual(products.length + 1);
            const param = mode === 'offset' ? `&offset=${offset}` : next ? `&next=${next}` : '';
            const r = await getPage(`/products?sortorder=${sortorder}&jobid=1${param}`);
            expect(r.status).toBe(200);
            expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(maxPageBytes);
            expect(r.body.paging.pageSize).toBe(r.body.products.length);
            expect(r.body.paging.pageSize).toBeLessThanOrEqual(pageSize);
            expect(r.body.paging.itemsTotal).toBe(products.length);
            if (mode === 'offset') expect(r.body.paging.offset).toBe(offset);
            seen.push(...r.body.products.map((p: Product) => p._id));
            if (!r.body.paging.next) break;
            expect(r.body.products.length).toBeGreaterThan(0);
            offset += r.body.paging.pageSize;
            next = r.body.paging.next;
          }
          expect(seen).toEqual(sorted(products, sortorder));
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('(c) exactly once under concurrent change, cursor paging', () => {
  const change = fc.record({ inserts: fc.integer({ min: 0, max: 3 }), updates: fc.array(fc.nat(), { maxLength: 3 }) });

  it('unchanged items appear exactly once while others are inserted and updated between pages', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 5, max: 60 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom('asc' as const, 'desc' as const),
        fc.array(change, { minLength: 1, maxLength: 30 }),
        async (n, pageSize, sortorder, changes) => {
          const memory: MemoryAdapter = createMemoryAdapter({
            products: Array.from({ length: n }, (_, i) => ({ _id: `p${i}`, last_updated: 1000 + (i % 7), title: `item ${i}` })),
          });
          use({ adapter: memory, pageSize });
          const touched = new Set<string>();
          let clock = 5000;
          let inserted = 0;
          const seen: string[] = [];
          let next: string | undefined;
          let step = 0;
          for (;;) {
            const r = await getPage(`/products?sortorder=${sortorder}&jobid=1${next ? `&next=${next}` : ''}`);
            expect(r.status).toBe(200);
            seen.push(...r.body.products.map((p: Product) => p._id));
            if (!r.body.paging.next) break;
            next = r.body.paging.next;
            // Between pages (the first ones): new items arrive, existing ones change (last_updated moves).
            const c = changes[step++] ?? { inserts: 0, updates: [] };
            const signal = new AbortController().signal;
            for (let k = 0; k < c.inserts; k++) {
              const id = `new${inserted++}`;
              touched.add(id);
              await memory.products.upsert({ _id: id, title: 'new' }, { lastUpdated: 'touch', now: clock++, signal });
            }
            for (const u of c.updates) {
              const id = `p${u % n}`;
              touched.add(id);
              await memory.products.upsert({ _id: id, title: `changed at ${clock}` }, { lastUpdated: 'touch', now: clock++, signal });
            }
            expect(step).toBeLessThan(n + 100);
          }
          const steady = Array.from({ length: n }, (_, i) => `p${i}`).filter((id) => !touched.has(id));
          for (const id of steady) expect(seen.filter((s) => s === id)).toHaveLength(1);
          // No item ever appears twice within the walk unless it changed in between.
          const counts = new Map<string, number>();
          for (const id of seen) counts.set(id, (counts.get(id) ?? 0) + 1);
          for (const [id, count] of counts) if (count > 1) expect(touched.has(id)).toBe(true);
        },
      ),
      { numRuns: 120 },
    );
  });
});
