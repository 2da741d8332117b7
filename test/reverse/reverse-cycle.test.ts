import { createMemoryAdapter } from '../../adapters/memory';
import { CONVERTERS } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createDaemon, type DaemonEvent } from '../../lib/reverse';
import { allItems, KEY, startService, type RunningService } from './reverse-helpers';

describe('daemon ⇄ service, in-process on loopback', () => {
  let svc: RunningService;
  afterEach(async () => svc?.close());

  test('pull products and orders into an empty store, push them back, sample push', async () => {
    svc = await startService(40);
    const catalog = demoCatalog(40);
    const service = svc.router.service;
    await service.enqueue('shop', { kind: 'pull', entity: 'products' });
    await service.enqueue('shop', { kind: 'pull', entity: 'orders' });
    await service.enqueue('shop', { kind: 'push' });
    await service.enqueue('shop', { kind: 'pingsample' });
    const store = createMemoryAdapter();
    const events: DaemonEvent[] = [];
    const daemon = createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2, onEvent: (e) => events.push(e) });
    const report = await daemon.runOnce();

    expect(report).toMatchObject({
      ok: true,
      pulled: { products: 40, orders: catalog.orders.length },
      failed: 0,
      pushed: { products: 40, orders: catalog.orders.length },
      sampled: { products: 10, orders: Math.min(10, catalog.orders.length) },
      transactions: 4,
      errors: [],
    });
    // The store holds exactly what the service handed out (every field the reverse form carries).
    const products = await allItems(store, 'products');
    expect(products.map((p) => CONVERTERS.products.toReverse(p as never))).toEqual(
      [...catalog.products].sort((a, b) => (a._id < b._id ? -1 : 1)).map((p) => CONVERTERS.products.toReverse(p)),
    );
    expect((await allItems(store, 'orders')).length).toBe(catalog.orders.length);

    const status = await service.status('shop');
    expect(status).toMatchObject({
      connectionstatus: 'finished',
      mode: 'idle',
      current: null,
      queue: [],
      products: { delivered: 40, succeeded: 40, failed: 0, redelivered: 0, received: 40, sampled: 10 },
      orders: { delivered: catalog.orders.length, succeeded: catalog.orders.length, failed: 0, received: catalog.orders.length },
      failures: [],
    });
    expect(status.transactions.map((t) => t.kind)).toEqual(['pull', 'pull', 'push', 'pingsample']);
    expect(status.lastSample?.products).toHaveLength(10);
    // Keys never appear in events.
    expect(JSON.stringify(events)).not.toContain(KEY);
  });

  test('a push lands in the service store converted to webhook form; a sample push does not', async () => {
    svc = await startService(0);
    const store = createMemoryAdapter(demoCatalog(12));
    await svc.router.service.enqueue('shop', { kind: 'pingsample' });
    const daemon = createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: store, pollIntervalMs: 2, sampleSize: 5 });
    expect((await daemon.runOnce()).sampled).toEqual({ products: 5, orders: 3 });
    expect(await svc.store.products.count()).toBe(0);
    // The sample kept for inspection is exactly the store's first page (what the reverse form carries, read back into the store's form).
    const firstFive = (await store.products.list({ sortorder: 'asc', limit: 5, signal: AbortSignal.timeout(5000) })).map((x) => CONVERTERS.products.toWebhook(CONVERTERS.products.toReverse(JSON.parse(x.json))));
    const status = await svc.router.service.status('shop');
    expect(status.lastSample?.products).toEqual(firstFive);
    expect(status.products).toMatchObject({ sampled: 5, received: 0 });

    await svc.router.service.enqueue('shop', { kind: 'push' });
    const report = await daemon.runOnce();
    expect(report.pushed).toEqual({ products: 12, orders: 3 });
    const expected = (await allItems(store, 'products')).map((p) => CONVERTERS.products.toReverse(p as never));
    const got = (await allItems(svc.store, 'products')).map((p) => CONVERTERS.products.toReverse(p as never));
    expect(got).toEqual(expected);
  });
});
