/**
 * The write core on a real database (SQLite through the SQL adapter): the rules that depend on the
 * adapter's atomic upsert and SKU lookup hold there too, not only in memory.
 */
import { openSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import { guardAdapter, type GuardedAdapter } from '../../lib/adapter-guard';
import { demoCatalog } from '../../lib/demo';
import { ORDER_STATUSES, type Order } from '../../lib/contract/webhook';
import { handleWrite, type WriteConfig } from '../../lib/server/write-core';

const signal = new AbortController().signal;
const catalog = demoCatalog(30);
let sql: SqlAdapter;
let adapter: GuardedAdapter;
let clock = 1_800_000_000_000;
const config: WriteConfig = { allowedOrderStatuses: new Set(ORDER_STATUSES), now: () => clock };

beforeAll(async () => {
  sql = await openSqlAdapter('sqlite::memory:');
  adapter = guardAdapter(sql);
  for (const p of catalog.products) await adapter.products.upsert(p, { lastUpdated: 'keep', now: 0, signal });
});
afterAll(() => sql.close());

const body = (i: number): Omit<Order, '_id'> => ({
  orderid: `#${i}`,
  status: ORDER_STATUSES[i % ORDER_STATUSES.length],
  orderItems: [{ id: catalog.products[i % 30].sku!, quantity: 1 + (i % 3) }, { id: catalog.products[(i + 1) % 30]._id, quantity: 1 }],
});

// One signal per request, as the router gives.
const write = (id: string, b: unknown) => handleWrite(adapter, 'orders', { jobid: '1', id }, b, config, new AbortController().signal);

describe('handleWrite on SQLite', () => {
  it('stores, answers what get returns, and an identical repeat changes nothing', async () => {
    const first = await write('sq-1', body(1));
    expect(first.status).toBe(200);
    expect((first.body as { order: Order }).order).toEqual(await adapter.orders.get('sq-1', { signal }));
    clock += 10_000;
    expect(await write('sq-1', body(1))).toEqual(first);
    clock -= 50_000;
    const changed = await write('sq-1', body(2));
    expect((changed.body as { order: Order }).order.last_updated).toBe(1_800_000_000_001);
  });

  it('resolves items by SKU through the adapter and refuses unknown ones, storing nothing', async () => {
    const res = await write('sq-2', { orderItems: [{ id: 'SKU-NOPE', quantity: 1 }] });
    expect((res.body as { reasons: unknown }).reasons).toMatchObject([{ msg: 'orderItems.0.id: no product has the _id or SKU "SKU-NOPE"', message: 'orderItems.0.id: no product has the _id or SKU "SKU-NOPE"', code: 400 }]);
    expect(await adapter.orders.get('sq-2', { signal })).toBeUndefined();
  });

  it('concurrent writes of different bodies to one order leave exactly one of them', async () => {
    // Order numbers of their own: sq-1 holds "#2" (an orderid names one order).
    const bodies = Array.from({ length: 30 }, (_, i) => ({ ...body(i), orderid: `#sq3-${i}` }));
    const results = await Promise.all(bodies.map((b) => write('sq-3', b)));
    expect(results.map((r) => r.status)).toEqual(bodies.map(() => 200));
    const { last_updated, ...content } = (await adapter.orders.get('sq-3', { signal }))!;
    expect(last_updated).toBeGreaterThan(0);
    expect(bodies.map((b) => ({ ...b, _id: 'sq-3' }))).toContainEqual(content);
    const all = await adapter.orders.list({ sortorder: 'asc', limit: 1000, signal });
    expect(all.filter((x) => x._id === 'sq-3')).toHaveLength(1);
  });
});
