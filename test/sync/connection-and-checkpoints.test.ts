import { mkdtempSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createMemoryAdapter } from '../../adapters/memory';
import { createStoreClient } from '../../lib/client';
import { demoCatalog } from '../../lib/demo';
import { createSyncConnection, JsonFileCheckpointStore, MemoryCheckpointStore, type SyncReport } from '../../lib/sync';
import { startFakeStore } from '../client/fake-store';

const KEY = 'conn-test-key-abcdef';

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'sb-conn-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a scheduled connection polls, then stop() ends the schedule cleanly', async () => {
  const { products, orders } = demoCatalog(40);
  const store = await startFakeStore({ products, orders, key: KEY });
  try {
    const reports: SyncReport[] = [];
    const conn = createSyncConnection({
      id: 'shop',
      client: { baseUrl: store.url, svcKey: KEY },
      sink: createMemoryAdapter(),
      checkpoints: new JsonFileCheckpointStore(path.join(dir, 'state.json')),
      intervalMs: 60,
      onReport: (r) => reports.push(r),
    });
    conn.start();
    while (reports.length < 3) await new Promise((r) => setTimeout(r, 20));
    await conn.stop();
    const after = reports.length;
    const requests = store.requests.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(reports.length).toBe(after);
    expect(store.requests.length).toBe(requests);
    expect(reports.map((r) => r.jobid)).toEqual(Array.from({ length: after }, (_, i) => i + 1));
    expect(reports.every((r) => r.ok && r.products.count === 40 && r.orders.count === 10)).toBe(true);
    expect(conn.lastReport?.jobid).toBe(after);
    expect(await store.openSockets()).toBe(0);
  } finally {
    await store.close();
  }
});

test('per-operation URLs (as configured in a connection), {id} templates included', async () => {
  const { products, orders } = demoCatalog(12);
  const seen: string[] = [];
  const store = await startFakeStore({
    products,
    orders,
    key: KEY,
    // The store lives under other paths: map them onto the fake store's routes.
    intercept: ({ url }) => {
      seen.push(url.pathname);
      const map: Record<string, string> = { '/hooks/catalog': '/products', '/hooks/sales': '/orders' };
      const m = /^\/hooks\/item\/(.+)$/.exec(url.pathname);
      if (map[url.pathname]) url.pathname = map[url.pathname];
      else if (m) url.pathname = `/products/${m[1]}`;
    },
  });
  try {
    const client = createStoreClient({
      urls: { listProducts: `${store.url}/hooks/catalog`, listOrders: `${store.url}/hooks/sales`, getProduct: `${store.url}/hooks/item/{id}` },
      svcKey: KEY,
    });
    expect((await client.listProducts({ sortorder: 'asc', jobid: 1 })).items).toHaveLength(12);
    expect((await client.listOrders({ sortorder: 'asc', jobid: 1 })).items).toHaveLength(3);
    expect((await client.getProduct(products[0]._id))._id).toBe(products[0]._id);
    expect(seen).toEqual(['/hooks/catalog', '/hooks/sales', `/hooks/item/${products[0]._id}`]);
  } finally {
    await store.close();
  }
});

test('JSON file checkpoints: several connections in one file, atomic replace, a foreign file refused', async () => {
  const file = path.join(dir, 'state.json');
  const a = new JsonFileCheckpointStore(file);
  expect(await a.load('x')).toBeUndefined();
  await Promise.all([a.save('x', { jobid: 3 }), a.save('y', { jobid: 5, highWater: { products: 10 } })]);
  const b = new JsonFileCheckpointStore(file);
  expect(await b.load('x')).toEqual({ jobid: 3 });
  expect(await b.load('y')).toEqual({ jobid: 5, highWater: { products: 10 } });
  expect(await b.load('__proto__')).toBeUndefined();
  // A connection may be named __proto__ (--connection is free text): kept like any other, beside the rest.
  await b.save('__proto__', { jobid: 7 });
  expect(await new JsonFileCheckpointStore(file).load('__proto__')).toEqual({ jobid: 7 });
  expect(await new JsonFileCheckpointStore(file).load('x')).toEqual({ jobid: 3 });
  expect(({} as Record<string, unknown>).jobid).toBeUndefined();
  expect(readdirSync(dir)).toEqual(['state.json']);
  writeFileSync(file, JSON.stringify({ x: { hello: 'world' } }));
  await expect(b.load('x')).rejects.toThrow(/not a storebridge checkpoint file/);
});

test('memory checkpoints copy in and out', async () => {
  const m = new MemoryCheckpointStore();
  const state = { jobid: 1, highWater: { orders: 5 } };
  await m.save('c', state);
  state.jobid = 99;
  expect(await m.load('c')).toEqual({ jobid: 1, highWater: { orders: 5 } });
});

test('createSyncConnection follows the options policy: a bad value names the option, an unknown one is refused', async () => {
  const client = createStoreClient({ baseUrl: 'http://127.0.0.1:1/s', svcKey: 'k' });
  const sink = createMemoryAdapter();
  expect(() => createSyncConnection({ id: '', client, sink })).toThrow('invalid option "id": must be a non-empty string');
  expect(() => createSyncConnection({ id: 'c', client, sink, mode: 'all' } as never)).toThrow('invalid option "mode": must be "full" or "incremental"');
  expect(() => createSyncConnection({ id: 'c', client, sink, checkpoints: {} as never })).toThrow('invalid option "checkpoints": must be a CheckpointStore');
  expect(() => createSyncConnection({ id: 'c', client, sink, onReprot: () => undefined } as never)).toThrow('invalid option "onReprot": is not an option of createSyncConnection (did you mean "onReport"?)');
  // start() without a schedule is refused when it is called.
  expect(() => createSyncConnection({ id: 'c', client, sink }).start()).toThrow('invalid option "intervalMs": is required to start a schedule');
});
