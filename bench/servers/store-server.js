'use strict';
/**
 * A store for the sync benchmarks, in its own process:
 *   node bench/servers/store-server.js sqlite:FILE|memory:N [DELAY_MS] [full|stubs]
 * Express 5 + the kit's router (rate limiting off), over the SQL adapter on a seeded file or a
 * memory adapter with N demo products. DELAY_MS (default 0) is added before every request;
 * `stubs` lists ids only (`listing: 'stubs'`, items by `?id=`), as `serve --listing stubs` does.
 */
const http = require('node:http');
const kit = require('../lib/kit');
const { serveIpc } = require('../lib/proc');

async function main() {
  const [spec, delayText, listing = 'full'] = process.argv.slice(2);
  const delayMs = Number(delayText || 0);
  let adapter;
  if (spec.startsWith('memory:')) {
    const { products } = kit.demo().demoCatalog(Number(spec.slice(7)));
    adapter = kit.memory().createMemoryAdapter({ products });
  } else {
    adapter = await kit.sql().openSqlAdapter(spec);
  }
  const express = require('express');
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  if (delayMs > 0) app.use((req, res, next) => setTimeout(next, delayMs));
  app.use(kit.server().createStoreRouter({ adapter, svcKeys: [kit.BENCH_KEY], rateLimit: false, listing }));
  const server = http.createServer(app);
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => serveIpc(server.address().port));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
