/**
 * How the workers' health keeps runs in Redis at fleet scale (docs/scaling-sync.md → Run history, Fleet scale):
 * each run in the compact layout of `encodeRun` (read back exactly, and the JSON objects of earlier
 * versions still read), each connection's history deflated into one string — 50 runs in about
 * 1 KB — and the workers' `historySize` option.
 */
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createSyncQueue, createSyncWorker, MemorySyncHealth, RedisSyncHealth, type SyncObservation, type SyncQueue, type SyncReport, type SyncWorker } from '../../lib/sync';
import { decodeRun, encodeRun } from '../../lib/sync/redis-sync-state';
import { lastRunOf, runRecordOf, type LastRun } from '../../lib/sync/sync-health';
import { startFakeStore, type FakeStore } from '../client/fake-store';
import { describeRedis, purgePrefix, REDIS_URL, uniqueRedisPrefix, waitFor } from './bullmq-helpers';

type RunObservation = Extract<SyncObservation, { type: 'run' }>;

const count = fc.nat({ max: 10_000_000 });
const entityReport = fc.record(
  { count, seen: count, written: count, unchanged: count, duplicates: count, invalid: count, anomalies: count, complete: fc.boolean(), normalised: count, fetchedById: count },
  { requiredKeys: ['count', 'seen', 'written', 'unchanged', 'duplicates', 'invalid', 'anomalies', 'complete'] },
);
const time = fc.integer({ min: 0, max: Date.parse('2200-01-01T00:00:00Z') });

/** Any run observation a worker can make: ended before it started, with or without error, worker, optional counts. */
const runObservation: fc.Arbitrary<RunObservation> = fc
  .record({
    connection: fc.string({ minLength: 1, maxLength: 30 }),
    outcome: fc.constantFrom('ok' as const, 'store_issues' as const, 'failed' as const),
    startedAt: time,
    took: fc.integer({ min: -5_000, max: 10_000_000 }),
    jobid: fc.nat(),
    resumed: fc.boolean(),
    attempt: fc.integer({ min: 1, max: 20 }),
    worker: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
    products: entityReport,
    orders: entityReport,
    requests: fc.nat(),
    retries: fc.nat(),
    error: fc.option(fc.record({ name: fc.string(), code: fc.string(), message: fc.string({ maxLength: 300 }) }, { requiredKeys: ['name', 'message'] }), { nil: undefined }),
  })
  .map((r) => {
    const report = { ok: r.outcome === 'ok', connection: r.connection, jobid: r.jobid, mode: 'full', resumed: r.resumed, products: r.products, orders: r.orders, requests: r.requests, retries: r.retries, durationMs: 0, invalidItems: [], anomalies: [], ...(r.error ? { error: r.error } : {}) } as SyncReport;
    return { type: 'run', connection: r.connection, outcome: r.outcome, report, startedAt: r.startedAt, endedAt: r.startedAt + r.took, requests: r.requests, retries: r.retries, attempt: r.attempt, ...(r.worker !== undefined ? { worker: r.worker } : {}) };
  });

/** A run that went well, as a fleet's worker reports it every 15 minutes. */
function typicalRun(connection: string, i: number): RunObservation {
  const products = { count: 5000 + (i % 7), seen: 5000 + (i % 7), written: (i * 13) % 40, unchanged: 0, duplicates: 0, invalid: 0, anomalies: 0, complete: true, normalised: 0, fetchedById: 0 };
  const orders = { count: 1200 + i, seen: 40 + (i % 5), written: i % 4, unchanged: 0, duplicates: 0, invalid: 0, anomalies: 0, complete: true, normalised: 0, fetchedById: 0 };
  const startedAt = Date.parse('2026-11-01T00:00:00Z') + i * 900_000 + ((i * 7919) % 3000);
  const report = { ok: true, connection, jobid: 100 + i, mode: 'full', resumed: false, products, orders, requests: 53, retries: i % 9 === 0 ? 1 : 0, durationMs: 0, invalidItems: [], anomalies: [] } as SyncReport;
  return { type: 'run', connection, outcome: 'ok', report, startedAt, endedAt: startedAt + 300 + ((i * 104_729) % 2_500), requests: 53, retries: report.retries, attempt: 1, worker: 'sync-worker-7d9f8b6c5-x2k4q:1' };
}

test('a run kept in the compact layout reads back exactly as it was (last run and history record, property)', () => {
  fc.assert(
    fc.property(runObservation, fc.option(fc.constantFrom('2029-02-03T04:05:06.789Z'), { nil: undefined }), (o, lastOkAt) => {
      const run: LastRun = lastRunOf(o, lastOkAt ? ({ lastOkAt } as LastRun) : undefined);
      expect(decodeRun(encodeRun(run), o.connection)).toEqual(run);
      expect(decodeRun(encodeRun(runRecordOf(run)), o.connection)).toEqual(runRecordOf(run));
    }),
    { numRuns: 300 },
  );
});

test('the compact layout is a fifth of the JSON object for a typical run; a run kept as a JSON object (earlier versions) still reads', () => {
  const run = lastRunOf(typicalRun('shop-00042', 3), undefined);
  expect(encodeRun(run).length).toBeLessThan(JSON.stringify(run).length / 3.5);
  expect(decodeRun(JSON.stringify(run), 'ignored')).toEqual(run);
  expect(() => decodeRun('[7,"ok"]', 'shop')).toThrow('unknown layout (7)');
});

describeRedis('run records in Redis', () => {
  let redis: Redis;
  let prefix: string;
  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = uniqueRedisPrefix();
  });
  afterEach(async () => {
    await purgePrefix(redis, prefix);
    await redis.quit();
  });

  test('a full 50-run history of a fleet connection takes under 1,500 bytes of Redis and reads back as the in-memory history does', async () => {
    const health = new RedisSyncHealth(redis, { prefix });
    const reference = new MemorySyncHealth();
    for (let i = 0; i < 60; i++) {
      await health.observe(typicalRun('shop-00042', i));
      reference.observe(typicalRun('shop-00042', i));
    }
    expect(await health.history('shop-00042')).toEqual(await reference.history('shop-00042'));
    expect(await health.history('shop-00042', 3)).toEqual(await reference.history('shop-00042', 3));
    expect(await health.lastRun('shop-00042')).toEqual(await reference.lastRun('shop-00042'));
    expect((await health.history('shop-00042')).map((r) => r.jobid)).toEqual(Array.from({ length: 50 }, (_, i) => 159 - i));
    // As a list of JSON objects (before): about 24 KB.
    expect(Number(await redis.memory('USAGE', health.historyKey('shop-00042'), 'SAMPLES', 0))).toBeLessThan(1_500);
    expect((await redis.hget(health.key, 'shop-00042'))!.length).toBeLessThan(150);
  });

  test('a history and a last run kept by an earlier version (a list of JSON objects, an object) are read, and folded into the new layout by the next run', async () => {
    const health = new RedisSyncHealth(redis, { prefix, historySize: 4 });
    const old = [3, 2, 1].map((i) => lastRunOf(typicalRun('shop-1', i), undefined));
    const listKey = `${prefix}:sync@runs:shop-1`;
    await redis.rpush(listKey, ...old.map((r) => JSON.stringify(runRecordOf(r))));
    await redis.hset(health.key, 'shop-1', JSON.stringify({ ...old[0], lastOkAt: old[0].at }));
    expect(await health.history('shop-1')).toEqual(old.map(runRecordOf));
    expect(await health.lastRun('shop-1')).toEqual({ ...old[0], lastOkAt: old[0].at });

    await health.observe(typicalRun('shop-1', 4));
    await health.observe(typicalRun('shop-1', 5));
    expect((await health.history('shop-1')).map((r) => r.jobid)).toEqual([105, 104, 103, 102]);
    expect(await redis.exists(listKey)).toBe(0);
    await health.forget('shop-1');
    expect(await health.history('shop-1')).toEqual([]);
    expect(await redis.exists(health.historyKey('shop-1'))).toBe(0);
  });

  test("a worker's historySize: the runs its health keeps per connection; a bad value is refused", async () => {
    const KEY = 'history-size-key-93f1aa';
    const store: FakeStore = await startFakeStore({ products: demoCatalog(3).products, key: KEY });
    let queue: SyncQueue | undefined;
    let worker: SyncWorker | undefined;
    try {
      expect(() => createSyncWorker({ connection: REDIS_URL, prefix, resolveConnection: () => undefined, historySize: -1 })).toThrow(/historySize/);
      let runs = 0;
      worker = createSyncWorker({
        connection: REDIS_URL,
        prefix,
        historySize: 2,
        resolveConnection: () => ({ client: { baseUrl: store.url, svcKey: KEY }, sink: createMemoryAdapter() }),
        observers: [{ observe: (o) => void (o.type === 'run' && runs++) }],
      });
      queue = createSyncQueue({ connection: REDIS_URL, prefix });
      for (let i = 1; i <= 3; i++) {
        await queue.runNow('shop');
        await waitFor(`run ${i}`, () => runs === i);
      }
      await waitFor('the third run in the history', async () => (await worker!.health.history('shop'))[0]?.jobid === 3);
      expect((await worker.health.history('shop')).map((r) => r.jobid)).toEqual([3, 2]);
    } finally {
      await worker?.close();
      await queue?.queue.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
      await store.close();
    }
  });
});
