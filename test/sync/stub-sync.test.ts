/**
 * Ids-only lists: a store listing stubs (`{_id, last_updated}`) and serving items by `?id=` is
 * synced into the same sink content as one listing whole items, fetching by ID only what is new or
 * changed; a stub is never stored as the item.
 */
import fc from 'fast-check';
import { createStoreClient } from '../../lib/client';
import { createMemoryAdapter } from '../../adapters/memory';
import { MemoryCheckpointStore, runSync, type SyncReport } from '../../lib/sync';
import { demoOrder, demoProduct } from '../../lib/demo';
import { isRawJson, type StoreAdapter } from '../../lib/adapter';
import { guardAdapter } from '../../lib/adapter-guard';
import { RunContext } from '../../lib/sync/sync-run-context';
import { resolveStubs } from '../../lib/sync/stub-fetch';
import type { Order, Product } from '../../lib/contract/webhook';
import type { Entity } from '../../lib/contract/entities';
import { startFakeStore, type FakeStore } from '../client/fake-store';

const KEY = 'stub-sync-key-123456';

async function contents(sink: StoreAdapter, entity: Entity): Promise<unknown[]> {
  const items = await sink[entity].list({ sortorder: 'asc', limit: 100_000, signal: new AbortController().signal });
  return items.map((x) => (isRawJson(x) ? JSON.parse(x.json) : x));
}

const clientOf = (store: FakeStore, urls: boolean) =>
  createStoreClient(urls ? { urls: { listProducts: `${store.url}/products`, listOrders: `${store.url}/orders` }, svcKey: KEY, retry: 0 } : { baseUrl: store.url, svcKey: KEY, retry: 0 });

test('a stub list is synced by ID, and a stub is never stored as the item', async () => {
  const products = Array.from({ length: 30 }, (_, i) => demoProduct(i));
  const orders = Array.from({ length: 9 }, (_, i) => demoOrder(i, products.length));
  const store = await startFakeStore({ products, orders, key: KEY, listing: 'stubs', pageSize: 30 });
  try {
    const sink = createMemoryAdapter();
    const report = await runSync({ connectionId: 's', client: clientOf(store, true), sink, checkpoints: new MemoryCheckpointStore(), byIdConcurrency: 32, signal: new AbortController().signal });
    expect(report.ok).toBe(true);
    expect(report.products).toMatchObject({ count: 30, seen: 30, stubs: 30, fetchedById: 30, written: 30 });
    expect(report.orders).toMatchObject({ count: 9, stubs: 9, fetchedById: 9 });
    expect(await contents(sink, 'products')).toEqual(expect.arrayContaining(products));
    expect(store.requests.filter((u) => u.searchParams.has('id'))).toHaveLength(39);
  } finally {
    await store.close();
  }
});

test('a cursor-paged stub list longer than ten pages is walked to its end (stub pages are not empty pages)', async () => {
  const products = Array.from({ length: 40 }, (_, i) => demoProduct(i));
  const store = await startFakeStore({ products, key: KEY, listing: 'stubs', pagination: 'cursor', pageSize: 3 });
  try {
    const sink = createMemoryAdapter();
    const report = await runSync({ connectionId: 's', client: clientOf(store, true), sink, checkpoints: new MemoryCheckpointStore(), entities: ['products'] });
    expect(report.error).toBeUndefined();
    expect(report.products).toMatchObject({ count: 40, stubs: 40, fetchedById: 40 });
  } finally {
    await store.close();
  }
});

test('after a page of stubs the caller asks for pages of 10,000 (serial walks only); each item still arrives once', async () => {
  const products = Array.from({ length: 250 }, (_, i) => demoProduct(i));
  for (const [concurrency, pagination] of [[1, 'offset'], [1, 'cursor'], [4, 'offset']] as const) {
    const store = await startFakeStore({ products, key: KEY, listing: 'stubs', pagination, pageSize: 20, maxLimit: 100 });
    try {
      const sink = createMemoryAdapter();
      const report = await runSync({ connectionId: 's', client: clientOf(store, true), sink, checkpoints: new MemoryCheckpointStore(), entities: ['products'], concurrency });
      expect(report.error).toBeUndefined();
      expect(report.products).toMatchObject({ count: 250, seen: 250, stubs: 250, fetchedById: 250, written: 250 });
      const limits = store.requests.filter((u) => !u.searchParams.has('id')).map((u) => u.searchParams.get('limit'));
      if (concurrency === 1) {
        // The first page at the client's size (none set: the store's 20), then 100 a page (the store's cap).
        expect(limits).toEqual([null, '10000', '10000', '10000']);
      } else {
        // Parallel offset ranges are sized by the pages seen: no larger limit asked for.
        expect(limits.every((l) => l !== '10000')).toBe(true);
      }
    } finally {
      await store.close();
    }
  }
});

test('a by-ID read that answers 404 quarantines that item; a stub without last_updated is always fetched', async () => {
  const products = Array.from({ length: 5 }, (_, i) => demoProduct(i));
  const store = await startFakeStore({
    products,
    key: KEY,
    listing: 'stubs',
    transform: (body) => ({ ...body, products: (body.products as Array<{ _id: string }>).map((s) => ({ _id: s._id })) }),
    intercept: (ctx) => (ctx.url.searchParams.get('id') === products[2]._id ? (ctx.res.writeHead(404, { 'content-type': 'application/json' }), ctx.res.end('{"error":"gone"}'), true) : false),
  });
  try {
    const sink = createMemoryAdapter();
    const checkpoints = new MemoryCheckpointStore();
    const report = await runSync({ connectionId: 's', client: clientOf(store, true), sink, checkpoints, entities: ['products'] });
    expect(report.ok).toBe(false);
    expect(report.products).toMatchObject({ count: 4, seen: 4, invalid: 1, stubs: 5, fetchedById: 5 });
    expect(report.invalidItems).toEqual([{ entity: 'products', index: expect.any(Number), _id: products[2]._id, error: 'listed, but its by-ID read answered 404' }]);
    const again = await runSync({ connectionId: 's', client: clientOf(store, true), sink, checkpoints, entities: ['products'] });
    expect(again.products).toMatchObject({ fetchedById: 5, written: 0 });
  } finally {
    await store.close();
  }
});

test('stubs far apart in key order (a store that does not sort) are looked up one by one, with the same answer', async () => {
  const products = Array.from({ length: 1500 }, (_, i) => ({ ...demoProduct(i), last_updated: 1_000 + i }));
  const sink = createMemoryAdapter({ products });
  const fetched: string[] = [];
  const client = createStoreClient({
    urls: { listProducts: 'http://store.invalid/p', listOrders: 'http://store.invalid/o' },
    svcKey: KEY,
    fetch: async (url) => {
      const id = new URL(url).searchParams.get('id')!;
      fetched.push(id);
      return new Response(JSON.stringify({ ...products.find((p) => p._id === id), last_updated: 9_999 }));
    },
  });
  const ctx = await RunContext.open({ connectionId: 'x', client, sink, checkpoints: new MemoryCheckpointStore() }, guardAdapter(sink), ['products']);
  const stub = (i: number, last_updated = 1_000 + i) => ({ _id: products[i]._id, last_updated, index: 0 });
  // Current at both ends of the catalog: nothing fetched, though the range between holds 1,500 items.
  expect((await resolveStubs(ctx, 'products', [stub(0), stub(1499)], new AbortController().signal)).current).toBe(2);
  // One changed, one new, one without last_updated: those three fetched.
  const r = await resolveStubs(ctx, 'products', [stub(1499), stub(3, 9_999), { _id: 'new-one', last_updated: 5, index: 2 }, { _id: products[7]._id, index: 3 }], new AbortController().signal);
  expect(fetched.sort()).toEqual(['new-one', products[3]._id, products[7]._id].sort());
  expect([r.current, r.items.length, r.failed.length]).toEqual([1, 2, 1]);
});

interface Change {
  readonly index: number;
  readonly title: string;
}

function applyChanges(store: FakeStore, entity: Entity, changes: readonly Change[], t: number): void {
  const map = store.data[entity] as Map<string, Product | Order>;
  const ids = [...map.keys()];
  for (const c of changes) {
    const id = ids[c.index % ids.length];
    const item = map.get(id)!;
    const changed = entity === 'products' ? { ...(item as Product), title: c.title } : { ...(item as Order), feedback: c.title };
    map.set(id, { ...changed, last_updated: t + c.index });
  }
}

test('stub syncs equal full syncs, and a re-sync fetches only the new and changed items (property)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 0, max: 12 }),
      fc.array(fc.record({ index: fc.nat(), title: fc.string({ maxLength: 12 }) }), { maxLength: 10 }),
      fc.integer({ min: 0, max: 5 }),
      fc.integer({ min: 1, max: 9 }),
      fc.constantFrom('bare', 'envelope', 'list') as fc.Arbitrary<'bare' | 'envelope' | 'list'>,
      // The largest `limit` the stub store honours: the caller asks for 10,000 once it sees stubs.
      fc.integer({ min: 0, max: 20 }),
      async (nProducts, nOrders, changes, added, pageSize, byIdForm, extraLimit) => {
        const products = Array.from({ length: nProducts }, (_, i) => demoProduct(i));
        const orders = nProducts ? Array.from({ length: nOrders }, (_, i) => demoOrder(i, products.length)) : [];
        const full = await startFakeStore({ products, orders, key: KEY, pageSize });
        const stubs = await startFakeStore({ products, orders, key: KEY, pageSize, listing: 'stubs', byIdForm, maxLimit: pageSize + extraLimit });
        try {
          const sinks = { full: createMemoryAdapter(), stubs: createMemoryAdapter() };
          const checkpoints = { full: new MemoryCheckpointStore(), stubs: new MemoryCheckpointStore() };
          const syncBoth = async (): Promise<{ full: SyncReport; stubs: SyncReport }> => ({
            full: await runSync({ connectionId: 'f', client: clientOf(full, false), sink: sinks.full, checkpoints: checkpoints.full }),
            stubs: await runSync({ connectionId: 's', client: clientOf(stubs, true), sink: sinks.stubs, checkpoints: checkpoints.stubs }),
          });
          const first = await syncBoth();
          for (const entity of ['products', 'orders'] as const) expect(await contents(sinks.stubs, entity)).toEqual(await contents(sinks.full, entity));
          // Changes and additions, the same in both stores.
          const t = 2_000_000_000_000;
          for (const store of [full, stubs]) {
            applyChanges(store, 'products', nProducts ? changes : [], t);
            for (let i = 0; i < added; i++) store.data.products.set(`new-${i}`, { ...demoProduct(1000 + i), _id: `new-${i}`, last_updated: t + 500 + i });
          }
          const second = await syncBoth();
          expect(first.stubs.ok && second.stubs.ok).toBe(true);
          for (const entity of ['products', 'orders'] as const) expect(await contents(sinks.stubs, entity)).toEqual(await contents(sinks.full, entity));
          const changedIds = new Set(nProducts ? changes.map((c) => [...full.data.products.keys()][c.index % nProducts]) : []);
          expect(second.stubs.products.fetchedById).toBe(changedIds.size + added);
          expect(second.stubs.orders.fetchedById).toBe(0);
          expect(second.stubs.products.written).toBe(second.full.products.written);
        } finally {
          await full.close();
          await stubs.close();
        }
      },
    ),
    { numRuns: 25 },
  );
});
