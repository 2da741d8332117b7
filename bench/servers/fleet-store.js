'use strict';
/**
 * The fleet's stores, many tenants in one process:
 *   node bench/servers/fleet-store.js REGISTRY_FILE
 * REGISTRY_FILE is a JSON array of `{id, key, items}` (see bench/lib/fleet.js). Each entry is its
 * own store: the kit's `node:http` binding (`createStoreListener`, rate limit off) over its own
 * memory adapter seeded with `demoCatalog(items)`, with its own key, mounted at `/s/<id>`. One
 * `node:http` server routes a request to its store by the path's second segment.
 *
 * Memory: the adapters of equal size share their seed's objects (`demoCatalog(n)` is built once per
 * n), each adapter still serializes its own JSON text, as any memory store would.
 */
const http = require('node:http');
const fs = require('node:fs');
const kit = require('../lib/kit');
const { serveIpc } = require('../lib/proc');

function main() {
  const registry = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const { createStoreListener } = kit.server();
  const { createMemoryAdapter } = kit.memory();
  const { demoCatalog } = kit.demo();
  const catalogs = new Map();
  const listeners = new Map();
  for (const { id, key, items } of registry) {
    if (!catalogs.has(items)) catalogs.set(items, demoCatalog(items));
    const adapter = createMemoryAdapter(catalogs.get(items));
    listeners.set(id, createStoreListener({ adapter, svcKeys: [key], rateLimit: false }, { basePath: `/s/${id}` }));
  }
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const end = url.indexOf('/', 3);
    const listener = url.startsWith('/s/') && end > 3 ? listeners.get(url.slice(3, end)) : undefined;
    if (listener) return listener(req, res);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such store"}');
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => serveIpc(server.address().port, { stores: listeners.size, heapUsed: process.memoryUsage().heapUsed }));
}

main();
