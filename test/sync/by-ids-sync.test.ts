/**
 * The stub re-sync with the batched by-ID read, against the kit's real store router on loopback:
 * a store that advertises it (`Storebridge-By-Ids`) is asked for the changed items in batches of at
 * most 100 ids, one request per batch; the same store with the header stripped (what a deployed
 * store looks like) is asked one id per request. Both leave the sink with the same items. Requests
 * are counted on the server.
 */
import express from 'express';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { isRawJson, type StoreAdapter } from '../../lib/adapter';
import { createStoreClient } from '../../lib/client';
import { BY_IDS_HEADER, MAX_BY_IDS, type Product } from '../../lib/contract';
import { demoProduct } from '../../lib/demo';
import { createStoreRouter } from '../../lib/server';
import { MemoryCheckpointStore, runSync, type SyncReport } from '../../lib/sync';
import { KEY, listen } from '../server/helpers';

const N = 1_000;
const CHANGED_EVERY = 4; // 250 of 1,000 changed

interface CountingStore {
  readonly base: string;
  /** The query of every request that reached the server, in order. */
  readonly queries: URLSearchParams[];
  /** Most `ids` requests in flight at once. */
  readonly maxInFlight: () => number;
  close(): Promise<void>;
}

/**
 * The kit's store router (ids-only listing) behind a counter. `advertise: false` strips the
 * `Storebridge-By-Ids` header (a store that does not offer the batched read); `refuseIds` answers
 * every `ids` request 400, as a store would that advertised it and then refuses it.
 */
async function countingStore(adapter: StoreAdapter, opts: { advertise?: boolean; refuseIds?: boolean; delayMs?: number } = {}): Promise<CountingStore> {
  const queries: URLSearchParams[] = [];
  let inFlight = 0;
  let max = 0;
  const app = express();
  app.use(async (req, res, next) => {
    const q = new URL(req.url, 'http://x').searchParams;
    queries.push(q);
    if (opts.advertise === false) {
      const set = res.setHeader.bind(res);
      res.setHeader = (name: string, value: any) => (name.toLowerCase() === BY_IDS_HEADER.toLowerCase() ? res : set(name, value));
    }
    if (!q.has('ids')) return next();
    if (opts.refuseIds) return void res.status(400).json({ error: 'ids is not served here' });
    inFlight++;
    max = Math.max(max, inFlight);
    res.on('close', () => inFlight--);
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
    next();
  });
  app.use('/sync', createStoreRouter({ adapter, svcKeys: [KEY], rateLimit: false, listing: 'stubs' }));
  const srv = await listen(app);
  return { base: `${srv.url}/sync`, queries, maxInFlight: () => max, close: srv.close };
}

function storeCatalog(): MemoryAdapter {
  return createMemoryAdapter({ products: Array.from({ length: N }, (_, i) => demoProduct(i)) });
}

/** Changes every `CHANGED_EVERY`th product (a new title, `last_updated` now). */
async function changeSome(store: MemoryAdapter): Promise<string[]> {
  const changed: string[] = [];
  const signal = new AbortController().signal;
  for (let i = 0; i < N; i += CHANGED_EVERY) {
    const p = demoProduct(i);
    await store.products.upsert({ ...p, title: `${p.title} (changed)` }, { lastUpdated: 'touch', now: Date.now(), signal });
    changed.push(p._id);
  }
  return changed;
}

async function contents(sink: StoreAdapter): Promise<Product[]> {
  const rows = await sink.products.list({ sortorder: 'asc', limit: 100_000, signal: new AbortController().signal });
  return rows.map((x) => (isRawJson(x) ? JSON.parse(x.json) : x));
}

/** A sink holding what a full sync of the unchanged catalog wrote. */
function syncedSink(): MemoryAdapter {
  return createMemoryAdapter({ products: Array.from({ length: N }, (_, i) => demoProduct(i)) });
}

async function resync(store: CountingStore, sink: StoreAdapter, byIdConcurrency?: number): Promise<SyncReport> {
  const client = createStoreClient({ urls: { listProducts: `${store.base}/products` }, svcKey: KEY, retry: 0, pageSize: 100 });
  return runSync({ connectionId: 'c', client, sink, checkpoints: new MemoryCheckpointStore(), entities: ['products'], byIdConcurrency });
}

const idsOf = (q: URLSearchParams) => q.get('ids')!.split(',').map(decodeURIComponent);

test('the same sink result with and without the header: one request per 100 changed ids against one per id', async () => {
  const adapter = storeCatalog();
  const changed = await changeSome(adapter);
  const expected = await contents(adapter);
  const batched = await countingStore(adapter);
  const single = await countingStore(adapter, { advertise: false });
  try {
    const sinkA = syncedSink();
    const a = await resync(batched, sinkA);
    expect(a.ok).toBe(true);
    expect(a.products).toMatchObject({ seen: N, stubs: N, fetchedById: changed.length, written: changed.length, count: N });
    expect(await contents(sinkA)).toEqual(expected);
    const batches = batched.queries.filter((q) => q.has('ids'));
    expect(batched.queries.filter((q) => q.has('id'))).toHaveLength(0);
    // Every changed id asked for exactly once, at most 100 a request.
    expect(batches.flatMap(idsOf).sort()).toEqual([...changed].sort());
    for (const q of batches) expect(idsOf(q).length).toBeLessThanOrEqual(MAX_BY_IDS);
    // A page's changed stubs go in full batches: one request per 100 (and one short batch per page at most).
    const pages = batched.queries.filter((q) => !q.has('ids')).length;
    expect(batches.length).toBeLessThanOrEqual(Math.ceil(changed.length / MAX_BY_IDS) + pages - 1);
    expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(changed.length / MAX_BY_IDS));

    const sinkB = syncedSink();
    const b = await resync(single, sinkB);
    expect(b.ok).toBe(true);
    expect(b.products).toMatchObject({ seen: N, fetchedById: changed.length, written: changed.length, count: N });
    expect(await contents(sinkB)).toEqual(expected);
    expect(single.queries.filter((q) => q.has('ids'))).toHaveLength(0);
    expect(single.queries.filter((q) => q.has('id'))).toHaveLength(changed.length);
    // The requests the run itself counted agree with the server.
    expect(a.requests).toBe(batched.queries.length);
    expect(b.requests).toBe(single.queries.length);
    expect(a.requests * 10).toBeLessThan(b.requests);
  } finally {
    await batched.close();
    await single.close();
  }
});

test('several batches are in flight at once, never more than byIdConcurrency', async () => {
  // Every product changed: the second page of 900 stubs holds 9 batches.
  const adapter = createMemoryAdapter({ products: Array.from({ length: N }, (_, i) => ({ ...demoProduct(i), last_updated: 2 })) });
  for (const concurrency of [1, 3]) {
    const store = await countingStore(adapter, { delayMs: 30 });
    try {
      const sink = createMemoryAdapter();
      const r = await resync(store, sink, concurrency);
      expect(r.ok).toBe(true);
      expect(r.products).toMatchObject({ count: N, fetchedById: N });
      expect(store.maxInFlight()).toBe(concurrency);
    } finally {
      await store.close();
    }
  }
});

test('a store that advertises the batched read but refuses it is read one id per request', async () => {
  const adapter = storeCatalog();
  const changed = await changeSome(adapter);
  const store = await countingStore(adapter, { refuseIds: true });
  try {
    const sink = syncedSink();
    const r = await resync(store, sink);
    expect(r.ok).toBe(true);
    expect(r.products).toMatchObject({ fetchedById: changed.length, written: changed.length });
    expect(await contents(sink)).toEqual(await contents(adapter));
    expect(store.queries.filter((q) => q.has('id'))).toHaveLength(changed.length);
  } finally {
    await store.close();
  }
});

test('an id the batch answers as missing is quarantined, like a 404 of a single read', async () => {
  const memory = storeCatalog();
  await changeSome(memory);
  const gone = demoProduct(4)._id;
  // The item vanishes between its listing and its read: its stub is listed, the read finds nothing.
  const adapter: StoreAdapter = {
    ...memory,
    products: {
      list: (o) => memory.products.list(o),
      listKeys: (o) => memory.products.listKeys(o),
      count: (o) => memory.products.count(o),
      get: async (id, o) => (id === gone ? undefined : memory.products.get(id, o)),
      getMany: async (ids, o) => (await memory.products.getMany(ids, o)).filter((p) => p._id !== gone),
      upsert: (item, o) => memory.products.upsert(item, o),
    },
    orders: memory.orders,
  };
  const store = await countingStore(adapter);
  try {
    const r = await resync(store, syncedSink());
    expect(r.products.invalid).toBe(1);
    expect(r.ok).toBe(false);
    expect(r.invalidItems).toEqual([expect.objectContaining({ _id: gone, error: 'listed, but its batched by-ID read found none' })]);
    expect(store.queries.filter((q) => q.has('id'))).toHaveLength(0);
  } finally {
    await store.close();
  }
});
