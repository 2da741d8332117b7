'use strict';
/**
 * What every consumer does with the installed package, given the modules it imported (by `import`
 * in consumer.mjs / consumer.mts, by `require` in consumer.cjs): for each Express it was handed,
 * mount the store router, the OpenAPI handler and the reverse-connection router in a fresh app on
 * 127.0.0.1:0, then make real requests: a raw list call, a whole-catalog walk with the client, the
 * document, the reverse service's `mode`. Prints one JSON line with what it saw.
 */
const { once } = require('node:events');

const KEY = 'consumer-key-0123456789abcdef';

async function scenario(m) {
  const catalog = m.demo.demoCatalog(45);
  const out = { exports: {}, apps: {} };
  for (const [name, mod] of Object.entries(m)) out.exports[name] = Object.keys(mod).length;
  for (const [label, express] of Object.entries(m.expressApps)) {
    const app = express();
    app.get('/openapi.json', m.openapi.openApiHandler(m.openapi.createOpenApiDocument({ include: ['webhooks'] })));
    app.use('/sync', m.server.createStoreRouter({ adapter: m.memory.createMemoryAdapter(catalog), svcKeys: [KEY] }));
    app.use(m.reverse.createReverseServiceRouter({ adapter: m.memory.createMemoryAdapter(), connections: [{ key: 'conn-key', name: 'shop' }] }));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${server.address().port}`;
    try {
      const raw = await fetch(`${base}/sync/products?sortorder=asc&jobid=1&limit=5`, { headers: { SvcKey: KEY } });
      const page = await raw.json();
      const refused = await fetch(`${base}/sync/orders?sortorder=asc&jobid=1`);
      const client = m.client.createStoreClient({ baseUrl: `${base}/sync`, svcKey: KEY, pageSize: 10 });
      const ids = new Set();
      for await (const order of client.walk('orders', { jobid: 2 })) ids.add(order._id);
      const doc = await (await fetch(`${base}/openapi.json`)).json();
      const mode = await (await fetch(`${base}/api/adapters/custom/reverse/connection/conn-key/mode`)).json();
      out.apps[label] = {
        express: require(`${label}/package.json`).version,
        list: { status: raw.status, items: page.products.length, itemsTotal: page.paging.itemsTotal },
        noKey: refused.status,
        walkedOrders: ids.size,
        orders: catalog.orders.length,
        openapi: doc.openapi,
        reverseMode: mode.mode,
      };
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }
  out.conformance = typeof m.conformance.runAdapterConformance;
  return out;
}

module.exports = { scenario };
