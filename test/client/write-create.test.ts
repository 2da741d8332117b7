/**
 * Creates (a write without `_id`): no `id` parameter, an `Idempotency-Key` sent with the create and
 * the same on every retry (409 "still running" retried too), the id the store assigned kept; an
 * update carries no key unless one is given. Against a loopback store that answers writes itself.
 */
import type http from 'node:http';
import { createStoreClient } from '../../lib/client';
import { StoreContractError } from '../../lib/client/client-errors';
import { InvalidOptionError } from '../../lib/errors';
import { demoCatalog } from '../../lib/demo';
import { startFakeStore, type FakeStore } from './fake-store';

const KEY = 'write-create-key-91c2e0';
const [order] = demoCatalog(4).orders;
const { _id: _omitted, ...newOrder } = order;

interface Seen {
  readonly id: string | null;
  readonly key: string | undefined;
}

/** A store whose POSTs answer `replies[n]` in turn (status, body), recording each write's `id` parameter and Idempotency-Key. */
async function storeAnswering(replies: Array<[number, unknown, Record<string, string>?]>): Promise<{ store: FakeStore; seen: Seen[] }> {
  const seen: Seen[] = [];
  const store = await startFakeStore({
    key: KEY,
    intercept: ({ req, res, url }) => {
      if (req.method !== 'POST') return false;
      seen.push({ id: url.searchParams.get('id'), key: req.headers['idempotency-key'] as string | undefined });
      const [status, body, headers] = replies[Math.min(seen.length, replies.length) - 1];
      answer(res, status, body, headers);
      return true;
    },
  });
  return { store, seen };
}

function answer(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

const created = (id: string) => ({ success: true, code: 200, warnings: [], order: { ...order, _id: id } });
let store: FakeStore | undefined;
afterEach(() => store?.close());

test('a create sends no id and an Idempotency-Key, the same on each retry (503, then 409 while the first runs), and keeps the id the store assigned', async () => {
  const s = await storeAnswering([[503, { error: 'busy' }], [409, { error: 'still running' }, { 'retry-after': '0' }], [200, created('order-assigned-1')]]);
  store = s.store;
  const client = createStoreClient({ baseUrl: store.url, svcKey: KEY, retry: { limit: 3, delay: () => 1 } });
  const result = await client.writeOrder(newOrder, { jobid: 7 });
  expect(result).toMatchObject({ ok: true, item: { _id: 'order-assigned-1', orderid: order.orderid } });
  expect(s.seen).toHaveLength(3);
  expect(s.seen.every((x) => x.id === null)).toBe(true);
  expect(s.seen[0].key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(new Set(s.seen.map((x) => x.key)).size).toBe(1);
  // Another create is another key.
  await client.writeOrder(newOrder, { jobid: 8 });
  expect(s.seen[3].key).not.toBe(s.seen[0].key);
});

test('an update carries its id and no key unless one is given; a given key is checked', async () => {
  const s = await storeAnswering([[200, created(order._id)]]);
  store = s.store;
  const client = createStoreClient({ baseUrl: store.url, svcKey: KEY, retry: 0 });
  await client.writeOrder(order, { jobid: 1 });
  await client.writeOrder(order, { jobid: 1, idempotencyKey: 'mine-1' });
  expect(s.seen).toEqual([{ id: order._id, key: undefined }, { id: order._id, key: 'mine-1' }]);
  await expect(client.writeOrder(order, { jobid: 1, idempotencyKey: 'naïve' })).rejects.toThrow(InvalidOptionError);
  await expect(client.writeOrder(order, { jobid: 1, idempotencyKey: '' })).rejects.toThrow(/idempotencyKey/);
});

test('a create answered {success:true} alone cannot be found again: a contract error; {success:true, order:{_id}} is the new id', async () => {
  const alone = await storeAnswering([[200, { success: true }]]);
  store = alone.store;
  const err = await createStoreClient({ baseUrl: store.url, svcKey: KEY, retry: 0 }).writeOrder(newOrder, { jobid: 1 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StoreContractError);
  expect((err as Error).message).toContain("a create was answered without the order's new _id");
  await store.close();
  const idOnly = await storeAnswering([[200, { success: true, order: { _id: 'MG-000123' } }]]);
  store = idOnly.store;
  const r = await createStoreClient({ baseUrl: store.url, svcKey: KEY, retry: 0 }).writeOrder(newOrder, { jobid: 1 });
  expect(r).toMatchObject({ ok: true, item: { ...newOrder, _id: 'MG-000123' }, normalisations: { 'write-success-without-item': 1 } });
});
