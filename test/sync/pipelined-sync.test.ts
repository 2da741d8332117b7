/**
 * The pipelined engine: one `upsertMany` per page, page n + 1 fetched while page n is written,
 * the checkpoint saved only after a page is written whole.
 */
import { createStoreClient } from '../../lib/client';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import type { UpsertResult, WriteOptions } from '../../lib/adapter';
import { compareKeys, keyOf } from '../../lib/adapter';
import { demoCatalog } from '../../lib/demo';
import { MemoryCheckpointStore, runSync } from '../../lib/sync';
import { StorageError } from '../../lib/errors';
import type { Product } from '../../lib/contract/webhook';
import { startFakeStore, type FakeStore } from '../client/fake-store';

const KEY = 'pipelined-sync-key-0123456789';
const PAGE = 25;
const catalog = demoCatalog(300);
const storeOrder = [...catalog.products].sort((a, b) => compareKeys(keyOf(a), keyOf(b))).map((p) => p._id);

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

let store: FakeStore;
beforeEach(async () => (store = await startFakeStore({ products: catalog.products, orders: catalog.orders, key: KEY, pageSize: PAGE })));
afterEach(() => store.close());

const productRequests = () => store.requests.filter((u) => u.pathname === '/products');

/** A memory sink whose products' `upsertMany` runs `before(call)` first (call numbers from 1). */
function sinkWith(real: MemoryAdapter, before: (call: number, items: readonly Product[]) => Promise<void>, written: string[]) {
  let calls = 0;
  return {
    products: {
      list: real.products.list.bind(real.products),
      count: real.products.count.bind(real.products),
      get: real.products.get.bind(real.products),
      upsert: real.products.upsert.bind(real.products),
      async upsertMany(items: readonly Product[], options: WriteOptions): Promise<UpsertResult<Product>[]> {
        await before(++calls, items);
        const results = await real.products.upsertMany(items, options);
        written.push(...items.map((p) => p._id));
        return results;
      },
    },
    orders: real.orders,
  };
}

describe('a sink that fails on page k', () => {
  test.each([1, 2, 5, 12])('k = %i: the run stops, the checkpoint is at page k − 1, the resumed run writes every item exactly once', async (k) => {
    const checkpoints = new MemoryCheckpointStore();
    const real = createMemoryAdapter();
    const written: string[] = [];
    const failing = sinkWith(real, async (call) => (call === k ? Promise.reject(new Error('disk full')) : undefined), written);
    const client = createStoreClient({ baseUrl: store.url, svcKey: KEY });
    const crashed = await runSync({ connectionId: 'c', client, sink: failing, checkpoints, entities: ['products'] });
    expect(crashed).toMatchObject({ ok: false, error: { name: 'AdapterError' }, products: { seen: (k - 1) * PAGE, written: (k - 1) * PAGE, complete: false } });
    const state = await checkpoints.load('c');
    expect(state?.run?.progress.products.seen).toBe((k - 1) * PAGE);
    expect(state?.run?.positions?.products).toEqual(k === 1 ? undefined : { offset: (k - 1) * PAGE });
    expect(written).toEqual(storeOrder.slice(0, (k - 1) * PAGE));

    const before = productRequests().length;
    const resumed = await runSync({ connectionId: 'c', client, sink: sinkWith(real, async () => undefined, written), checkpoints, entities: ['products'] });
    expect(resumed).toMatchObject({ ok: true, resumed: true, products: { count: 300, seen: 300, written: 300, unchanged: 0, complete: true } });
    // Each item written exactly once over both runs, in the store's order.
    expect(written).toEqual(storeOrder);
    // The resumed walk starts after page k − 1 (the page the crashed run read ahead may be logged late).
    const offsets = productRequests().slice(before).map((u) => Number(u.searchParams.get('offset') ?? 0));
    expect(Math.min(...offsets)).toBe((k - 1) * PAGE);
    expect((await checkpoints.load('c'))?.run).toBeUndefined();
  });

  test('a failing fetch while a page is written: that page is kept, the run stops with the fetch error', async () => {
    let failOffset: string | undefined = '100';
    await store.close();
    store = await startFakeStore({
      products: catalog.products,
      orders: catalog.orders,
      key: KEY,
      pageSize: PAGE,
      intercept: ({ url, res }) => {
        if (url.pathname !== '/products' || url.searchParams.get('offset') !== failOffset) return false;
        failOffset = undefined;
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"no"}');
        return true;
      },
    });
    const checkpoints = new MemoryCheckpointStore();
    const real = createMemoryAdapter();
    const written: string[] = [];
    const client = createStoreClient({ baseUrl: store.url, svcKey: KEY });
    const crashed = await runSync({ connectionId: 'c', client, sink: sinkWith(real, async () => undefined, written), checkpoints, entities: ['products'] });
    expect(crashed).toMatchObject({ ok: false, error: { name: 'StoreBadRequestError' }, products: { seen: 100 } });
    expect(written).toEqual(storeOrder.slice(0, 100));
    expect((await checkpoints.load('c'))?.run?.positions?.products).toEqual({ offset: 100 });
    const resumed = await runSync({ connectionId: 'c', client, sink: sinkWith(real, async () => undefined, written), checkpoints, entities: ['products'] });
    expect(resumed).toMatchObject({ ok: true, products: { count: 300, seen: 300 } });
    expect(written).toEqual(storeOrder);
  });
});

test('a slow sink: page n + 1 is requested while page n is written, never more than one ahead, pages written in order', async () => {
  const real = createMemoryAdapter();
  const written: string[] = [];
  const aheadAtWrite: number[] = [];
  const slow = sinkWith(
    real,
    async (call) => {
      // Requests so far beyond the pages already handed to the sink (this one included).
      aheadAtWrite.push(productRequests().length - call);
      // Hold the write until the next page has been requested: without overlap this never happens.
      for (let i = 0; productRequests().length < call + 1; i++) {
        if (i > 2000) throw new Error(`page ${call + 1} was not requested while page ${call} was written`);
        await new Promise((r) => setTimeout(r, 1));
      }
    },
    written,
  );
  const client = createStoreClient({ baseUrl: store.url, svcKey: KEY });
  const report = await runSync({ connectionId: 'slow', client, sink: slow, checkpoints: new MemoryCheckpointStore(), entities: ['products'] });
  expect(report.error).toBeUndefined();
  expect(report).toMatchObject({ ok: true, products: { count: 300, seen: 300, written: 300 } });
  expect(written).toEqual(storeOrder);
  // 12 full pages and the request confirming the end; at most one page in flight ahead.
  expect(productRequests()).toHaveLength(13);
  expect(aheadAtWrite).toHaveLength(12);
  expect(Math.max(...aheadAtWrite)).toBeLessThanOrEqual(1);
});

describe('a sink whose database goes away (issue 20, D)', () => {
  test('unreachable for two attempts of a page: the write is tried again after a wait and the run completes, each item once', async () => {
    const real = createMemoryAdapter();
    const written: string[] = [];
    let failures = 0;
    const flaky = sinkWith(real, async (call) => {
      if (call >= 3 && failures < 2) {
        failures++;
        throw new StorageError('unreachable', 'Connection terminated unexpectedly');
      }
    }, written);
    const client = createStoreClient({ baseUrl: store.url, svcKey: KEY });
    const t0 = Date.now();
    const report = await runSync({ connectionId: 'flaky', client, sink: flaky, checkpoints: new MemoryCheckpointStore(), entities: ['products'] });
    expect(report.error).toBeUndefined();
    expect(report).toMatchObject({ ok: true, products: { count: 300, seen: 300, written: 300 } });
    expect(failures).toBe(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_500); // 0.5 s, then 1 s
    expect(written).toEqual(storeOrder);
  });

  test('a full disk is not waited out: the run stops at once with the cause, and a sink that cannot count either still gives the report (count -1)', async () => {
    const real = createMemoryAdapter();
    let down = false;
    const full = {
      ...sinkWith(real, async (call) => {
        if (call === 2) {
          down = true;
          throw new StorageError('full', 'SQLITE_FULL: database or disk is full');
        }
      }, []),
    };
    full.products = { ...full.products, count: async (o) => (down ? Promise.reject(new StorageError('full', 'SQLITE_FULL: database or disk is full')) : real.products.count(o)) };
    const client = createStoreClient({ baseUrl: store.url, svcKey: KEY });
    const t0 = Date.now();
    const report = await runSync({ connectionId: 'full', client, sink: full, checkpoints: new MemoryCheckpointStore(), entities: ['products'] });
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(report).toMatchObject({
      ok: false,
      error: { name: 'StorageError', code: 'STORAGE_FAILED', message: 'the database storage is full (SQLITE_FULL: database or disk is full)' },
      products: { count: -1, seen: PAGE, written: PAGE },
    });
  });
});
