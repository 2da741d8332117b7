'use strict';
/**
 * One sync worker process of the fleet benchmark:
 *   node bench/servers/fleet-worker.js REGISTRY_FILE STORE_URL REDIS_URL PREFIX CONCURRENCY
 * The kit's `createSyncWorker` (BullMQ) with a connection registry read from REGISTRY_FILE (the
 * fleet store's ids and keys: keys never enter Redis) and a discarding sink, so the figures are the
 * scheduler's and the walk's, not a database's.
 *
 * It reports over IPC: `{ready}` once it takes jobs; then every second `{samples}` — one
 * `[due, start, end, ok]` per finished run (Unix ms; `due` is the job's slot, `start` the moment
 * BullMQ handed the job to this worker, `ok` 1 when the run completed and saw the store's whole
 * catalog) — sent, not kept, so the worker's memory is the kit's alone. It answers `{ask: 'cpu'}`,
 * `{ask: 'rss'}` (peak RSS since start) and `{ask: 'rss-window'}` (`{rss, heapMin, externalMin}`:
 * the highest RSS and the lowest heap and off-heap memory in use, sampled every 250 ms since the
 * previous such question).
 */
const fs = require('node:fs');
const kit = require('../lib/kit');
const { serveIpc } = require('../lib/proc');

/** A sink that keeps nothing: every item is "written" (the write rule needs no stored state). */
class DiscardStore {
  async list() {
    return [];
  }
  async count() {
    return 0;
  }
  async get() {
    return undefined;
  }
  async upsert(item) {
    return { item, changed: true, created: true };
  }
  async upsertMany(items) {
    return items.map((item) => ({ item, changed: true, created: true }));
  }
}

const discardSink = () => ({ products: new DiscardStore(), orders: new DiscardStore() });

/** The time a job was due: its slot (`repeat:<scheduler>:<ms>`), else its creation time plus its delay. */
function dueOf(job) {
  const slot = /:(\d{12,})$/.exec(job.id ?? '');
  return slot ? Number(slot[1]) : job.timestamp + (job.delay ?? 0);
}

async function main() {
  const [registryFile, storeUrl, redisUrl, prefix, concurrency] = process.argv.slice(2);
  const registry = new Map(JSON.parse(fs.readFileSync(registryFile, 'utf8')).map((e) => [e.id, e]));
  const sink = discardSink();
  const { demoOrderCount } = kit.demo();
  const started = new Map(); // BullMQ job id → [due, start]
  let samples = [];

  const worker = kit.sync().createSyncWorker({
    connection: redisUrl,
    prefix,
    concurrency: Number(concurrency),
    resolveConnection(id) {
      const entry = registry.get(id);
      return entry && { client: { baseUrl: `${storeUrl}/s/${id}`, svcKey: entry.key, pageSize: 100 }, sink };
    },
    observers: [
      {
        observe(o) {
          const begun = started.get(o.jobId);
          started.delete(o.jobId);
          if (!begun) return;
          const entry = registry.get(o.connection);
          const whole = o.type === 'run' && o.report.products.seen === entry.items && o.report.orders.seen === demoOrderCount(entry.items);
          samples.push([begun[0], begun[1], Date.now(), o.type === 'run' && o.outcome === 'ok' && whole ? 1 : 0]);
        },
      },
    ],
    onError: (err) => process.stderr.write(`fleet worker ${process.pid}: ${err.message}\n`),
  });
  worker.worker.on('active', (job) => started.set(job.id, [dueOf(job), Date.now()]));

  // Each cycle's highest RSS, and its lowest heap and off-heap memory in use (the floors after
  // collections: a leak raises them).
  let windowMax = 0;
  let heapMin = Infinity;
  let externalMin = Infinity;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    windowMax = Math.max(windowMax, m.rss);
    heapMin = Math.min(heapMin, m.heapUsed);
    externalMin = Math.min(externalMin, m.external);
  }, 250);
  const flusher = setInterval(() => {
    if (samples.length) process.send({ samples }), (samples = []);
  }, 1000);
  process.on('message', (m) => {
    if (m && m.ask === 'rss-window') {
      process.send({ answer: 'rss-window', value: { rss: Math.max(windowMax, process.memoryUsage.rss()), heapMin, externalMin } });
      windowMax = 0;
      heapMin = Infinity;
      externalMin = Infinity;
    }
    if (m && m.ask === 'flush') {
      process.send({ samples });
      samples = [];
      process.send({ answer: 'flush', value: true });
    }
  });
  await worker.worker.waitUntilReady();
  serveIpc(0);
  process.removeAllListeners('SIGTERM');
  process.once('SIGTERM', () => {
    clearInterval(sampler);
    clearInterval(flusher);
    void worker.close().then(() => process.exit(0));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
