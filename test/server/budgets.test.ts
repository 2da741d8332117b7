/**
 * The byte budget (a page never exceeds 10,000,000 bytes; one item over it is a 500 naming it),
 * the time budget (a slow adapter gets a partial page with `next`, never a time-out), and adapter
 * failures (500 without internals, the next request served).
 */
import type { ListOptions, StoreAdapter } from '../../lib/adapter';
import type { Product } from '../../lib/contract';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { FIRST_CHUNK } from '../../lib/server/read-core';
import { KEY, get, startStore } from './helpers';

/** A product whose JSON text is exactly `bytes` long (description padded with `fill`). */
function productOfSize(_id: string, last_updated: number, bytes: number, fill = 'x'): Product {
  const base = JSON.stringify({ _id, last_updated, description: '' }).length;
  const fillBytes = Buffer.byteLength(fill);
  const room = bytes - base;
  if (room < 0) throw new Error(`cannot build ${bytes} bytes`);
  const p = { _id, last_updated, description: fill.repeat(Math.floor(room / fillBytes)) + 'x'.repeat(room % fillBytes) };
  expect(Buffer.byteLength(JSON.stringify(p))).toBe(bytes);
  return p;
}

describe('byte budget (default 10,000,000 bytes per body)', () => {
  it('a page whose items straddle the budget ends before the item that would cross it; nothing is skipped', async () => {
    // 11 items of 909,090 bytes and their 10 commas are exactly 10,000,000 bytes: the items alone
    // fit, with the envelope they do not.
    const products = Array.from({ length: 13 }, (_, i) => productOfSize(`p-${String(i).padStart(2, '0')}`, 1000 + i, 909_090));
    const store = await startStore({ adapter: createMemoryAdapter({ products }) });
    try {
      for (const mode of ['offset', 'cursor'] as const) {
        const first = await get(`${store.base}/products?sortorder=asc&jobid=1`);
        expect(Buffer.byteLength(first.text)).toBeLessThanOrEqual(10_000_000);
        expect(first.body.paging.pageSize).toBe(10);
        expect(first.body.paging.next).toBeDefined();
        const secondUrl =
          mode === 'offset'
            ? `${store.base}/products?sortorder=asc&jobid=1&offset=${first.body.paging.pageSize}`
            : `${store.base}/products?sortorder=asc&jobid=1&next=${first.body.paging.next}`;
        const second = await get(secondUrl);
        expect(second.body.paging.pageSize).toBe(3);
        expect(second.body.paging.next).toBeUndefined();
        const ids = [...first.body.products, ...second.body.products].map((p: Product) => p._id);
        expect(ids).toEqual(products.map((p) => p._id));
      }
    } finally {
      await store.close();
    }
  });

  it('counts bytes, not characters (UTF-8)', async () => {
    // 1,200,000 bytes but only ~600,000 characters each: 8 fit, 16 would if characters were counted.
    const products = Array.from({ length: 12 }, (_, i) => productOfSize(`u-${String(i).padStart(2, '0')}`, i + 1, 1_200_000 + (i % 2), 'é'));
    const store = await startStore({ adapter: createMemoryAdapter({ products }) });
    try {
      const r = await get(`${store.base}/products?sortorder=asc&jobid=1`);
      expect(r.body.paging.pageSize).toBe(8);
      expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(10_000_000);
    } finally {
      await store.close();
    }
  });

  it('a single item over the budget is a 500 {error} naming it, never a silent skip; the store keeps serving', async () => {
    const small = (id: string, t: number): Product => ({ _id: id, last_updated: t, title: id });
    const huge = productOfSize('huge-one', 3, 10_000_001);
    const memory = createMemoryAdapter({ products: [small('a', 1), small('b', 2), huge, small('c', 4)] });
    const logged: object[] = [];
    const store = await startStore({ adapter: memory, logger: { info() {}, warn() {}, error: (o: object) => void logged.push(o) } });
    try {
      const first = await get(`${store.base}/products?sortorder=asc&jobid=1`);
      expect(first.body.products.map((p: Product) => p._id)).toEqual(['a', 'b']);
      const stuck = await get(`${store.base}/products?sortorder=asc&jobid=1&next=${first.body.paging.next}`);
      expect(stuck.status).toBe(500);
      expect(stuck.body).toEqual({ error: 'products item "huge-one" is 10000001 bytes, larger than the page budget of 10000000 bytes' });
      expect(logged).toEqual([expect.objectContaining({ code: 'ITEM_TOO_LARGE', id: 'huge-one' })]);
      // The offset walk meets the same item at the same place.
      expect((await get(`${store.base}/products?sortorder=asc&jobid=1&offset=2`)).status).toBe(500);
      // Served by id, it is not a page: no page budget applies.
      expect((await get(`${store.base}/products/huge-one`)).status).toBe(200);
      expect((await get(`${store.base}/products?sortorder=desc&jobid=1&limit=1`)).body.products[0]._id).toBe('c');
    } finally {
      await store.close();
    }
  });

  it('maxPageBytes is configurable and every body stays within it', async () => {
    const { products } = demoCatalog(60);
    const store = await startStore({ adapter: createMemoryAdapter({ products }), maxPageBytes: 20_000 });
    try {
      let r = await get(`${store.base}/products?sortorder=desc&jobid=1&limit=1000`);
      let seen = r.body.products.length;
      while (r.body.paging.next) {
        expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(20_000);
        r = await get(`${store.base}/products?sortorder=desc&jobid=1&limit=1000&next=${r.body.paging.next}`);
        seen += r.body.products.length;
      }
      expect(seen).toBe(60);
    } finally {
      await store.close();
    }
  });
});

/** Wraps a memory adapter: list calls numbered ≥ `hangFrom` (per `reset`) never answer. */
function slowAdapter(memory: MemoryAdapter, { honourSignal }: { honourSignal: boolean }) {
  const state = { calls: 0, hangFrom: Infinity, signals: [] as AbortSignal[] };
  const products = Object.create(memory.products) as MemoryAdapter['products'];
  products.list = (options: ListOptions) => {
    state.signals.push(options.signal);
    if (++state.calls < state.hangFrom) return memory.products.list(options);
    return new Promise((_resolve, reject) => {
      if (honourSignal) options.signal.addEventListener('abort', () => reject(new Error('aborted by signal')), { once: true });
    });
  };
  const adapter: StoreAdapter = { products, orders: memory.orders };
  return { adapter, state, reset: (hangFrom: number) => Object.assign(state, { calls: 0, hangFrom, signals: [] }) };
}

describe('time budget', () => {
  const { products } = demoCatalog(300);

  it.each([true, false])('a slow adapter (honours the signal: %p) answers a partial page with next; following next completes the walk', async (honourSignal) => {
    const slow = slowAdapter(createMemoryAdapter({ products }), { honourSignal });
    const store = await startStore({ adapter: slow.adapter, timeBudgetMs: 800, pageSize: 200 });
    try {
      slow.reset(2); // the first chunk comes back, the second never does
      const partial = await get(`${store.base}/products?sortorder=asc&jobid=1`);
      expect(partial.status).toBe(200);
      expect(partial.body.paging).toMatchObject({ pageSize: FIRST_CHUNK, itemsTotal: 300, offset: 0, next: expect.any(String) });
      expect(slow.state.signals.at(-1)!.aborted).toBe(true);

      slow.reset(Infinity);
      const ids = partial.body.products.map((p: Product) => p._id);
      let r = await get(`${store.base}/products?sortorder=asc&jobid=1&next=${partial.body.paging.next}`);
      ids.push(...r.body.products.map((p: Product) => p._id));
      while (r.body.paging.next) {
        r = await get(`${store.base}/products?sortorder=asc&jobid=1&next=${r.body.paging.next}`);
        ids.push(...r.body.products.map((p: Product) => p._id));
      }
      expect(ids).toEqual([...products].sort((a, b) => a.last_updated! - b.last_updated! || (a._id < b._id ? -1 : 1)).map((p) => p._id));
    } finally {
      await store.close();
    }
  });

  it('in offset mode the partial page advances offset by what was sent', async () => {
    const slow = slowAdapter(createMemoryAdapter({ products }), { honourSignal: true });
    const store = await startStore({ adapter: slow.adapter, timeBudgetMs: 800, pageSize: 200 });
    try {
      slow.reset(2);
      const partial = await get(`${store.base}/products?sortorder=desc&jobid=1&offset=10`);
      expect(partial.body.paging).toMatchObject({ pageSize: FIRST_CHUNK, offset: 10 });
      slow.reset(Infinity);
      const following = await get(`${store.base}/products?sortorder=desc&jobid=1&offset=${10 + FIRST_CHUNK}&limit=1`);
      const all = await get(`${store.base}/products?sortorder=desc&jobid=1&limit=1000`);
      expect(following.body.products[0]._id).toBe(all.body.products[10 + FIRST_CHUNK]._id);
      expect(partial.body.products.at(-1)._id).toBe(all.body.products[10 + FIRST_CHUNK - 1]._id);
    } finally {
      await store.close();
    }
  });

  it.each([true, false])('nothing ready by the deadline (honours the signal: %p) is a 500 {error}, and the store keeps serving', async (honourSignal) => {
    const slow = slowAdapter(createMemoryAdapter({ products }), { honourSignal });
    const store = await startStore({ adapter: slow.adapter, timeBudgetMs: 200 });
    try {
      slow.reset(1);
      const r = await get(`${store.base}/products?sortorder=asc&jobid=1`);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: 'the store did not answer within its time budget; try again later' });
      slow.reset(Infinity);
      expect((await get(`${store.base}/products?sortorder=asc&jobid=1`)).status).toBe(200);
    } finally {
      await store.close();
    }
  });
});

describe('caller going away', () => {
  it('aborts the adapter\'s signal, and is not logged as a failure', async () => {
    const memory = createMemoryAdapter(demoCatalog(10));
    let started!: () => void;
    const callStarted = new Promise<void>((r) => (started = r));
    let aborted!: () => void;
    const signalAborted = new Promise<void>((r) => (aborted = r));
    const products = Object.create(memory.products) as MemoryAdapter['products'];
    products.list = (o: ListOptions) => {
      o.signal.addEventListener('abort', () => aborted(), { once: true });
      started();
      return new Promise(() => undefined);
    };
    const logged: string[] = [];
    const log = (level: string) => (_o: object, msg?: string) => void logged.push(`${level}: ${msg}`);
    const store = await startStore({ adapter: { products, orders: memory.orders }, logger: { info: log('info'), warn: log('warn'), error: log('error') } });
    try {
      const client = new AbortController();
      const request = fetch(`${store.base}/products?sortorder=asc&jobid=1`, { headers: { SvcKey: KEY }, signal: client.signal }).catch(() => 'aborted');
      await callStarted;
      client.abort();
      expect(await request).toBe('aborted');
      await signalAborted;
      await new Promise((r) => setImmediate(r));
      expect(logged.filter((l) => l.startsWith('error'))).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('adapter failures', () => {
  it('an adapter that throws is a 500 {error} without internals; the cause is logged; the next request works', async () => {
    const memory = createMemoryAdapter(demoCatalog(30));
    let fail = true;
    const orders = Object.create(memory.orders) as MemoryAdapter['orders'];
    orders.list = (o: ListOptions) => (fail ? Promise.reject(new Error('connect ECONNREFUSED db.internal:5432 password=hunter2')) : memory.orders.list(o));
    orders.get = (id: string) => (fail ? Promise.reject(new TypeError('boom at /srv/app/db.js:12')) : memory.orders.get(id));
    const logged: Array<{ obj: any; msg?: string }> = [];
    const log = (obj: object, msg?: string) => void logged.push({ obj, msg });
    const store = await startStore({ adapter: { products: memory.products, orders }, logger: { info: log, warn: log, error: log } });
    try {
      for (const path of ['/orders?sortorder=asc&jobid=1', '/orders/ord-000001']) {
        const r = await get(`${store.base}${path}`);
        expect(r.status).toBe(500);
        expect(r.body).toEqual({ error: 'the store could not complete the request; its log has the details' });
        expect(r.text).not.toMatch(/hunter2|ECONNREFUSED|boom|stack|\.js/);
      }
      expect(logged).toHaveLength(2);
      expect(logged[0].obj).toMatchObject({ operation: 'listOrders', code: 'ADAPTER_FAILED' });
      expect((logged[0].obj.err as Error).cause).toBeInstanceOf(Error);
      expect(JSON.stringify(logged.map((l) => l.obj.operation))).not.toContain('test-key');
      fail = false;
      expect((await get(`${store.base}/orders?sortorder=asc&jobid=1`)).status).toBe(200);
      expect((await get(`${store.base}/orders/ord-000001`)).status).toBe(200);
    } finally {
      await store.close();
    }
  });

  it('an adapter that breaks its contract (unsorted page, bad count) is a 500 too', async () => {
    const memory = createMemoryAdapter(demoCatalog(30));
    const products = Object.create(memory.products) as MemoryAdapter['products'];
    products.list = async (o: ListOptions) => [...(await memory.products.list(o))].reverse();
    const orders = Object.create(memory.orders) as MemoryAdapter['orders'];
    orders.count = async () => -1;
    const store = await startStore({ adapter: { products, orders } });
    try {
      expect((await get(`${store.base}/products?sortorder=asc&jobid=1`)).status).toBe(500);
      expect((await get(`${store.base}/orders?sortorder=asc&jobid=1`)).status).toBe(500);
      expect((await get(`${store.base}/products/prod-000001`)).status).toBe(200);
    } finally {
      await store.close();
    }
  });
});
