/**
 * The reverse service's identity map and its defences, through the framework-agnostic `handle()`
 * (what every binding calls), under the `click2sync` dialect:
 *
 * - a pulled item the store (the ERP) stored under its own id goes out under that id from then on,
 *   acknowledged by either id; a push under that id lands on the service's item (never a second);
 *   a pushed product under its SKU lands on the product with that SKU; the map is never trimmed and
 *   outlives the service;
 * - buyer ids always go out as JSON integers and come back as what they were; every order carries
 *   `otherids`; lines name products as the store knows them;
 * - an item handed out `maxDeliveries` times without an acknowledgement is given up (code 1004);
 * - `upstreamstatus` says `finished` once after a finish, even with the next transaction queued;
 * - push pages are bounded (items, refused list).
 */
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { isMappedBuyerId, MAPPED_BUYER_ID_MIN, type Order } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createMemoryStateStore, createReverseService, type ReverseService, type ReverseServiceOptions, type ReverseStateStore } from '../../lib/reverse';

const KEY = 'identity-key';
const CATALOG = demoCatalog(8); // 8 products, 2 orders

type Json = Record<string, any>;

function make(options: Partial<ReverseServiceOptions> & { store?: MemoryAdapter; state?: ReverseStateStore } = {}) {
  const store = options.store ?? createMemoryAdapter(structuredClone(CATALOG));
  const state = options.state ?? createMemoryStateStore();
  const { store: _s, state: _t, ...rest } = options;
  const service = createReverseService({ adapter: store, connections: [{ key: KEY, name: 'erp', dialect: 'click2sync' }], stateStore: state, maxCallsPerSecond: 0, ...rest });
  const call = async (method: string, path: string, body?: unknown) => (await service.handle({ method, key: KEY, path, body })) as { status: number; body: Json };
  return { service, store, state, call };
}

type Svc = ReturnType<typeof make>;

async function startPull(s: Svc, entity: 'products' | 'orders', ids?: string[]): Promise<void> {
  await s.service.enqueue('erp', { kind: 'pull', entity, ...(ids ? { ids } : {}) });
  let status = (await s.call('GET', '/upstreamstatus')).body.upstreamstatus;
  if (status === 'finished') status = (await s.call('GET', '/upstreamstatus')).body.upstreamstatus;
  expect(status).toBe('waiting');
  expect((await s.call('POST', '/pull/initialize', {})).status).toBe(200);
}

/** next → succeded (the store's reply built by `stored`) → readyfornext, for every item of the entity; returns what was handed out. */
async function pullAll(s: Svc, entity: 'products' | 'orders', stored: (item: Json) => Json | null): Promise<Json[]> {
  const noun = entity === 'products' ? 'product' : 'order';
  const out: Json[] = [];
  while ((await s.call('GET', `/pull/${entity}/hasmore`)).body.hasmore === 'ready') {
    const item = (await s.call('GET', `/pull/${entity}/next`)).body[noun];
    out.push(item);
    const pathId = entity === 'products' ? item.sku : item.orderid;
    expect((await s.call('POST', `/pull/${entity}/${pathId}/succeded`, { [noun]: stored(item) })).body).toMatchObject({ ok: true });
    expect((await s.call('GET', `/pull/${entity}/readyfornext`)).body).toEqual({ ready: true });
  }
  expect((await s.call('POST', `/pull/${entity}/finish`, {})).status).toBe(200);
  expect((await s.call('POST', '/pull/finish', {})).body).toEqual({ ok: true });
  return out;
}

async function push(s: Svc, pages: { products?: Json[]; orders?: Json[] }): Promise<Json[]> {
  await s.service.enqueue('erp', { kind: 'push' });
  if ((await s.call('GET', '/upstreamstatus')).body.upstreamstatus === 'finished') await s.call('GET', '/upstreamstatus');
  expect((await s.call('POST', '/push/initialize', {})).status).toBe(200);
  const replies: Json[] = [];
  for (const entity of ['products', 'orders'] as const) {
    replies.push((await s.call('POST', `/push/${entity}`, { [entity]: pages[entity] ?? [] })).body);
    await s.call('POST', `/push/${entity}/finish`, {});
  }
  expect((await s.call('POST', '/push/finish', {})).body).toEqual({ ok: true });
  return replies;
}

const erpNumber = (i: number) => String(5011 + i);

describe('the identity map, read both ways', () => {
  test('an order the ERP stored under its own number goes out under it from then on, acknowledged by either id; no second mapping', async () => {
    const s = make();
    await startPull(s, 'orders');
    const first = await pullAll(s, 'orders', (o) => ({ ...o, _id: erpNumber(CATALOG.orders.findIndex((c) => c.orderid === o.orderid)), orderid: 'ignored' }));
    expect(first.map((o) => o._id).sort()).toEqual(CATALOG.orders.map((o) => o._id).sort());
    await startPull(s, 'orders');
    const again = await pullAll(s, 'orders', (o) => o); // the ERP updates: its reply names its own number
    expect(again.map((o) => o._id).sort()).toEqual(CATALOG.orders.map((_, i) => erpNumber(i)).sort());
    expect(again.map((o) => o.orderid).sort()).toEqual(CATALOG.orders.map((o) => o.orderid).sort()); // the store's number stays
    const status = await s.service.status('erp');
    expect(status.orders).toMatchObject({ succeeded: 4, mapped: 2 });
    expect(status.idMap.map((m) => [m.pulledId, m.storeId]).sort()).toEqual(CATALOG.orders.map((o, i) => [o._id, erpNumber(i)]).sort());

    // An acknowledgement by the ERP's number, by the service's id, by the order number: each names the item out.
    for (const pathOf of [(o: Json) => o._id, (o: Json) => CATALOG.orders.find((c) => c.orderid === o.orderid)!._id, (o: Json) => o.orderid]) {
      await startPull(s, 'orders', [CATALOG.orders[0]._id]);
      const item = (await s.call('GET', '/pull/orders/next')).body.order;
      expect(item._id).toBe(erpNumber(0));
      expect((await s.call('POST', `/pull/orders/${encodeURIComponent(pathOf(item))}/succeded`, { order: item })).body).toEqual({ ok: true });
      await s.call('GET', '/pull/orders/readyfornext');
      await s.call('POST', '/pull/orders/finish', {});
      await s.call('POST', '/pull/finish', {});
    }
  });

  test('a push under a mapped ERP id updates the service\'s item (keeping its order number); an unmapped one is new; a product under its SKU is the product with that SKU', async () => {
    const s = make();
    await startPull(s, 'orders');
    await pullAll(s, 'orders', (o) => ({ ...o, _id: erpNumber(CATALOG.orders.findIndex((c) => c.orderid === o.orderid)) }));
    const erpOrder = (id: string, orderid: string): Json => ({ _id: id, orderid, status: 'closed', last_updated: '1767225600000 - 1', orderItems: [{ id: CATALOG.products[0].sku, quantity: 1, unitPrice: 10 }], buyer: { id: 'C20001' } });
    const erpProduct = { _id: CATALOG.products[2].sku, sku: CATALOG.products[2].sku, title: 'as the ERP has it', last_updated: '1767225600000 - 2' };
    const replies = await push(s, { products: [erpProduct], orders: [erpOrder(erpNumber(0), erpNumber(0)), erpOrder('5001', '5001')] });
    expect(replies).toEqual([{ received: 1 }, { received: 2 }]);
    const orders = (await s.store.orders.list({ sortorder: 'asc', limit: 100, signal: AbortSignal.timeout(1000) })).map((x) => JSON.parse(x.json) as Order);
    expect(orders.map((o) => o._id).sort()).toEqual([...CATALOG.orders.map((o) => o._id), '5001'].sort());
    const updated = orders.find((o) => o._id === CATALOG.orders[0]._id)!;
    expect(updated).toMatchObject({ status: 'closed', orderid: CATALOG.orders[0].orderid, buyer: { id: 'C20001' } });
    const products = await s.store.products.list({ sortorder: 'asc', limit: 100, signal: AbortSignal.timeout(1000) });
    expect(products).toHaveLength(CATALOG.products.length);
    expect((await s.store.products.get(CATALOG.products[2]._id, { signal: AbortSignal.timeout(1000) }))?.title).toBe('as the ERP has it');
    // Linked: the product goes out under the ERP's id from then on.
    await startPull(s, 'products', [CATALOG.products[2]._id]);
    expect((await s.call('GET', '/pull/products/next')).body.product._id).toBe(CATALOG.products[2].sku);
  });

  test('buyer ids always go out as JSON integers and come back as they were; every order has otherids; lines name products by the ERP\'s id, else the SKU', async () => {
    const catalog = structuredClone(CATALOG);
    const [a, b] = catalog.orders;
    a.buyer = { ...a.buyer, id: 'buyer-00042' };
    b.buyer = undefined;
    a.orderItems = [{ id: catalog.products[1]._id, quantity: 1, unitPrice: 1.5 }, { id: catalog.products[3].sku, quantity: 2, unitPrice: 2 }, { id: 'shipping', quantity: 1, unitPrice: 9 }];
    const s = make({ store: createMemoryAdapter(catalog) });
    // The ERP stored product 3 under its own code first.
    await startPull(s, 'products', [catalog.products[3]._id]);
    await pullAll(s, 'products', (p) => ({ ...p, _id: 'ITEM-0003' }));
    await startPull(s, 'orders');
    const out = await pullAll(s, 'orders', () => null);
    const byNumber = new Map(out.map((o) => [o.otherids[0].id, o]));
    const pa = byNumber.get(a.orderid)!;
    const pb = byNumber.get(b.orderid)!;
    expect(Number.isSafeInteger(pa.buyer.id) && isMappedBuyerId(pa.buyer.id)).toBe(true);
    expect(Number.isSafeInteger(pb.buyer.id) && pb.buyer.id >= MAPPED_BUYER_ID_MIN).toBe(true); // no buyer: one with the integer of ""
    expect(pa.otherids).toEqual([{ connectionid: 'erp', id: a.orderid, connectiontype: 'storebridge' }]);
    expect(pa.orderItems.map((l: Json) => l.id)).toEqual([catalog.products[1].sku, 'ITEM-0003', 'shipping']);
    // The same integer on the next pull.
    await startPull(s, 'orders', [a._id]);
    expect((await s.call('GET', '/pull/orders/next')).body.order.buyer.id).toBe(pa.buyer.id);
    await s.call('POST', `/pull/orders/${a.orderid}/failed`, { error: 'x', reasons: [] });
    await s.call('GET', '/pull/orders/readyfornext');
    await s.call('POST', '/pull/orders/finish', {});
    await s.call('POST', '/pull/finish', {});
    // Pushed back as the ERP sent them: the buyer ids are what they were, the product codes the service's.
    await push(s, { orders: [pa, pb] });
    const back = (id: string) => s.store.orders.get(id, { signal: AbortSignal.timeout(1000) });
    expect((await back(a._id))?.buyer?.id).toBe('buyer-00042');
    expect((await back(a._id))?.orderItems?.map((l) => l.id)).toEqual([catalog.products[1].sku, catalog.products[3]._id, 'shipping']);
    expect((await back(b._id))?.buyer).toBeUndefined();
  });

  test('the map keeps every link (keepMappings only trims the status view) and outlives the service', async () => {
    const state = createMemoryStateStore();
    const first = make({ state, keepMappings: 1 });
    await startPull(first, 'products');
    await pullAll(first, 'products', (p) => ({ ...p, _id: `ERP-${p.sku}` }));
    expect((await first.service.status('erp')).idMap).toHaveLength(1);
    await first.service.close();
    const second = make({ state, store: first.store, keepMappings: 1 });
    await startPull(second, 'products');
    const out = await pullAll(second, 'products', (p) => p);
    expect(out.map((p) => p._id).sort()).toEqual(CATALOG.products.map((p) => `ERP-${p.sku}`).sort());
    expect((await second.service.status('erp')).products.mapped).toBe(CATALOG.products.length);
  });
});

describe('a daemon that never acknowledges an item', () => {
  test('after maxDeliveries deliveries the service records it failed (1004) and the pull moves on; a late failed is a duplicate', async () => {
    const s = make({ maxDeliveries: 3 });
    await startPull(s, 'orders');
    const stuck = (await s.call('GET', '/pull/orders/next')).body.order;
    // The daemon crashes on it and starts again: hasmore, next, again and again.
    for (let i = 0; i < 2; i++) {
      expect((await s.call('GET', '/pull/orders/hasmore')).body).toEqual({ hasmore: 'ready' });
      expect((await s.call('GET', '/pull/orders/next')).body.order.orderid).toBe(stuck.orderid);
    }
    expect((await s.call('GET', '/pull/orders/hasmore')).body).toEqual({ hasmore: 'ready' });
    const after = (await s.call('GET', '/pull/orders/next')).body.order;
    expect(after.orderid).not.toBe(stuck.orderid);
    expect((await s.call('POST', `/pull/orders/${stuck.orderid}/failed`, { error: 'late', reasons: [] })).body).toEqual({ ok: true, duplicate: true });
    expect((await s.call('POST', `/pull/orders/${after.orderid}/succeded`, { order: after })).body).toEqual({ ok: true });
    const status = await s.service.status('erp');
    expect(status.orders).toMatchObject({ delivered: 2, redelivered: 2, failed: 1, unacknowledged: 1, succeeded: 1 });
    expect(status.failures).toEqual([
      expect.objectContaining({ entity: 'orders', id: CATALOG.orders.find((o) => o.orderid === stuck.orderid)!._id, source: 'service', error: 'not acknowledged after 3 deliveries', reasons: [{ message: 'not acknowledged after 3 deliveries', code: 1004 }] }),
    ]);
  });

  test('the last item given up: hasmore says done at once', async () => {
    const s = make({ maxDeliveries: 1 });
    await startPull(s, 'orders', [CATALOG.orders[0]._id]);
    await s.call('GET', '/pull/orders/next');
    expect((await s.call('GET', '/pull/orders/hasmore')).body).toEqual({ hasmore: 'done' });
    expect((await s.call('POST', '/pull/orders/finish', {})).body).toEqual({ ok: true });
  });
});

test('upstreamstatus says finished once after a finish, even with the next transaction queued; then waiting', async () => {
  const s = make();
  await s.service.enqueue('erp', { kind: 'pull', entity: 'orders' });
  await s.service.enqueue('erp', { kind: 'push' });
  await s.call('POST', '/pull/initialize', {});
  await pullAll(s, 'orders', (o) => o);
  expect((await s.service.status('erp')).connectionstatus).toBe('finished'); // the status view does not read it away
  expect((await s.call('GET', '/upstreamstatus')).body).toEqual({ upstreamstatus: 'finished', connectionstatus: 'finished' });
  expect((await s.call('GET', '/upstreamstatus')).body.upstreamstatus).toBe('waiting');
  expect((await s.call('GET', '/ping')).body).toEqual({ connectionstatus: 'fetchingremote' });
  // A daemon that initializes without reading it (the C++ push does not) is not refused.
  await s.service.enqueue('erp', { kind: 'pull', entity: 'orders' });
  await s.call('POST', '/push/initialize', {});
  for (const e of ['products', 'orders']) await s.call('POST', `/push/${e}/finish`, {});
  await s.call('POST', '/push/finish', {});
  expect((await s.call('POST', '/pull/initialize', {})).body).toEqual({ upstreamstatus: 'initialized', connectionstatus: 'initialized' });
});

describe('push pages are bounded', () => {
  test('a page of more than maxPushPageItems items is refused whole (413) before any item is read; nothing stored', async () => {
    const s = make({ maxPushPageItems: 50, store: createMemoryAdapter() });
    await s.service.enqueue('erp', { kind: 'push' });
    await s.call('POST', '/push/initialize', {});
    const res = await s.call('POST', '/push/products', { products: Array.from({ length: 51 }, (_, i) => ({ _id: `p${i}` })) });
    expect(res).toEqual({ status: 413, body: { error: expect.stringMatching(/at most 50 products; this one has 51/) } });
    expect(await s.store.products.count({ signal: AbortSignal.timeout(1000) })).toBe(0);
    expect((await s.service.status('erp')).products).toMatchObject({ received: 0, refused: 0 });
  });

  test('refused items: all counted, the first maxRefusedListed listed and recorded', async () => {
    const s = make({ maxRefusedListed: 3, store: createMemoryAdapter() });
    await s.service.enqueue('erp', { kind: 'push' });
    await s.call('POST', '/push/initialize', {});
    const res = await s.call('POST', '/push/products', { products: [...Array(30).fill(0), { _id: 'ok-1', sku: 'OK-1' }] });
    expect(res.body).toEqual({ received: 1, refused: [0, 1, 2].map((index) => ({ index, id: `#${index}`, error: expect.any(String) })), refusedCount: 30 });
    const status = await s.service.status('erp');
    expect(status.products).toMatchObject({ received: 1, refused: 30 });
    expect(status.failures).toHaveLength(3);
  });
});
