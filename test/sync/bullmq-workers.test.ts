/**
 * The BullMQ scheduler for real: Redis, two worker *processes* (spawned node running
 * `bullmq-fixture-worker.ts`), loopback stores (this kit's router over demo catalogs), SQLite
 * sinks shared by the workers (one file per connection).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { openSqlAdapter } from '../../adapters/sql';
import { demoCatalog } from '../../lib/demo';
import { createSyncQueue, RedisCheckpointStore, type SyncQueue } from '../../lib/sync';
import { describeRedis, purgePrefix, readLog, REDIS_URL, spawnWorker, startLoopbackStores, uniqueRedisPrefix, waitFor, type LogEntry, type LoopbackStores, type WorkerProcess } from './bullmq-helpers';

jest.setTimeout(60_000);

describeRedis('BullMQ sync workers (Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let dir: string;
  let stores: LoopbackStores | undefined;
  let queue: SyncQueue | undefined;
  const workers: WorkerProcess[] = [];

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = uniqueRedisPrefix();
    dir = mkdtempSync(path.join(tmpdir(), 'sb-bullmq-'));
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.kill()));
    await queue?.queue.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    queue = undefined;
    await stores?.close();
    stores = undefined;
    await purgePrefix(redis, prefix);
    await redis.quit();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes the workers' connection registry (URL, key, sink file) — the keys never enter Redis. */
  function writeRegistry(s: LoopbackStores): string {
    const file = path.join(dir, 'registry.json');
    const registry = Object.fromEntries(s.ids.map((id) => [id, { baseUrl: s.url(id), key: s.key(id), sink: path.join(dir, `${id}.db`) }]));
    writeFileSync(file, JSON.stringify(registry));
    return file;
  }

  function startWorker(name: string, registry: string, extra: Record<string, string> = {}): WorkerProcess {
    const w = spawnWorker({ SB_REDIS_URL: REDIS_URL, SB_PREFIX: prefix, SB_REGISTRY: registry, SB_LOG_KEY: `${prefix}:test-log`, SB_NAME: name, ...extra });
    workers.push(w);
    return w;
  }

  async function sinkCounts(id: string): Promise<{ products: number; orders: number; ids: string[] }> {
    const sink = await openSqlAdapter(`sqlite:${path.join(dir, `${id}.db`)}`);
    try {
      const signal = new AbortController().signal;
      const page = await sink.products.list({ sortorder: 'asc', offset: 0, limit: 10_000, signal } as never);
      return {
        products: await sink.products.count({ signal }),
        orders: await sink.orders.count({ signal }),
        ids: (page as unknown as { items: Array<{ _id: string }> }).items?.map((i) => i._id) ?? [],
      };
    } finally {
      await sink.close?.();
    }
  }

  test('two worker processes, 50 connections: every connection synced once per cycle, never two runs of one connection at once', async () => {
    // Warm-up: the first run of every connection (workers compile, 50 SQLite sinks are created, 50
    // first runs compete). After it, CYCLES cycles in which every connection runs exactly once.
    const CYCLES = 3;
    const INTERVAL = 4_000;
    const PRODUCTS = 12;
    stores = await startLoopbackStores({ count: 50, products: PRODUCTS });
    const registry = writeRegistry(stores);
    const a = startWorker('a', registry, { SB_CONCURRENCY: '8' });
    const b = startWorker('b', registry, { SB_CONCURRENCY: '8' });
    await Promise.all([a.ready, b.ready]);

    queue = createSyncQueue({ connection: REDIS_URL, prefix, backoffMs: 100 });
    // Slots spread over the interval (as a deployment would jitter them), not 50 at the same instant.
    const t0 = Date.now() + 500;
    for (const [i, id] of stores.ids.entries()) await queue.addConnection({ id, intervalMs: INTERVAL, startAt: t0 + Math.floor((i * INTERVAL) / stores.ids.length) });
    expect((await queue.connections()).map((c) => c.id).sort()).toEqual(stores.ids);

    const logKey = `${prefix}:test-log`;
    const slotOf = (e: LogEntry) => Number(/:(\d+)$/.exec(e.job)![1]);
    const runsOf = (log: LogEntry[], id: string) => log.filter((e) => e.type === 'run' && e.conn === id).sort((x, y) => slotOf(x) - slotOf(y));
    let warmEnd = 0;
    await waitFor('a first run of each connection', async () => {
      const log = await readLog(redis, logKey);
      if (!stores!.ids.every((id) => runsOf(log, id).length >= 1)) return false;
      warmEnd = Math.max(...stores!.ids.map((id) => runsOf(log, id)[0].end as number));
      return true;
    }, 30_000, 250);
    const after = (log: LogEntry[], id: string) => runsOf(log, id).filter((r) => slotOf(r) > warmEnd);
    await waitFor(`${CYCLES} cycles after the warm-up`, async () => {
      const log = await readLog(redis, logKey);
      return stores!.ids.every((id) => after(log, id).length >= CYCLES);
    }, 30_000, 250);
    for (const id of stores.ids) await queue.removeConnection(id);
    await waitFor('the queue to go idle', async () => (await queue!.queue.getActiveCount()) === 0);
    await Promise.all([a.stop(), b.stop()]);

    const log = await readLog(redis, logKey);
    expect(log.filter((e) => e.type === 'worker-error')).toEqual([]);
    expect(log.filter((e) => e.type === 'skipped')).toEqual([]);
    const { products, orders } = demoCatalog(PRODUCTS);
    for (const id of stores.ids) {
      const runs = runsOf(log, id);
      expect(runs.every((r) => r.job.startsWith(`repeat:sync:${id}:`))).toBe(true);
      // One run per scheduled slot (BullMQ job id)…
      expect(new Set(runs.map(slotOf)).size).toBe(runs.length);
      // …and after the warm-up, one slot in every cycle: the first within an interval of the
      // warm-up's end, then one interval apart (none missed, none doubled).
      const cycles = after(log, id).slice(0, CYCLES).map(slotOf);
      const late = after(log, id).map((r) => (r.start as number) - slotOf(r));
      expect({ id, firstAfterWarmUp: cycles[0] - warmEnd <= INTERVAL, gaps: cycles.slice(1).map((s, i) => s - cycles[i]), late })
        .toEqual({ id, firstAfterWarmUp: true, gaps: Array(CYCLES - 1).fill(INTERVAL), late });
      // Never two at once: each run ends before the next starts (times taken inside the run lock).
      for (let i = 1; i < runs.length; i++) expect(runs[i].start as number).toBeGreaterThanOrEqual(runs[i - 1].end as number);
      // Each run a new wire jobid, in order; each completed with the whole catalog.
      expect(runs.map((r) => r.jobid)).toEqual(runs.map((_, i) => i + 1));
      for (const r of runs) {
        expect(r.outcome).toBe('ok');
        expect(r.products).toEqual({ count: products.length, seen: products.length });
        expect(r.orders).toEqual({ count: orders.length, seen: orders.length });
      }
    }
    // The work was shared.
    const pids = new Set(log.filter((e) => e.type === 'run').map((e) => e.pid));
    expect(pids).toEqual(new Set([a.child.pid, b.child.pid]));
    const sink = await sinkCounts(stores.ids[7]);
    expect(sink.products).toBe(products.length);
    expect(sink.orders).toBe(orders.length);
  });
  test('a worker killed mid-run: the other worker takes the same job over and resumes it from the shared checkpoint; the sink holds every item once', async () => {
    const PRODUCTS = 60;
    // Slow pages (80 ms each), so the kill lands mid-run.
    stores = await startLoopbackStores({ count: 1, products: PRODUCTS, delayMs: 80, idPrefix: 'slow' });
    const [id] = stores.ids;
    const registry = writeRegistry(stores);
    const timing = { SB_LOCK_TTL: '1000', SB_STALLED: '500', SB_LOG_PAGES: '1' };
    const a = startWorker('a', registry, timing);
    await a.ready;
    queue = createSyncQueue({ connection: REDIS_URL, prefix, backoffMs: 100 });
    await queue.addConnection({ id, intervalMs: 600_000 });

    const logKey = `${prefix}:test-log`;
    await waitFor('worker a to checkpoint 3 pages', async () => (await readLog(redis, logKey)).filter((e) => e.type === 'page' && e.pid === a.child.pid).length >= 3);
    await a.kill();
    const killedAt = Date.now();
    const before = await readLog(redis, logKey);
    const started = before.find((e) => e.type === 'start')!;
    // Where a's last checkpoint left the run (the shared state b resumes from).
    const checkpoint = (await new RedisCheckpointStore(redis, { prefix }).load(id))!.run!;
    expect(checkpoint).toMatchObject({ jobid: started.jobid, entity: 'products' });
    expect(before.some((e) => e.type === 'run')).toBe(false);

    const b = startWorker('b', registry, timing);
    await waitFor('worker b to finish the job', async () => (await readLog(redis, logKey)).some((e) => e.type === 'run'));
    await b.stop();

    const log = await readLog(redis, logKey);
    const runs = log.filter((e) => e.type === 'run');
    expect(runs).toHaveLength(1);
    const [run] = runs;
    // The same BullMQ job (the same slot), completed by the other process, as a retry of a stalled attempt.
    expect(run.pid).toBe(b.child.pid);
    expect(run.job).toBe(started.job);
    expect(run.attempt as number).toBeGreaterThan(1);
    expect(run.start as number).toBeGreaterThanOrEqual(killedAt);
    // Resumed from the checkpoint: same wire jobid, and every item counted exactly once over both processes.
    const { products, orders } = demoCatalog(PRODUCTS);
    expect(run).toMatchObject({ outcome: 'ok', resumed: true, jobid: started.jobid, products: { count: products.length, seen: products.length }, orders: { count: orders.length, seen: orders.length } });
    // The store saw b continue from that checkpoint (the router pages by cursor), not start over.
    const productPages = stores.requests.filter((r) => r.path === '/products');
    const byA = productPages.filter((r) => r.t < killedAt);
    const byB = productPages.filter((r) => r.t >= (run.start as number));
    const resumeAt = (checkpoint.positions?.products as { next: string }).next;
    expect(byA.slice(3).map((r) => r.query.next)).toContain(resumeAt); // at least 3 pages in
    expect(byB[0].query.next).toBe(resumeAt);
    expect(byB.every((r) => r.query.next !== undefined)).toBe(true);
    expect(new Set(stores.requests.map((r) => r.query.jobid))).toEqual(new Set([String(started.jobid)]));
    const sink = await sinkCounts(id);
    expect(sink).toMatchObject({ products: products.length, orders: orders.length });
  });
});
