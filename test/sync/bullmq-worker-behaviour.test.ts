/**
 * The BullMQ worker's guarantees, with in-process workers (each its own Redis connections) against
 * real Redis: the run lock and fenced checkpoints, a tick skipped while another worker runs the
 * connection, a failed run retried by BullMQ and resumed, metrics and shared health.
 */
import { Redis } from 'ioredis';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { InvalidOptionError } from '../../lib/errors';
import { createMetrics } from '../../lib/metrics';
import {
  createSyncMetrics,
  createSyncQueue,
  createSyncWorker,
  RedisCheckpointStore,
  RedisRunLock,
  RedisSyncHealth,
  SyncLockLostError,
  type SyncObservation,
  type SyncQueue,
  type SyncWorker,
} from '../../lib/sync';
import { startFakeStore, type FakeStore } from '../client/fake-store';
import { describeRedis, purgePrefix, REDIS_URL, startLoopbackStores, uniqueRedisPrefix, waitFor, type LoopbackStores } from './bullmq-helpers';

jest.setTimeout(30_000);

describeRedis('BullMQ sync worker behaviour (Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let queue: SyncQueue | undefined;
  const workers: SyncWorker[] = [];
  const closers: Array<() => Promise<void>> = [];

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = uniqueRedisPrefix();
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.close({ abort: true })));
    await queue?.queue.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    queue = undefined;
    for (const close of closers.splice(0)) await close();
    await purgePrefix(redis, prefix);
    await redis.quit();
  });

  test('the run lock: one holder, held while renewed, released only by its holder, expires when its holder goes silent', async () => {
    const lock = new RedisRunLock(redis, 500, { prefix });
    expect(await lock.acquire('c1', 'w1|x|job-1')).toEqual({ acquired: true });
    const second = await lock.acquire('c1', 'w2|y|job-2');
    expect(second).toMatchObject({ acquired: false, holder: 'w1|x|job-1' });
    expect((second as { ttlMs: number }).ttlMs).toBeLessThanOrEqual(500);
    expect(await lock.extend('c1', 'w2|y|job-2')).toBe(false);
    expect(await lock.release('c1', 'w2|y|job-2')).toBe(false);
    expect(await lock.acquire('c2', 'w2|y|job-3')).toEqual({ acquired: true }); // per connection
    // Renewed: still held well past its TTL.
    const keep = lock.keepAlive('c1', 'w1|x|job-1', () => undefined);
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await lock.acquire('c1', 'w2|y|job-2')).toMatchObject({ acquired: false });
    await keep.stop();
    // Silent: it expires.
    await waitFor('the lock to expire', async () => (await redis.exists(lock.key('c1'))) === 0, 5_000);
    expect(await lock.acquire('c1', 'w2|y|job-2')).toEqual({ acquired: true });
    expect(await lock.release('c1', 'w2|y|job-2')).toBe(true);
  });

  test('fenced checkpoints: a worker that lost the lock cannot overwrite the state of the one that took over', async () => {
    const lock = new RedisRunLock(redis, 10_000, { prefix });
    const store = new RedisCheckpointStore(redis, { prefix });
    const other = new Redis(REDIS_URL);
    closers.push(async () => void (await other.quit()));
    await lock.acquire('c1', 'old');
    const stale = store.fencedBy(lock.key('c1'), 'old');
    await stale.save('c1', { jobid: 4 });
    // The lock passes to another worker (the old one stalled past its TTL).
    await redis.del(lock.key('c1'));
    await lock.acquire('c1', 'new');
    await store.fencedBy(lock.key('c1'), 'new').save('c1', { jobid: 5 });
    await expect(stale.save('c1', { jobid: 4, highWater: {} })).rejects.toBeInstanceOf(SyncLockLostError);
    // Shared: another connection to Redis reads what was saved.
    expect(await new RedisCheckpointStore(other, { prefix }).load('c1')).toEqual({ jobid: 5 });
    // Something else under the key is refused, not taken for "never ran".
    await redis.set(store.key('c2'), '{"jobid":"x"}');
    await expect(store.load('c2')).rejects.toThrow('does not hold a storebridge sync state');
  });

  test('a connection already running on one worker: the other worker skips the tick (never two runs at once)', async () => {
    // The store holds every request until the test opens the gate: the first run stays in progress.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const stores: LoopbackStores = await startLoopbackStores({ count: 1, products: 40, idPrefix: 'busy', hold: () => gate });
    closers.push(() => stores.close());
    const [id] = stores.ids;
    const seen: SyncObservation[] = [];
    const sink = createMemoryAdapter();
    for (const name of ['w1', 'w2']) {
      workers.push(
        createSyncWorker({
          connection: REDIS_URL,
          prefix,
          name,
          concurrency: 1,
          resolveConnection: (cid) => (cid === id ? { client: { baseUrl: stores.url(id), svcKey: stores.key(id), pageSize: 5 }, sink } : undefined),
          observers: [{ observe: (o) => void seen.push(o) }],
        }),
      );
    }
    await Promise.all(workers.map((w) => w.worker.waitUntilReady()));
    queue = createSyncQueue({ connection: REDIS_URL, prefix });
    await queue.runNow(id);
    await waitFor('the first run to start', () => workers.some((w) => w.running().length > 0));
    await queue.runNow(id);
    await waitFor('the second job to be skipped', () => seen.length === 1);
    expect(workers.flatMap((w) => w.running())).toEqual([id]);
    open();
    await waitFor('the first run to end', () => seen.length === 2);
    const [skip, run] = [seen.find((o) => o.type === 'skipped')!, seen.find((o) => o.type === 'run')!];
    expect(skip).toMatchObject({ type: 'skipped', connection: id, reason: 'busy' });
    expect(run).toMatchObject({ type: 'run', connection: id, outcome: 'ok' });
    expect(skip.type === 'skipped' && run.type === 'run' && skip.worker !== run.worker).toBe(true);
    expect(skip.at).toBeLessThan((run as { endedAt: number }).endedAt);
    // The health record is shared through Redis: any process can read it.
    const health = await new RedisSyncHealth(redis, { prefix }).lastRun(id);
    expect(health).toMatchObject({ connection: id, outcome: 'ok', jobid: 1, products: { count: 40, seen: 40 }, orders: { count: 10 } });
  });

  test("a job that finds its own stale lock (its worker died) waits for that lock to expire, then runs — not skipped", async () => {
    const { products, orders } = demoCatalog(10);
    const KEY = 'stale-lock-key-0c4d1e';
    const store = await startFakeStore({ products, orders, key: KEY });
    closers.push(() => store.close());
    const seen: SyncObservation[] = [];
    queue = createSyncQueue({ connection: REDIS_URL, prefix });
    // A dead worker's run lock on this very job, 800 ms left.
    const lock = new RedisRunLock(redis, 800, { prefix });
    expect(await lock.acquire('shop', 'dead-worker|r|job-42')).toEqual({ acquired: true });
    const expiresAt = Date.now() + 800;
    await queue.queue.add('sync', { connectionId: 'shop' }, { jobId: 'job-42' });
    workers.push(
      createSyncWorker({
        connection: REDIS_URL,
        prefix,
        resolveConnection: () => ({ client: { baseUrl: store.url, svcKey: KEY }, sink: createMemoryAdapter() }),
        observers: [{ observe: (o) => void seen.push(o) }],
      }),
    );
    await waitFor('the run', () => seen.length > 0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ type: 'run', outcome: 'ok', jobId: 'job-42', report: { products: { count: 10 } } });
    expect((seen[0] as { startedAt: number }).startedAt).toBeGreaterThanOrEqual(expiresAt - 50);
    // The observation is made inside the processor; BullMQ marks the job completed just after it returns.
    const job = await queue.queue.getJob('job-42');
    await waitFor('the job completed', async () => (await job!.getState()) === 'completed');
  });

  test('a worker whose lock is taken mid-run (it was cut off past its TTL) stops without touching the checkpoint, and is not retried', async () => {
    // From the 4th request on, the store holds requests until the gate opens.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let served = 0;
    const stores: LoopbackStores = await startLoopbackStores({ count: 1, products: 60, idPrefix: 'cut', hold: () => (++served > 3 ? gate : Promise.resolve()) });
    closers.push(() => stores.close());
    const [id] = stores.ids;
    const seen: SyncObservation[] = [];
    workers.push(
      createSyncWorker({
        connection: REDIS_URL,
        prefix,
        lockTtlMs: 3_000,
        resolveConnection: () => ({ client: { baseUrl: stores.url(id), svcKey: stores.key(id), pageSize: 5 }, sink: createMemoryAdapter() }),
        observers: [{ observe: (o) => void seen.push(o) }],
      }),
    );
    queue = createSyncQueue({ connection: REDIS_URL, prefix, backoffMs: 50 });
    const jobId = await queue.runNow(id);
    const checkpoints = new RedisCheckpointStore(redis, { prefix });
    await waitFor('three pages checkpointed', async () => ((await checkpoints.load(id))?.run?.progress.products.seen ?? 0) >= 15);
    // Another worker now holds the connection.
    await redis.set(new RedisRunLock(redis, 3_000, { prefix }).key(id), 'intruder|r|other-job', 'PX', 60_000);
    const frozen = await redis.get(checkpoints.key(id));
    open();
    await waitFor('the job to fail', async () => (await queue!.queue.getJob(jobId))?.failedReason !== undefined);
    const job = (await queue.queue.getJob(jobId))!;
    expect(await job.getState()).toBe('failed');
    expect(job.attemptsMade).toBe(1);
    expect(seen).toEqual([expect.objectContaining({ type: 'run', outcome: 'failed' })]);
    expect(await redis.get(checkpoints.key(id))).toBe(frozen);
    // Its failed run did not overwrite the health record (the connection belongs to the other worker now).
    expect(await new RedisSyncHealth(redis, { prefix }).lastRun(id)).toBeUndefined();
    // The intruder's lock was not released by the stopped worker.
    expect(await redis.get(new RedisRunLock(redis, 3_000, { prefix }).key(id))).toBe('intruder|r|other-job');
  });

  test('a run that fails is retried by BullMQ and resumes from its checkpoint; metrics count each outcome and each item once', async () => {
    const { products, orders } = demoCatalog(30);
    const KEY = 'retry-test-key-5b1c9e';
    let failed = false;
    const store: FakeStore = await startFakeStore({
      products,
      orders,
      key: KEY,
      pageSize: 5,
      // The 4th request fails once (the client does not retry it: retry 0), so the run stops there.
      intercept: ({ n, res }) => {
        if (n !== 4) return false;
        failed = true;
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"database is restarting"}');
        return true;
      },
    });
    closers.push(() => store.close());
    const metrics = createMetrics();
    const seen: SyncObservation[] = [];
    const sink = createMemoryAdapter();
    workers.push(
      createSyncWorker({
        connection: REDIS_URL,
        prefix,
        resolveConnection: (cid) => (cid === 'shop' ? { client: { baseUrl: store.url, svcKey: KEY, pageSize: 5, retry: 0 }, sink } : undefined),
        observers: [createSyncMetrics(metrics), { observe: (o) => void seen.push(o) }],
      }),
    );
    queue = createSyncQueue({ connection: REDIS_URL, prefix, backoffMs: 50 });
    await queue.runNow('shop');
    await waitFor('a failed run and its retry', () => seen.length === 2);
    expect(failed).toBe(true);
    const [first, second] = seen as Array<Extract<SyncObservation, { type: 'run' }>>;
    expect(first).toMatchObject({ outcome: 'failed', attempt: 1, report: { jobid: 1, error: { code: 'STORE_SERVER' } } });
    expect(second).toMatchObject({ outcome: 'ok', attempt: 2, jobId: first.jobId, report: { jobid: 1, resumed: true, products: { seen: 30, count: 30 }, orders: { seen: 8, count: 8 } } });
    // Only the pages not done by the failed attempt were asked again.
    expect(first.requests + second.requests).toBe(store.requests.length);
    expect(second.requests).toBeLessThan(store.requests.length - 1);

    const text = await metrics.registry.metrics();
    const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('storebridge_sync_runs_total{outcome="failed"}')).toBe(1);
    expect(value('storebridge_sync_runs_total{outcome="ok"}')).toBe(1);
    expect(value('storebridge_sync_run_retries_total')).toBe(1);
    expect(value('storebridge_sync_resumed_runs_total')).toBe(1);
    expect(value('storebridge_sync_requests_total')).toBe(store.requests.length);
    expect(value('storebridge_sync_items_total{entity="products",result="written"}')).toBe(30);
    expect(value('storebridge_sync_items_total{entity="orders",result="written"}')).toBe(8);
    expect(value('storebridge_sync_run_duration_seconds_count{outcome="ok"}')).toBe(1);
  });

  test('a run the retry policy does not retry (the store refused the key) fails its job at once', async () => {
    const store: FakeStore = await startFakeStore({ products: demoCatalog(5).products, key: 'the-right-key-123456' });
    closers.push(() => store.close());
    const seen: SyncObservation[] = [];
    workers.push(
      createSyncWorker({
        connection: REDIS_URL,
        prefix,
        retry: { delay: () => 20 },
        resolveConnection: () => ({ client: { baseUrl: store.url, svcKey: 'a-wrong-key-654321' }, sink: createMemoryAdapter() }),
        observers: [{ observe: (o) => void seen.push(o) }],
      }),
    );
    queue = createSyncQueue({ connection: REDIS_URL, prefix, retry: { limit: 4 } });
    const jobId = await queue.runNow('shop');
    await waitFor('the job to fail', async () => (await queue!.queue.getJob(jobId))?.failedReason !== undefined);
    const job = (await queue.queue.getJob(jobId))!;
    expect([await job.getState(), job.attemptsMade]).toEqual(['failed', 1]);
    expect(job.failedReason).toMatch(/STORE_AUTH/);
    expect(seen).toHaveLength(1);
    expect(store.requests).toHaveLength(1);
  });

  test('a connection missing from the registry fails without retries; job data holds no key', async () => {
    const seen: string[] = [];
    workers.push(createSyncWorker({ connection: REDIS_URL, prefix, resolveConnection: () => undefined, onError: (e) => seen.push(e.message) }));
    queue = createSyncQueue({ connection: REDIS_URL, prefix, attempts: 5, backoffMs: 50 });
    await queue.addConnection({ id: 'gone', intervalMs: 60_000, mode: 'incremental' });
    await waitFor('the job to fail', async () => (await queue!.queue.getFailedCount()) === 1);
    const [job] = await queue.queue.getFailed();
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toContain('"gone" is not in this worker\'s registry');
    expect(job.data).toEqual({ connectionId: 'gone', mode: 'incremental' });
    expect(await queue.connections()).toEqual([expect.objectContaining({ id: 'gone', intervalMs: 60_000, mode: 'incremental' })]);
    expect(await queue.removeConnection('gone')).toBe(true);
    expect(await queue.connections()).toEqual([]);
  });

  test('bad options are refused, naming the option', async () => {
    expect(() => createSyncQueue({ connection: REDIS_URL, prefix: 'bad prefix' })).toThrow(new InvalidOptionError('prefix', 'must be 1-100 letters, digits, or . _ - { }'));
    expect(() => createSyncQueue({ connection: 'http://x', prefix })).toThrow(InvalidOptionError);
    expect(() => createSyncWorker({ connection: REDIS_URL, prefix } as never)).toThrow(/resolveConnection/);
    expect(() => createSyncWorker({ connection: REDIS_URL, prefix, resolveConnection: () => undefined, lockTtlMs: 5 })).toThrow(/lockTtlMs/);
    queue = createSyncQueue({ connection: REDIS_URL, prefix });
    await expect(queue.addConnection({ id: 'x', intervalMs: 0 })).rejects.toThrow(/intervalMs/);
    await expect(queue.addConnection({ id: 'has space', intervalMs: 10 })).rejects.toThrow(/id/);
  });

  test('one policy (lib/options.ts): a bad value names the option, an unknown one is refused with the closest name', async () => {
    const worker = { connection: REDIS_URL, prefix, resolveConnection: () => undefined };
    expect(() => createSyncQueue({ connection: 'http://x', prefix })).toThrow('invalid option "connection": must be a redis:// or rediss:// URL, ioredis options, or an ioredis client');
    expect(() => createSyncQueue({ connection: REDIS_URL, prefix, keepJobs: -1 })).toThrow('invalid option "keepJobs": must be an integer ≥ 0');
    expect(() => createSyncQueue({ connection: REDIS_URL, prefix, retry: { limit: -1 } })).toThrow('invalid option "retry.limit": must be an integer ≥ 0');
    expect(() => createSyncQueue({ connection: REDIS_URL, prefx: prefix } as never)).toThrow('invalid option "prefx": is not an option of createSyncQueue (did you mean "prefix"?)');
    expect(() => createSyncWorker({ ...worker, concurrency: 0 })).toThrow('invalid option "concurrency": must be an integer ≥ 1');
    expect(() => createSyncWorker({ ...worker, name: 'a|b' })).toThrow('invalid option "name": must be a non-empty string without "|"');
    expect(() => createSyncWorker({ ...worker, retry: { jitter: 'yes' } } as never)).toThrow('invalid option "retry.jitter": must be a boolean or a function');
    expect(() => createSyncWorker({ ...worker, historySize: 10_001 })).toThrow('invalid option "historySize": must be an integer from 0 to 10000');
    expect(() => createSyncWorker({ ...worker, lockTTLMs: 500 } as never)).toThrow('invalid option "lockTTLMs": is not an option of createSyncWorker (did you mean "lockTtlMs"?)');
    queue = createSyncQueue({ connection: REDIS_URL, prefix });
    await expect(queue.addConnection({ id: 'x', intervalMs: 10, mode: 'all' } as never)).rejects.toThrow('invalid option "mode": must be "full" or "incremental"');
    await expect(queue.addConnection({ id: 'x', intervalMs: 10, startAt: 'soon' } as never)).rejects.toThrow('invalid option "startAt": must be a Unix ms time or a Date');
    await expect(queue.addConnection({ id: 'x', interval: 10 } as never)).rejects.toThrow('invalid option "interval": is not an option of addConnection (did you mean "intervalMs"?)');
    await expect(queue.addConnection({ id: 'x' } as never)).rejects.toThrow(/"intervalMs": must be an integer/);
    await expect(queue.addConnection({ id: 'x', intervalMs: 10, intervalms: 10 } as never)).rejects.toThrow('invalid option "intervalms": is not an option of addConnection (did you mean "intervalMs"?)');
    await expect(queue.runNow('has space')).rejects.toThrow('invalid option "id": must be 1-200 printable ASCII characters without spaces');
  });
});
