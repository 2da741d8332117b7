/**
 * Redis goes away mid-run, behind a TCP proxy the test cuts and restores: under `serve --redis`
 * (shared rate-limit counters), under `reverse-service --state redis://` mid-transaction, and under
 * a BullMQ sync worker process mid-run. Each must answer clean errors (or wait), never print an
 * unhandled event, and work again once Redis is back, with no restart; nothing lost or doubled.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createSqlAdapter } from '../../adapters/sql';
import { demoCatalog, demoOrderCount } from '../../lib/demo';
import { createSyncQueue, type SyncQueue } from '../../lib/sync';
import { spawnCli } from '../cli/cli-process';
import { describeRedis, purgePrefix, readLog, REDIS_URL, spawnWorker, startLoopbackStores, uniqueRedisPrefix, type LoopbackStores, type WorkerProcess } from '../sync/bullmq-helpers';
import { TcpProxy } from '../support/tcp-proxy';
import {
  auditRoundTrip,
  auditWrites,
  CONNECTION,
  CUT_MS,
  DAEMON_POLL_MS,
  countingProxy,
  crashTraces,
  haltLoads,
  KEY,
  lastJsonLine,
  printRows,
  record,
  recovery,
  reverseStatus,
  scale,
  send,
  sleep,
  startServer,
  waitUntil,
  webhookLoad,
  type CliServer,
} from './fault-kit';

jest.setTimeout(scale(120_000, 300_000));

const env = { STOREBRIDGE_KEY: KEY, STOREBRIDGE_CONNECTION: CONNECTION };

describeRedis('faults: Redis cut mid-run', () => {
  let proxy: TcpProxy;
  let redis: Redis;
  let prefix: string;
  let dir: string;
  const servers: CliServer[] = [];

  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'storebridge-faults-redis-'))));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    printRows();
  });
  beforeEach(async () => {
    const target = new URL(REDIS_URL);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
    redis = new Redis(REDIS_URL);
    prefix = uniqueRedisPrefix();
  });
  afterEach(async () => {
    haltLoads();
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    await proxy.close();
    await purgePrefix(redis, prefix);
    await redis.quit();
  });

  test('serve --redis: 500 {error} while the counters cannot be reached (fails closed), serving again when they can', async () => {
    const seeded = 20;
    const serve = await startServer(['serve', '--demo', String(seeded), '--redis', proxy.rewrite(REDIS_URL), '--redis-prefix', `${prefix}:rl:`, '--rate-limit', '100000'], env);
    servers.push(serve);
    const load = webhookLoad(serve.url, { writers: 3, readers: 2, prefix: 'redis-cut', template: demoCatalog(1).products[0] });
    await sleep(scale(1_000, 3_000));
    proxy.cut();
    const cutAt = Date.now();
    await sleep(CUT_MS);
    // Fails closed: while the counters are out of reach the answers turn to 500. How soon depends on
    // the client's reconnect timing, which a loaded machine stretches: keep Redis cut until one comes.
    const failClosedBy = Date.now() + scale(10_000, 30_000);
    while (!(load.tally.counts['5xx'] > 0) && Date.now() < failClosedBy) await sleep(100);
    const during = { ...load.tally.counts };
    const cutMs = Date.now() - cutAt;
    proxy.restore();
    const recoveryMs = await recovery(() => send(`${serve.url}/products?jobid=1&limit=1`, { headers: { SvcKey: KEY } }));
    await sleep(scale(500, 2_000));
    await load.stop();
    const { lost, doubled } = await auditWrites(serve.url, load.acknowledged, seeded);
    record({ scenario: `serve --redis, Redis cut ${(cutMs / 1000).toFixed(1)} s mid-load`, requests: load.tally.requests, answers: load.tally.counts, recoveryMs, lost, doubled, note: `${load.acknowledged.size} writes acknowledged` });

    expect(during['5xx']).toBeGreaterThan(0);
    for (const body of load.tally.errorBodies) expect(body).toMatch(/^\{"error":"[^"]+"\}$/);
    expect(load.tally.counts.reset).toBe(0);
    expect(recoveryMs).toBeLessThan(5_000);
    expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
    expect(crashTraces(serve.stderr())).toEqual([]);
    expect(serve.child.exitCode).toBeNull();
  });

  test('reverse-service --state redis://: a cut mid-transaction is waited out or answered 500, and the daemon finishes once Redis is back', async () => {
    const products = scale(200, 1_000);
    const orders = demoOrderCount(products);
    const name = `${prefix}-rev`;
    const service = await startServer(['reverse-service', '--state', proxy.rewrite(REDIS_URL), '--name', name, '--demo', String(products)], env);
    servers.push(service);
    const counting = await countingProxy(service.url);
    const local = join(dir, `daemon-${name}.db`);
    const daemon = spawnCli(['daemon', '--service', counting.url, '--adapter', `sqlite:${local}`, '--once', '--json', '--poll-ms', DAEMON_POLL_MS], env);
    await waitUntil('the daemon to pull 20 products', async () => (await reverseStatus(service.url, name)).products.succeeded > 20);
    const connectionsBefore = proxy.accepted;
    expect(proxy.connections).toBeGreaterThan(0); // the service's Redis connection, about to be cut
    proxy.cut();
    await sleep(CUT_MS);
    const during = counting.tally.counts['5xx'];
    proxy.restore();
    const recoveryMs = await recovery(() => send(`${service.url}/connections/${name}/status`));
    const code = await daemon.exit;
    const result = lastJsonLine(daemon.stdout());
    await counting.close();
    const { lost, doubled } = await auditRoundTrip(`sqlite:${local}`, await reverseStatus(service.url, name), { products, orders });
    await purgePrefix(redis, `storebridge:reverse:${name}`);
    record({
      scenario: `reverse-service --state redis, Redis cut ${CUT_MS / 1000} s mid-transaction`,
      requests: counting.tally.requests,
      answers: counting.tally.counts,
      recoveryMs,
      lost,
      doubled,
      note: `daemon --once exit ${code}; ${during} calls answered 500 during the cut`,
    });

    // ioredis queues commands while it reconnects: the calls of a short cut wait, those of a long one answer 500.
    expect(proxy.accepted).toBeGreaterThan(connectionsBefore); // it reconnected
    expect(code).toBe(0);
    expect(result).toMatchObject({ ok: true, pulled: { products, orders }, pushed: { products, orders } });
    expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
    expect(crashTraces(service.stderr() + daemon.stderr())).toEqual([]);
    expect(service.child.exitCode).toBeNull();
  });

  describe('a BullMQ sync worker', () => {
    let stores: LoopbackStores | undefined;
    let queue: SyncQueue | undefined;
    let worker: WorkerProcess | undefined;

    afterEach(async () => {
      await worker?.kill();
      await queue?.queue.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
      await stores?.close();
      worker = queue = stores = undefined;
    });

    test('Redis cut mid-run: the worker process survives, and the next runs complete once Redis is back', async () => {
      const products = scale(300, 1_500);
      stores = await startLoopbackStores({ count: 1, products, delayMs: 5 });
      const id = stores.ids[0];
      const registry = join(dir, `registry-${prefix}.json`);
      writeFileSync(registry, JSON.stringify({ [id]: { baseUrl: stores.url(id), key: stores.key(id), sink: join(dir, `${prefix}.db`) } }));
      const logKey = `${prefix}:test-log`;
      worker = spawnWorker({ SB_REDIS_URL: proxy.rewrite(REDIS_URL), SB_LOG_REDIS_URL: REDIS_URL, SB_PREFIX: prefix, SB_REGISTRY: registry, SB_LOG_KEY: logKey, SB_NAME: 'fault', SB_LOG_PAGES: '1' });
      await worker.ready;
      queue = createSyncQueue({ connection: REDIS_URL, prefix, backoffMs: 200 });
      await queue.addConnection({ id, intervalMs: 1_000 });
      await waitUntil('a run to be writing pages', async () => (await readLog(redis, logKey)).some((e) => e.type === 'page'));
      proxy.cut();
      await sleep(CUT_MS);
      proxy.restore();
      const restoredAt = Date.now();
      await waitUntil('a complete run after the cut', async () => (await readLog(redis, logKey)).some((e) => e.type === 'run' && e.outcome === 'ok' && (e.end as number) > restoredAt), 60_000);
      const recoveryMs = Math.min(...(await readLog(redis, logKey)).filter((e) => e.type === 'run' && e.outcome === 'ok' && (e.end as number) > restoredAt).map((e) => (e.end as number) - restoredAt));
      await queue.removeConnection(id);
      const log = await readLog(redis, logKey);
      const runs = log.filter((e) => e.type === 'run');
      const sink = await createSqlAdapter({ connection: `sqlite:${join(dir, `${prefix}.db`)}` });
      const signal = AbortSignal.timeout(5_000);
      const held = { products: await sink.products.count({ signal }), orders: await sink.orders.count({ signal }) };
      const ids = (await sink.products.list({ sortorder: 'asc', limit: 100_000, signal })).map((i) => i._id);
      await sink.close();
      const catalog = demoCatalog(products);
      const expected = { products, orders: catalog.orders.length };
      const lost = catalog.products.filter((p) => !ids.includes(p._id)).length + Math.max(0, expected.orders - held.orders);
      const doubled = Math.max(0, held.products - expected.products) + Math.max(0, held.orders - expected.orders);
      record({
        scenario: `BullMQ sync worker, Redis cut ${CUT_MS / 1000} s mid-run`,
        requests: runs.length,
        answers: { '2xx': runs.filter((r) => r.outcome === 'ok').length, '4xx': 0, '5xx': runs.filter((r) => r.outcome !== 'ok').length, reset: worker.child.exitCode === null ? 0 : 1 },
        recoveryMs,
        lost,
        doubled,
        note: `runs (ok / not ok); recovery: the restore to the end of the first complete run`,
      });

      expect(worker.child.exitCode).toBeNull(); // the same process, still taking jobs
      expect(crashTraces(worker.output())).toEqual([]);
      expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
    });
  });
});
