'use strict';
/**
 * A store listing ids only, for the stub re-sync benchmark, in its own process:
 *   node bench/servers/stub-store-server.js sqlite:FILE
 * `GET /products?limit=` lists `{_id, last_updated}` stubs in `(last_updated, _id)` order, `limit`
 * up to 1,000, with a `next` cursor (keyset paging, like the kit's router: no deep OFFSET);
 * `GET /products?id=X` answers the bare item (the deployed by-ID read). Over the SQL adapter on the seeded file; the key in `SvcKey` or `C2SKey`.
 * It stands in for `serve --listing stubs` (the store side's ids-only listing) until that is
 * available to this benchmark: same adapter, same wire form.
 */
const http = require('node:http');
const kit = require('../lib/kit');
const { serveIpc } = require('../lib/proc');

async function main() {
  const [spec] = process.argv.slice(2);
  const adapter = await kit.sql().openSqlAdapter(spec);
  const send = (res, status, text) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const key = req.headers.svckey ?? req.headers.c2skey;
    if (key !== kit.BENCH_KEY) return send(res, 401, '{"error":"invalid key"}');
    if (url.pathname !== '/products') return send(res, 404, '{"error":"not found"}');
    const signal = new AbortController().signal;
    try {
      const id = url.searchParams.get('id');
      if (id !== null) {
        const item = await adapter.products.get(id, { signal });
        return item ? send(res, 200, JSON.stringify(item)) : send(res, 404, '{"error":"unknown id"}');
      }
      const limit = Math.min(1000, Number(url.searchParams.get('limit') ?? 100));
      const sortorder = url.searchParams.get('sortorder') === 'desc' ? 'desc' : 'asc';
      const next = url.searchParams.get('next');
      const after = next ? JSON.parse(Buffer.from(next, 'base64url').toString()) : undefined;
      const rows = await adapter.products.list({ sortorder, limit, after, offset: after ? undefined : 0, signal });
      const total = await adapter.products.count({ signal });
      const stubs = rows.map((r) => `{"_id":${JSON.stringify(r._id)},"last_updated":${r.last_updated}}`).join(',');
      const last = rows[rows.length - 1];
      const cursor = rows.length === limit ? `,"next":"${Buffer.from(JSON.stringify({ last_updated: last.last_updated, _id: last._id })).toString('base64url')}"` : '';
      send(res, 200, `{"paging":{"pageSize":${rows.length},"itemsTotal":${total}${cursor}},"products":[${stubs}]}`);
    } catch (err) {
      send(res, 500, JSON.stringify({ error: String(err) }));
    }
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => serveIpc(server.address().port));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
