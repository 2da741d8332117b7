'use strict';
/**
 * The caller side of the sync benchmarks, in its own process:
 *   node bench/servers/sync-caller.js URL SINK STRATEGY CONCURRENCY PAGE_SIZE
 * Runs one full sync of the products (createStoreClient + runSync) into SINK (`sqlite:FILE` or
 * `memory`). It prints one JSON line: time, items, bytes, requests, peak RSS, and a digest of the
 * (key, last_updated) pairs now in the sink (to compare two runs' items).
 */
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const kit = require('../lib/kit');
const { peakRss } = require('../lib/proc');

async function main() {
  const [url, sinkSpec, strategy, concurrencyText, pageSizeText] = process.argv.slice(2);
  let sink;
  if (sinkSpec === 'memory') sink = kit.memory().createMemoryAdapter();
  else {
    const file = sinkSpec.slice('sqlite:'.length);
    for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true });
    sink = await kit.sql().openSqlAdapter(sinkSpec);
  }
  let bytes = 0;
  const client = kit.client().createStoreClient({
    baseUrl: url,
    svcKey: kit.BENCH_KEY,
    pageSize: Number(pageSizeText),
    hooks: { afterResponse: [(i) => (bytes += i.bytes)] },
  });
  const { runSync, MemoryCheckpointStore } = kit.sync();
  const t0 = process.hrtime.bigint();
  const report = await runSync({
    connectionId: 'bench',
    client,
    sink,
    checkpoints: new MemoryCheckpointStore(),
    entities: ['products'],
    strategy,
    concurrency: Number(concurrencyText),
  });
  if (!report.ok) throw new Error(`sync not ok: ${JSON.stringify(report.error ?? report.anomalies.slice(0, 3))}`);
  const items = report.products.count;
  const requests = report.requests;
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const peak = peakRss(process.pid);
  const memory = process.memoryUsage();
  // Digest of what the sink holds, in key order.
  const digest = createHash('sha256');
  let after;
  for (;;) {
    const rows = await sink.products.list({ sortorder: 'asc', limit: 5000, after });
    for (const r of rows) digest.update(`${r._id}\u0000${r.last_updated}\n`);
    if (rows.length < 5000) break;
    after = { last_updated: rows[rows.length - 1].last_updated, _id: rows[rows.length - 1]._id };
  }
  await sink.close?.();
  const out = { ms, items, bytes, requests, peakRss: peak, heapTotal: memory.heapTotal, external: memory.external, digest: digest.digest('hex') };
  process.stdout.write(`\n${JSON.stringify(out)}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
