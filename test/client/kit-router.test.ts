/** The caller against this kit's own router, in-process. */
import { createStoreClient } from '../../lib/client';
import { StoreAuthError, StoreBadRequestError } from '../../lib/client/client-errors';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { compareKeys, keyOf } from '../../lib/adapter';
import { startStoreServer } from '../../lib/host';

const KEY = 'kit-router-key-0f9e8d';
const catalog = demoCatalog(230);
const ascIds = [...catalog.products].sort((a, b) => compareKeys(keyOf(a), keyOf(b))).map((p) => p._id);

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

test.each(['offset', 'cursor'] as const)('every strategy and parallel offsets yield the same catalog (%s default)', async (pagination) => {
  const server = await startStoreServer({ adapter: createMemoryAdapter(catalog), key: KEY, port: 0, pagination, rateLimit: false });
  try {
    const client = createStoreClient({ baseUrl: server.url, svcKey: KEY, pageSize: 25 });
    for (const options of [{ strategy: 'auto' as const }, { strategy: 'cursor' as const }, { strategy: 'offset' as const }, { strategy: 'offset' as const, concurrency: 4 }]) {
      const walk = client.walk('products', { jobid: 1, ...options });
      expect((await collect(walk)).map((p) => p._id)).toEqual(ascIds);
      expect(walk.summary).toMatchObject({ duplicates: 0, invalid: 0, anomalies: [], itemsTotal: 230 });
    }
    const desc = await collect(client.walk('products', { jobid: 1, sortorder: 'desc' }));
    expect(desc.map((p) => p._id)).toEqual([...ascIds].reverse());
    expect(await client.getOrder(catalog.orders[3]._id)).toEqual(catalog.orders[3]);
    await expect(client.listProducts({ sortorder: 'asc', jobid: 1, next: 'tampered' })).rejects.toBeInstanceOf(StoreBadRequestError);
    await expect(createStoreClient({ baseUrl: server.url, svcKey: 'not-the-key-123' }).listOrders({ sortorder: 'asc', jobid: 1 })).rejects.toBeInstanceOf(StoreAuthError);
  } finally {
    await server.close();
  }
});

test('the router\'s rate limit (429 + Retry-After) is waited out: exact attempts', async () => {
  const server = await startStoreServer({ adapter: createMemoryAdapter(catalog), key: KEY, port: 0, rateLimit: { limit: 3, windowMs: 2000 } });
  try {
    const delays: number[] = [];
    const client = createStoreClient({ baseUrl: server.url, svcKey: KEY, pageSize: 100, hooks: { beforeRetry: [(i) => delays.push(i.delayMs)] } });
    const items = await collect(client.walk('products', { jobid: 1 }));
    expect(items).toHaveLength(230);
    // Three pages fit the window; no fourth request was needed.
    expect(client.stats).toEqual({ requests: 3, retries: 0 });
    const order = await client.getOrder(catalog.orders[0]._id);
    expect(order._id).toBe(catalog.orders[0]._id);
    expect(client.stats.retries).toBe(1);
    expect(client.stats.requests).toBe(5);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThan(0);
    expect(delays[0]).toBeLessThanOrEqual(2000);
  } finally {
    await server.close();
  }
});
