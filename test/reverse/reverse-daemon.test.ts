import { createMemoryAdapter, MemoryAdapter } from '../../adapters/memory';
import type { Order, Product } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createDaemon, FAILURE_CODES, type DaemonEvent } from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';
import { KEY, startService, type RunningService } from './reverse-helpers';

/** A store that refuses some products (business check) and cannot write one order (adapter throws). */
class PickyStore extends MemoryAdapter {
  constructor(
    private readonly refuse: Set<string>,
    private readonly breakOrder: string,
  ) {
    super();
    const upsert = this.orders.upsert.bind(this.orders);
    this.orders.upsert = async (o, opts) => {
      if (o._id === this.breakOrder) throw new Error('connection reset by peer (db-internal-host:5432)');
      return upsert(o, opts);
    };
  }
  async checkProduct(p: Product): Promise<string[]> {
    return this.refuse.has(p._id) ? ['blank SKU', 'invalid business partner'] : [];
  }
  async checkOrder(_o: Order): Promise<string[]> {
    return [];
  }
}

const P = (url: string) => `${url}${REVERSE_BASE_PATH}/${KEY}`;

describe('the daemon against a real service', () => {
  let svc: RunningService;
  afterEach(async () => svc?.close());

  test('items the store rejects are reported failed with their reasons; the cycle continues', async () => {
    svc = await startService(12);
    const catalog = demoCatalog(12);
    const refused = new Set([catalog.products[2]._id, catalog.products[7]._id]);
    const store = new PickyStore(refused, catalog.orders[1]._id);
    for (const kind of ['products', 'orders'] as const) await svc.router.service.enqueue('shop', { kind: 'pull', entity: kind });
    await svc.router.service.enqueue('shop', { kind: 'push' });
    const report = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2 }).runOnce();
    expect(report).toMatchObject({ ok: true, pulled: { products: 10, orders: 2 }, failed: 3, pushed: { products: 10, orders: 2 } });
    const status = (await svc.router.service.status('shop'));
    expect(status.products).toMatchObject({ delivered: 12, succeeded: 10, failed: 2 });
    expect(status.orders).toMatchObject({ delivered: 3, succeeded: 2, failed: 1 });
    const byId = new Map(status.failures.map((f) => [f.id, f]));
    for (const id of refused) {
      expect(byId.get(id)).toMatchObject({
        entity: 'products',
        source: 'daemon',
        error: 'the store refused the product',
        reasons: [
          { message: 'blank SKU', code: FAILURE_CODES.REFUSED_BY_STORE },
          { message: 'invalid business partner', code: FAILURE_CODES.REFUSED_BY_STORE },
        ],
      });
    }
    const broken = byId.get(catalog.orders[1]._id)!;
    expect(broken).toMatchObject({ entity: 'orders', error: 'the store could not save the order', reasons: [{ code: FAILURE_CODES.STORE_FAILED }] });
    // The adapter's internals do not travel to the service.
    expect(JSON.stringify(broken)).not.toMatch(/db-internal-host|reset/);
    expect(await store.products.count()).toBe(10);
    for (const id of refused) expect(await store.products.get(id)).toBeUndefined();
  });

  test('a pulled item replaces the stored one but keeps what only the store form has', async () => {
    svc = await startService(0);
    const catalog = demoCatalog(40);
    const product = catalog.products.find((p) => p.properties && p.variations?.some((v) => v.variationid))!;
    const order = catalog.orders.find((o) => o.shipments?.length && o.buyer?.billingaddress)!;
    // The service's versions: newer titles and statuses, in the reverse form's fields only.
    const seed = { lastUpdated: 'keep' as const, now: 0, signal: AbortSignal.timeout(5000) };
    const { properties: _p, ...plainProduct } = product;
    await svc.store.products.upsert({ ...plainProduct, title: 'Renamed by the service', variations: plainProduct.variations!.map(({ variationid: _v, ...v }) => v), last_updated: product.last_updated! + 1 }, seed);
    const { shipments: _s, messages: _m, rating: _r, feedback: _f, ...plainOrder } = order;
    await svc.store.orders.upsert({ ...plainOrder, status: 'refunded', buyer: { ...plainOrder.buyer, billingaddress: undefined, shipmentaddress: undefined }, last_updated: order.last_updated! + 1 }, seed);
    const store = createMemoryAdapter({ products: [product], orders: [order] });
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'orders' });
    expect((await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2 }).runOnce()).pulled).toEqual({ products: 1, orders: 1 });
    const p = (await store.products.get(product._id))!;
    expect(p.title).toBe('Renamed by the service');
    expect(p.last_updated).toBe(product.last_updated! + 1);
    expect(p.properties).toEqual(product.properties);
    expect(p.variations!.map((v) => v.variationid)).toEqual(product.variations!.map((v) => v.variationid));
    const o = (await store.orders.get(order._id))!;
    expect(o.status).toBe('refunded');
    expect([o.shipments, o.rating, o.feedback, o.messages]).toEqual([order.shipments, order.rating, order.feedback, order.messages]);
    expect(o.buyer?.billingaddress).toEqual(order.buyer!.billingaddress);
  });

  test('a pull of chosen ids: an id the service no longer has is skipped and reported, the rest are pulled', async () => {
    svc = await startService(6);
    const ids = demoCatalog(6).products.map((p) => p._id);
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'products', ids: [ids[4], 'gone-42', ids[1], ids[4]] });
    const store = createMemoryAdapter();
    const report = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2 }).runOnce();
    expect(report).toMatchObject({ ok: true, pulled: { products: 2 }, errors: [] });
    expect(await store.products.count()).toBe(2);
    const status = (await svc.router.service.status('shop'));
    expect(status.products).toMatchObject({ delivered: 3, succeeded: 2, skipped: 1 });
    expect(status.failures).toEqual([expect.objectContaining({ id: 'gone-42', source: 'service', error: "the item is no longer in the service's store" })]);
  });

  test('two daemons racing on one connection: every item stored and acknowledged once, none lost', async () => {
    svc = await startService(20);
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'orders' });
    const store = createMemoryAdapter();
    const make = () => createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2, maxConsecutiveErrors: 50 });
    const reports = await Promise.all([make().runOnce(), make().runOnce()]);
    expect(reports.every((r) => r.ok)).toBe(true);
    const status = (await svc.router.service.status('shop'));
    expect(status.products).toMatchObject({ delivered: 20, succeeded: 20, failed: 0, skipped: 0 });
    expect(status.orders).toMatchObject({ delivered: 5, succeeded: 5, failed: 0 });
    expect(status.transactions.map((t) => t.kind)).toEqual(['pull', 'pull']);
    expect(await store.products.count()).toBe(20);
  });

  test('a wrong key ends runOnce at once with a 404 that does not repeat the key', async () => {
    svc = await startService(2);
    const wrong = 'not-the-key-5150';
    const report = await createDaemon({ serviceUrl: svc.url, connectionKey: wrong, adapter: createMemoryAdapter(), pollIntervalMs: 2 }).runOnce();
    expect(report.ok).toBe(false);
    expect(report.errors).toEqual(['GET {P}/ping answered HTTP 404: not found']);
  });

  test('a daemon that dies mid-item gets the same item after restart; nothing lost or doubled', async () => {
    svc = await startService(8);
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    const store = createMemoryAdapter();
    // Daemon 1 "dies" right after receiving its 4th item (it never stores or acknowledges it).
    let nexts = 0;
    let diedWith: string | undefined;
    const dying: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).endsWith('/next') && ++nexts === 4) {
        diedWith = ((await res.json()) as { product: Product }).product._id;
        throw new Error('killed');
      }
      return res;
    };
    const first = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2, fetch: dying, maxConsecutiveErrors: 1, retry: 0 }).runOnce();
    expect(first.ok).toBe(false);
    expect(first.pulled.products).toBe(3);
    expect((await svc.router.service.status('shop')).current).toMatchObject({ kind: 'pull', phase: 'leased', leasedId: diedWith, remaining: 5 });

    const events: DaemonEvent[] = [];
    const second = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2, onEvent: (e) => events.push(e) }).runOnce();
    expect(second).toMatchObject({ ok: true, pulled: { products: 5 }, errors: [] });
    expect(events.find((e) => e.type === 'item-stored')).toEqual({ type: 'item-stored', entity: 'products', id: diedWith });
    expect((await svc.router.service.status('shop')).products).toMatchObject({ delivered: 8, redelivered: 1, succeeded: 8, failed: 0 });
    expect(await store.products.count()).toBe(8);
  });

  test('a daemon that dies after its acknowledgement went out resumes at the next item, without a second acknowledgement', async () => {
    svc = await startService(5);
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    const store = createMemoryAdapter();
    let acks = 0;
    const dying: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (String(input).endsWith('/succeded') && ++acks === 2) throw new Error('killed before reading the reply');
      return res;
    };
    expect((await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2, fetch: dying, maxConsecutiveErrors: 1, retry: 0 }).runOnce()).ok).toBe(false);
    expect((await svc.router.service.status('shop')).current).toMatchObject({ phase: 'acked', remaining: 3 });
    const second = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2 }).runOnce();
    expect(second).toMatchObject({ ok: true, pulled: { products: 3 }, errors: [] });
    expect((await svc.router.service.status('shop')).products).toMatchObject({ delivered: 5, redelivered: 0, succeeded: 5 });
  });

  test('lease expiry: an item handed out and never acknowledged is handed out again, once', async () => {
    const clock = { now: 1_000_000 };
    svc = await startService(3, { leaseMs: 60_000, now: () => clock.now });
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    const base = P(svc.url);
    await fetch(`${base}/pull/initialize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const first = ((await (await fetch(`${base}/pull/products/next`)).json()) as { product: Product }).product._id;
    expect((await svc.router.service.status('shop')).current).toMatchObject({ leasedId: first, leaseExpired: false });
    expect(await (await fetch(`${base}/pull/products/readyfornext`)).json()).toEqual({ ready: false });
    clock.now += 60_000;
    expect((await svc.router.service.status('shop')).current).toMatchObject({ leasedId: first, leaseExpired: true });
    // After expiry the item is back at the head: readyfornext is true, hasmore ready, next hands out the same item.
    expect(await (await fetch(`${base}/pull/products/readyfornext`)).json()).toEqual({ ready: true });
    expect(await (await fetch(`${base}/pull/products/hasmore`)).json()).toEqual({ hasmore: 'ready' });
    const again = ((await (await fetch(`${base}/pull/products/next`)).json()) as { product: Product }).product;
    expect(again._id).toBe(first);
    // Two acknowledgements of it arrive (the first holder's, late, and the second's): the first is
    // accepted, the repeat is answered as a duplicate and not counted; the other outcome is a 409.
    const ack = (outcome: string, body: unknown) =>
      fetch(`${base}/pull/products/${encodeURIComponent(first)}/${outcome}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const accepted = await ack('succeded', { product: again });
    expect([accepted.status, await accepted.json()]).toEqual([200, { ok: true }]);
    const repeat = await ack('succeded', { product: again });
    expect([repeat.status, await repeat.json()]).toEqual([200, { ok: true, duplicate: true }]);
    expect((await ack('failed', { error: 'late', reasons: [] })).status).toBe(409);
    const store = createMemoryAdapter();
    const report = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2 }).runOnce();
    expect(report.pulled.products).toBe(2);
    expect((await svc.router.service.status('shop')).products).toMatchObject({ delivered: 3, redelivered: 1, succeeded: 3, failed: 0 });
    // Once the transaction is over, any acknowledgement is out of order.
    expect((await ack('succeded', { product: again })).status).toBe(409);
  });

  test('start() works while there is work and stop() stops between items; a later run resumes', async () => {
    svc = await startService(10);
    await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    const store = createMemoryAdapter();
    let stored = 0;
    let stopping: Promise<void> | undefined;
    const daemon = createDaemon({
      serviceUrl: svc.url,
      connectionKey: KEY,
      adapter: store,
      pollIntervalMs: 2,
      onEvent: (e) => {
        if (e.type === 'item-stored' && ++stored === 4) stopping = daemon.stop();
      },
    });
    daemon.start();
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (stopping) {
          clearInterval(t);
          resolve();
        }
      }, 2);
    });
    await stopping;
    const mid = (await svc.router.service.status('shop'));
    expect(mid.connectionstatus).toBe('initialized');
    expect(mid.products.succeeded).toBe(4);
    expect(mid.current).toMatchObject({ phase: 'ready', remaining: 6 }); // the 4th item was acknowledged and closed
    const rest = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2 }).runOnce();
    expect(rest.pulled.products).toBe(6);
    expect((await svc.router.service.status('shop')).products).toMatchObject({ delivered: 10, redelivered: 0, succeeded: 10 });
  });

  test('push pages keep within the byte budget; a push interrupted between pages resumes', async () => {
    svc = await startService(0);
    const store = createMemoryAdapter(demoCatalog(30));
    await svc.router.service.enqueue('shop', { kind: 'push' });
    const pages: number[] = [];
    let posts = 0;
    const dying: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/push/products') && ++posts === 3) throw new Error('network down');
      return fetch(input, init);
    };
    const budget = 8_000;
    const first = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2, maxPageBytes: budget, fetch: dying, maxConsecutiveErrors: 1, retry: 0 }).runOnce();
    expect(first.ok).toBe(false);
    const second = await createDaemon({
      serviceUrl: svc.url,
      connectionKey: KEY,
      adapter: store,
      pollIntervalMs: 2,
      maxPageBytes: budget,
      onEvent: (e) => void (e.type === 'page-pushed' && pages.push(e.bytes)),
    }).runOnce();
    expect(second.ok).toBe(true);
    expect(pages.length).toBeGreaterThan(3);
    expect(Math.max(...pages)).toBeLessThanOrEqual(budget);
    expect((await svc.router.service.status('shop')).products.received).toBe(30);
    expect(await svc.store.products.count()).toBe(30);
  });
});
