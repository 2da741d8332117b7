'use strict';
/**
 * The caller of the re-sync benchmark, in its own process:
 *   node bench/servers/resync-caller.js PRODUCTS_URL SINK_FILE PAGE_SIZE
 * Syncs the products (createStoreClient with the per-entity URL, so by-ID reads use `?id=`; runSync)
 * into an existing SQLite sink, which keeps what an earlier sync wrote. Prints one JSON line: time,
 * requests, items seen, written, fetched by ID, and a digest of the (key, last_updated) pairs.
 */
const { createHash } = require('node:crypto');
const kit = require('../lib/kit');

async function main() {
  const [productsUrl, sinkFile, pageSizeText] = process.argv.slice(2);
  const sink = await kit.sql().openSqlAdapter(`sqlite:${sinkFile}`);
  const client = kit.client().createStoreClient({
    urls: { listProducts: productsUrl, listOrders: productsUrl.replace(/\/products$/, '/orders') },
    svcKey: kit.BENCH_KEY,
    pageSize: Number(pageSizeText),
  });
  const { runSync, MemoryCheckpointStore } = kit.sync();
  const t0 = process.hrtime.bigint();
  const report = await runSync({ connectionId: 'bench', client, sink, checkpoints: new MemoryCheckpointStore(), entities: ['products'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!report.ok) throw new Error(`sync not ok: ${JSON.stringify(report.error ?? report.anomalies.slice(0, 3))}`);
  const digest = createHash('sha256');
  let after;
  const signal = new AbortController().signal;
  for (;;) {
    const rows = await sink.products.list({ sortorder: 'asc', limit: 5000, after, signal });
    for (const r of rows) digest.update(`${r._id}\u0000${r.last_updated}\n`);
    if (rows.length < 5000) break;
    after = { last_updated: rows[rows.length - 1].last_updated, _id: rows[rows.length - 1]._id };
  }
  await sink.close?.();
  const p = report.products;
  process.stdout.write(`\n${JSON.stringify({ ms, requests: report.requests, seen: p.seen, written: p.written, fetchedById: p.fetchedById, count: p.count, digest: digest.digest('hex') })}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
