'use strict';
/**
 * One list-page server for the serving benchmark, in its own process:
 *   node bench/servers/page-server.js KIND CATALOG_SIZE
 * KIND: kit (Express 5 + createStoreRouter: the Express binding), kit-http (the kit's StoreCore on plain
 * node:http, hand-wired), kit-listener (the node:http binding, createStoreListener), kit-listener-rl
 * (the same with the rate limiter on, at a limit never reached), kit-fetch (the Fetch binding,
 * createStoreFetchHandler, behind a minimal node:http-to-Request adapter),
 * fastify (Fastify 5 with a response schema), express (plain Express 5 handler, res.json(page)),
 * raw (node:http sending a pre-built buffer: the physical limit).
 * All serve GET /products?sortorder=asc&jobid=1&offset=0 → 20 demo products from the same memory
 * adapter, with the SvcKey checked (except raw). Rate limiting is off.
 */
const http = require('node:http');
const { createHash, timingSafeEqual } = require('node:crypto');
const kit = require('../lib/kit');
const { serveIpc } = require('../lib/proc');

const [kind, sizeText] = process.argv.slice(2);
const size = Number(sizeText || 1000);
const PAGE = 20;

async function main() {
  const { demoCatalog } = kit.demo();
  const { createMemoryAdapter } = kit.memory();
  const { products } = demoCatalog(size);
  const adapter = createMemoryAdapter({ products });
  const byId = new Map(products.map((p) => [p._id, p]));
  const { createStoreRouter, createStoreCore, createStoreListener, createStoreFetchHandler } = kit.server();
  const routerOptions = { adapter, svcKeys: [kit.BENCH_KEY], rateLimit: false, pageSize: PAGE };

  // The hand-rolled competitors: the same adapter calls (a page of keys and the count), the
  // documents as objects already in memory (given to them for free: no parse), the same key check
  // (SHA-256 digests compared with timingSafeEqual), the same page shape.
  const expected = createHash('sha256').update(kit.BENCH_KEY).digest();
  const keyOk = (h) => typeof h === 'string' && timingSafeEqual(createHash('sha256').update(h).digest(), expected);
  async function page(query) {
    const sortorder = query.get('sortorder') === 'desc' ? 'desc' : 'asc';
    const offset = Number(query.get('offset') || 0);
    const [rows, total] = await Promise.all([adapter.products.list({ sortorder, limit: PAGE + 1, offset }), adapter.products.count()]);
    const items = rows.slice(0, PAGE).map((r) => byId.get(r._id));
    const paging = { pageSize: items.length, itemsTotal: total, offset };
    if (rows.length > PAGE) paging.next = String(offset + items.length);
    return { paging, products: items };
  }

  let server;
  if (kind === 'kit') {
    const express = require('express');
    const app = express();
    app.disable('x-powered-by');
    app.disable('etag');
    app.use(createStoreRouter(routerOptions));
    server = http.createServer(app);
  } else if (kind === 'kit-http') {
    const core = createStoreCore(routerOptions);
    server = http.createServer(async (req, res) => {
      const q = req.url.indexOf('?');
      const out = await core.handle('listProducts', { headers: req.headers, rawQuery: q < 0 ? '' : req.url.slice(q + 1) });
      res.writeHead(out.status, { ...out.headers, 'content-length': Buffer.byteLength(out.body) }).end(out.body);
    });
  } else if (kind === 'kit-listener' || kind === 'kit-listener-rl') {
    const limited = kind === 'kit-listener-rl' ? { rateLimit: { limit: 1_000_000_000 } } : {};
    server = http.createServer(createStoreListener({ ...routerOptions, ...limited }));
  } else if (kind === 'kit-fetch') {
    // What a Fetch host does for a handler (as @hono/node-server does): Request in, Response out.
    const handler = createStoreFetchHandler(routerOptions);
    server = http.createServer(async (req, res) => {
      const headers = new Headers();
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
      const response = await handler(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers }));
      const body = Buffer.from(await response.arrayBuffer());
      const out = {};
      response.headers.forEach((value, name) => (out[name] = value));
      res.writeHead(response.status, out).end(body);
    });
  } else if (kind === 'express') {
    const express = require('express');
    const app = express();
    app.disable('x-powered-by');
    app.disable('etag');
    app.get('/products', async (req, res) => {
      if (!keyOk(req.get('svckey'))) return res.status(401).json({ error: 'invalid SvcKey' });
      res.json(await page(new URL(req.url, 'http://x').searchParams));
    });
    server = http.createServer(app);
  } else if (kind === 'fastify') {
    const fastify = require('fastify')({ logger: false });
    const { toJSONSchema } = require('zod');
    const { ProductSchema } = kit.contract();
    const { $schema, ...product } = toJSONSchema(ProductSchema, { io: 'output', unrepresentable: 'any' });
    const schema = {
      type: 'object',
      required: ['paging', 'products'],
      properties: {
        paging: {
          type: 'object',
          required: ['pageSize', 'itemsTotal'],
          properties: { pageSize: { type: 'integer' }, itemsTotal: { type: 'integer' }, offset: { type: 'integer' }, next: { type: 'string' } },
        },
        products: { type: 'array', items: product },
      },
    };
    fastify.get('/products', { schema: { response: { 200: schema } } }, async (request, reply) => {
      if (!keyOk(request.headers.svckey)) return reply.code(401).send({ error: 'invalid SvcKey' });
      return page(new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1)));
    });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    return serveIpc(fastify.server.address().port, { bytes: await probe(fastify.server.address().port) });
  } else if (kind === 'raw') {
    const out = await createStoreCore(routerOptions).handle('listProducts', { headers: { svckey: kit.BENCH_KEY }, rawQuery: 'sortorder=asc&jobid=1&offset=0' });
    const body = Buffer.from(out.body);
    const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };
    server = http.createServer((req, res) => res.writeHead(200, headers).end(body));
  } else {
    throw new Error(`unknown server kind ${kind}`);
  }
  server.listen(0, '127.0.0.1', async () => serveIpc(server.address().port, { bytes: await probe(server.address().port) }));
}

/** One request, to check the answer is a 200 page of 20 and report its size. */
async function probe(port) {
  const res = await fetch(`http://127.0.0.1:${port}/products?sortorder=asc&jobid=1&offset=0`, { headers: { svckey: kit.BENCH_KEY } });
  const text = await res.text();
  const body = JSON.parse(text);
  if (res.status !== 200 || body.products.length !== PAGE) throw new Error(`${kind}: answered ${res.status} ${text.slice(0, 200)}`);
  return Buffer.byteLength(text);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
