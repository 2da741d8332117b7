/**
 * Issue 19 (the webhook side), the caller's part: `pushOrder` of a NEW order (no `_id`) keeps the id
 * the store assigned; its create carries an `Idempotency-Key`, the same on the retry after a lost
 * reply; so a retry and a later update reach the same store order: one order in the store, one in
 * the sink. Against this kit's router on loopback (a real store, memory adapter), behind a proxy
 * that drops the store's reply to the first create after the store has stored it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { startStoreServer, type RunningStoreServer } from '../../lib/host';
import { demoCatalog } from '../../lib/demo';
import { createSyncConnection } from '../../lib/sync';
import type { Order } from '../../lib/contract/webhook';

const KEY = 'push-create-key-5e7a1c';
const catalog = demoCatalog(8);

/** A loopback proxy in front of `target`: forwards every request; `drop(n)` says whether to swallow the store's reply to POST number n (1-based). */
async function startProxy(target: string, drop: (n: number) => boolean) {
  const posts: Array<{ url: string; idempotencyKey: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = req.method === 'POST' ? posts.push({ url: req.url ?? '', idempotencyKey: req.headers['idempotency-key'] as string | undefined }) : 0;
      const headers = { ...req.headers };
      delete headers.host;
      const upstream = http.request(`${target}${req.url}`, { method: req.method, headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          // The store has answered (and stored the order): the reply is lost on the way back.
          if (n > 0 && drop(n)) return req.socket.destroy();
          res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
        });
      });
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function ordersWithOrderid(adapter: MemoryAdapter, orderid: string): Promise<Order[]> {
  const all = await adapter.orders.list({ sortorder: 'asc', limit: 10_000, signal: new AbortController().signal });
  return all.map((x) => JSON.parse(x.json) as Order).filter((o) => o.orderid === orderid);
}

let store: RunningStoreServer & { adapter: MemoryAdapter };
beforeEach(async () => {
  const adapter = createMemoryAdapter({ products: catalog.products, orders: [] });
  store = Object.assign(await startStoreServer({ adapter, key: KEY, port: 0, rateLimit: false }), { adapter });
});
afterEach(() => store.close());

test('a new order whose create reply is lost: the retry carries the same Idempotency-Key; one order in the store and in the sink, and a later update reaches it', async () => {
  const proxy = await startProxy(store.url, (n) => n === 1);
  try {
    const sink = createMemoryAdapter();
    const conn = createSyncConnection({ id: 'shop', client: { baseUrl: proxy.url, svcKey: KEY, retry: { limit: 2, delay: () => 5 } }, sink });
    const { _id: _dropped, ...fresh } = { ...catalog.orders[0], orderid: 'MKT-1', status: 'pending' };
    const created = await conn.pushOrder(fresh);
    expect(created).toMatchObject({ status: 'accepted', item: { orderid: 'MKT-1', _id: expect.any(String) } });
    if (created.status !== 'accepted') return;
    const storeId = created.item._id;
    // Two attempts of one create (no id parameter), under one key.
    expect(proxy.posts).toHaveLength(2);
    expect(proxy.posts.every((p) => !new URL(p.url, 'http://x').searchParams.has('id'))).toBe(true);
    expect(proxy.posts[0].idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(proxy.posts[1].idempotencyKey).toBe(proxy.posts[0].idempotencyKey);
    // One order in the store, under the id the sink keeps.
    expect((await ordersWithOrderid(store.adapter, 'MKT-1')).map((o) => o._id)).toEqual([storeId]);
    expect((await ordersWithOrderid(sink, 'MKT-1')).map((o) => o._id)).toEqual([storeId]);

    // A later update of that order (by the id the store assigned) reaches the same store order.
    const updated = await conn.pushOrder({ ...created.item, status: 'paid' });
    expect(updated).toMatchObject({ status: 'accepted', item: { _id: storeId, status: 'paid' } });
    expect(proxy.posts[2].idempotencyKey).toBeUndefined(); // an update is keyed by its id
    expect((await ordersWithOrderid(store.adapter, 'MKT-1')).map((o) => [o._id, o.status])).toEqual([[storeId, 'paid']]);
    expect((await ordersWithOrderid(sink, 'MKT-1')).map((o) => [o._id, o.status])).toEqual([[storeId, 'paid']]);
  } finally {
    await proxy.close();
  }
});

test('every reply lost: the push fails with its Idempotency-Key, and pushing again with that key creates nothing twice', async () => {
  let dropping = true;
  const proxy = await startProxy(store.url, () => dropping);
  try {
    const sink = createMemoryAdapter();
    const conn = createSyncConnection({ id: 'shop', client: { baseUrl: proxy.url, svcKey: KEY, retry: { limit: 1, delay: () => 5 } }, sink });
    const { _id: _dropped, ...fresh } = { ...catalog.orders[1], orderid: 'MKT-2' };
    const failed = await conn.pushOrder(fresh);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'STORE_NETWORK' }, idempotencyKey: expect.any(String) });
    if (failed.status !== 'failed') return;
    dropping = false;
    const again = await conn.pushOrder(fresh, { idempotencyKey: failed.idempotencyKey });
    expect(again.status).toBe('accepted');
    expect(new Set(proxy.posts.map((p) => p.idempotencyKey))).toEqual(new Set([failed.idempotencyKey]));
    expect(await ordersWithOrderid(store.adapter, 'MKT-2')).toHaveLength(1);
    expect(await ordersWithOrderid(sink, 'MKT-2')).toHaveLength(1);
  } finally {
    await proxy.close();
  }
});
