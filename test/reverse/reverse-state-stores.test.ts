/**
 * The reverse service's state stores on the real databases: the SQL table beside the adapter's
 * (SQLite, PostgreSQL, MariaDB) and Redis. Each must read back what it wrote, apply a batch in
 * order and atomically (a batch that fails mid-way leaves nothing), and carry a service through a
 * restart: a pull half done by one service is finished by a new one on the same store, every item
 * handed out once and acknowledged once.
 */
import { Redis } from 'ioredis';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryAdapter } from '../../adapters/memory';
import { createSqlAdapter, createSqlReverseStateStore, dropSqlReverseState, type SqlAdapter } from '../../adapters/sql';
import { demoCatalog } from '../../lib/demo';
import { createRedisStateStore, createReverseService, type ReverseService, type ReverseStateStore } from '../../lib/reverse';
import { describeDatabase, dropAndClose, isolatedAdapter, sharedDatabase, uniquePrefix, type ServerKind } from '../adapters/sql-databases';
import { describeRedis, REDIS_URL, uniqueRedisPrefix } from '../sync/bullmq-helpers';

const KEY = 'state-key-1';
const CATALOG = demoCatalog(12);
const NAME = 'shop ü/1 🛒'; // a name that needs encoding in keys

function serviceOn(state: ReverseStateStore): ReverseService {
  return createReverseService({ adapter: createMemoryAdapter(CATALOG), connections: [{ key: KEY, name: NAME }], stateStore: state });
}

const call = (s: ReverseService, method: string, path: string, body?: unknown) => s.handle({ method, key: KEY, path, body });

/** Takes `n` items of the current pull entity through next → succeded → readyfornext. */
async function pullSome(s: ReverseService, entity: 'products' | 'orders', n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const next = await call(s, 'GET', `/pull/${entity}/next`);
    const item = next.body[entity === 'products' ? 'product' : 'order'] as { _id: string };
    expect((await call(s, 'POST', `/pull/${entity}/${encodeURIComponent(item._id)}/succeded`, { [entity === 'products' ? 'product' : 'order']: { ...item, _id: `erp-${item._id}` } })).body).toEqual({ ok: true });
    expect((await call(s, 'GET', `/pull/${entity}/readyfornext`)).body).toEqual({ ready: true });
  }
}

/** The identity test's own connection (the suite's store is shared by its tests). */
const ERP_NAME = 'erp ü/2';

/** A click2sync service on the store whose store (the service's items) outlives it too. */
function erpServiceOn(state: ReverseStateStore, store: ReturnType<typeof createMemoryAdapter>): ReverseService {
  return createReverseService({ adapter: store, connections: [{ key: KEY, name: ERP_NAME, dialect: 'click2sync' }], stateStore: state, keepMappings: 1, maxCallsPerSecond: 0 });
}

/** Runs a pull of every order; the ERP answers with its own ids (`erp-<orderid>`); returns what was handed out. */
async function pullOrdersAsErp(s: ReverseService): Promise<Array<Record<string, any>>> {
  await s.enqueue(ERP_NAME, { kind: 'pull', entity: 'orders' });
  if ((await call(s, 'GET', '/upstreamstatus')).body.upstreamstatus === 'finished') await call(s, 'GET', '/upstreamstatus');
  expect((await call(s, 'POST', '/pull/initialize', {})).status).toBe(200);
  const out: Array<Record<string, any>> = [];
  while ((await call(s, 'GET', '/pull/orders/hasmore')).body.hasmore === 'ready') {
    const order = (await call(s, 'GET', '/pull/orders/next')).body.order as Record<string, any>;
    out.push(order);
    expect((await call(s, 'POST', `/pull/orders/${order.orderid}/succeded`, { order: { ...order, _id: `erp-${order.orderid}` } })).body).toMatchObject({ ok: true });
    await call(s, 'GET', '/pull/orders/readyfornext');
  }
  await call(s, 'POST', '/pull/orders/finish', {});
  expect((await call(s, 'POST', '/pull/finish', {})).body).toEqual({ ok: true });
  return out;
}

function stateStoreSuite(make: () => Promise<ReverseStateStore>, failingBatch?: (key: string) => { key: string; value: string | null }): void {
  test('the identity map lives in the store: a restarted service hands orders out under the ERP ids, a push under them lands on the same orders, buyer ids come back', async () => {
    const items = createMemoryAdapter(structuredClone(CATALOG));
    const first = erpServiceOn(await make(), items);
    const pulled = await pullOrdersAsErp(first);
    expect(pulled.every((o) => Number.isSafeInteger(o.buyer.id))).toBe(true);
    await first.close();
    const second = erpServiceOn(await make(), items);
    const again = await pullOrdersAsErp(second);
    expect(again.map((o) => o._id).sort()).toEqual(CATALOG.orders.map((o) => `erp-${o.orderid}`).sort());
    expect(again.map((o) => o.buyer.id)).toEqual(pulled.map((o) => o.buyer.id));
    expect((await second.status(ERP_NAME)).idMap).toHaveLength(1); // the view shows the latest; the map kept all
    await second.close();
    const third = erpServiceOn(await make(), items);
    await third.enqueue(ERP_NAME, { kind: 'push' });
    if ((await call(third, 'GET', '/upstreamstatus')).body.upstreamstatus === 'finished') await call(third, 'GET', '/upstreamstatus');
    await call(third, 'POST', '/push/initialize', {});
    await call(third, 'POST', '/push/products', { products: [] });
    await call(third, 'POST', '/push/products/finish', {});
    expect((await call(third, 'POST', '/push/orders', { orders: again.map((o) => ({ ...o, status: 'closed' })) })).body).toEqual({ received: CATALOG.orders.length });
    const stored = (await items.orders.list({ sortorder: 'asc', limit: 100, signal: AbortSignal.timeout(1000) })).map((x) => JSON.parse(x.json));
    expect(stored.map((o) => o._id).sort()).toEqual(CATALOG.orders.map((o) => o._id).sort());
    expect(stored.every((o) => o.status === 'closed')).toBe(true);
    expect(stored.map((o) => o.buyer?.id).sort()).toEqual(CATALOG.orders.map((o) => o.buyer?.id).sort());
    await third.close();
  });

  test('reads back what it wrote; a batch applies in order', async () => {
    const store = await make();
    expect((await store.read(['a', 'b'])).size).toBe(0);
    await store.write([
      { key: 'a', value: '1' },
      { key: 'b', value: '{"x":"ü 🛒"}' },
      { key: 'a', value: '2' },
      { key: 'c', value: 'gone soon' },
      { key: 'c', value: null },
    ]);
    expect(Object.fromEntries(await store.read(['a', 'b', 'c', 'd']))).toEqual({ a: '2', b: '{"x":"ü 🛒"}' });
    await store.write([{ key: 'b', value: null }]);
    expect([...(await store.read(['a', 'b'])).keys()]).toEqual(['a']);
    const many = Array.from({ length: 1200 }, (_, i) => ({ key: `k${i}`, value: String(i) }));
    await store.write(many);
    expect((await store.read(many.map((m) => m.key))).size).toBe(1200);
  });

  if (failingBatch) {
    test('a batch that fails mid-way leaves nothing of it', async () => {
      const store = await make();
      await store.write([{ key: 'kept', value: 'before' }]);
      await expect(store.write([{ key: 'kept', value: 'after' }, { key: 'new', value: 'x' }, failingBatch('bad')])).rejects.toThrow();
      expect(Object.fromEntries(await store.read(['kept', 'new', 'bad']))).toEqual({ kept: 'before' });
    });
  }

  test('a service restarted on the store finishes the pull where the first one stopped', async () => {
    const first = serviceOn(await make());
    await first.enqueue(NAME, { kind: 'pull' });
    await first.enqueue(NAME, { kind: 'push', full: true });
    expect((await call(first, 'POST', '/pull/initialize', {})).status).toBe(200);
    await pullSome(first, 'products', 5);
    await call(first, 'GET', '/pull/products/next'); // handed out, not acknowledged: the restart comes here
    await first.close();

    const second = serviceOn(await make());
    const view = await second.status(NAME);
    expect(view.current).toMatchObject({ kind: 'pull', entity: 'products', phase: 'leased', remaining: CATALOG.products.length - 5 });
    expect(view.idMap).toHaveLength(5);
    expect(view.queue).toEqual([{ kind: 'push', full: true }]);
    expect((await call(second, 'GET', '/pull/products/hasmore')).body).toEqual({ hasmore: 'ready' });
    await pullSome(second, 'products', CATALOG.products.length - 5);
    expect((await call(second, 'POST', '/pull/products/finish', {})).body).toEqual({ ok: true });
    expect((await call(second, 'GET', '/entity')).body).toEqual({ entity: 'orders' });
    await second.close();

    const third = serviceOn(await make());
    await pullSome(third, 'orders', CATALOG.orders.length);
    await call(third, 'POST', '/pull/orders/finish', {});
    expect((await call(third, 'POST', '/pull/finish', {})).body).toEqual({ ok: true });
    const done = await third.status(NAME);
    expect(done.products).toMatchObject({ delivered: CATALOG.products.length, redelivered: 1, succeeded: CATALOG.products.length, mapped: CATALOG.products.length });
    expect(done.orders).toMatchObject({ delivered: CATALOG.orders.length, succeeded: CATALOG.orders.length });
    expect(done.idMap).toHaveLength(CATALOG.products.length + CATALOG.orders.length);
    expect(done.transactions).toEqual([expect.objectContaining({ kind: 'pull', outcome: 'finished', items: { products: CATALOG.products.length, orders: CATALOG.orders.length } })]);
    expect(done.mode).toBe('push');
    await third.close();
  });
}

describe('SQLite state store', () => {
  // One database file; every make() opens it anew, as a restarted service does.
  const path = join(tmpdir(), `sb-state-${process.pid}-${uniquePrefix()}.db`);
  const adapters: SqlAdapter[] = [];
  afterAll(async () => {
    for (const a of adapters) await a.close();
    rmSync(path, { force: true });
  });
  stateStoreSuite(async () => {
    const a = await createSqlAdapter({ connection: `sqlite:${path}` });
    adapters.push(a);
    return createSqlReverseStateStore(a);
  });
});

for (const kind of ['postgres', 'mysql'] as ServerKind[]) {
  describeDatabase(kind, `${kind} state store`, () => {
    const shared = sharedDatabase(kind);
    let adapter: SqlAdapter;
    beforeAll(async () => {
      adapter = await isolatedAdapter(shared.db());
    });
    afterAll(async () => {
      await dropSqlReverseState(adapter);
      await dropAndClose(adapter);
      await shared.close();
    });
    // PostgreSQL refuses a NUL in text; MariaDB a key longer than its column: either fails the batch mid-way.
    stateStoreSuite(
      () => createSqlReverseStateStore(adapter),
      (key) => (kind === 'postgres' ? { key, value: 'a\u0000b' } : { key: `${key}${'x'.repeat(2000)}`, value: 'x' }),
    );
  });
}

describeRedis('Redis state store', () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
  const prefix = `${uniqueRedisPrefix()}:`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });
  stateStoreSuite(async () => createRedisStateStore(redis, { prefix }));
});
