/**
 * The daemon builds every URL from the contract's reverse route table (issue 23): run against a real
 * service behind a recording middleware, every request it makes is `GET /` (reachability) or a call
 * of `REVERSE_ROUTES` under `{P}`, with the table's method, and across a full cycle (a sample push,
 * a normal push, pulls of both entities with a refused item) it uses every call the table has for a
 * daemon.
 */
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryAdapter, createMemoryAdapter } from '../../adapters/memory';
import { DIALECT_NAMES, REVERSE_BASE_PATH, REVERSE_ROUTES, matchReverseRoute, type Order, type Product } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createDaemon, createReverseServiceRouter } from '../../lib/reverse';
import { KEY } from './reverse-helpers';

/** A store that refuses one product and one order, so the daemon also reports failures. */
class RefusingStore extends MemoryAdapter {
  constructor(private readonly refuse: ReadonlySet<string>) {
    super();
  }
  async checkProduct(p: Product): Promise<string[]> {
    return this.refuse.has(p._id) ? ['blank SKU'] : [];
  }
  async checkOrder(o: Order): Promise<string[]> {
    return this.refuse.has(o._id) ? ['invalid business partner'] : [];
  }
}

describe.each(DIALECT_NAMES)('the daemon speaks only the route table (dialect %s)', (dialect) => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? (server.closeAllConnections(), server.close(() => resolve())) : resolve())));

  test('every request is GET / or a table route with its method, and every daemon call of the table is used', async () => {
    const catalog = demoCatalog(8);
    const service = createMemoryAdapter(catalog);
    const router = createReverseServiceRouter({ adapter: service, connections: [{ key: KEY, name: 'shop' }], answerRoot: true, maxCallsPerSecond: 0, dialect });
    const seen: Array<{ method: string; url: string }> = [];
    const app = express();
    app.use((req, _res, next) => {
      seen.push({ method: req.method, url: req.originalUrl });
      next();
    });
    app.use(router);
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    await router.service.enqueue('shop', { kind: 'pingsample' });
    await router.service.enqueue('shop', { kind: 'push' });
    await router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    await router.service.enqueue('shop', { kind: 'pull', entity: 'orders' });
    const store = new RefusingStore(new Set([catalog.products[3]._id, catalog.orders[0]._id]));
    const report = await createDaemon({ serviceUrl: url, connectionKey: KEY, adapter: store, dialect, pollIntervalMs: 2 }).runOnce();
    expect(report).toMatchObject({ ok: true, failed: 2, pulled: { products: catalog.products.length - 1, orders: catalog.orders.length - 1 } });

    const prefix = `${REVERSE_BASE_PATH}/${KEY}`;
    const offTable: string[] = [];
    const used = new Set<string>();
    for (const { method, url: path } of seen) {
      if (method === 'GET' && path === '/') continue;
      const match = path.startsWith(`${prefix}/`) ? matchReverseRoute(method, path.slice(prefix.length)) : undefined;
      if (match?.ok) used.add(`${match.route.name} ${match.route.entity ?? ''}`.trim());
      else offTable.push(`${method} ${path}`);
    }
    expect(offTable).toEqual([]);
    // `mode` is this kit's own addition for other readers; the daemon asks the deployed way (ping, strategy).
    const daemonCalls = REVERSE_ROUTES.filter((r) => r.name !== 'mode').map((r) => `${r.name} ${r.entity ?? ''}`.trim());
    expect([...used].sort()).toEqual([...daemonCalls].sort());
  });
});
