/**
 * `kill -9` mid-write: `serve` under writers, `reverse-service` and the daemon mid-transaction, a
 * `sync --state` run and a BullMQ sync worker mid-run. Each is started again (the worker's
 * connection is taken over by another worker); nothing acknowledged may be lost, nothing doubled.
 * Recovery here includes the restart: from the kill to the first good answer of the new process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createSqlAdapter } from '../../adapters/sql';
import { demoCatalog, demoOrderCount } from '../../lib/demo';
import { createSyncQueue, type SyncQueue } from '../../lib/sync';
import { runCli, spawnCli } from '../cli/cli-process';
import { describeRedis, purgePrefix, readLog, REDIS_URL, spawnWorker, startLoopbackStores, uniqueRedisPrefix, type LoopbackStores, type WorkerProcess } from '../sync/bullmq-helpers';
import {
  auditRoundTrip,
  auditWrites,
  CONNECTION,
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
  Tally,
  waitUntil,
  webhookLoad,
  type CliServer,
} from './fault-kit';

jest.setTimeout(scale(120_000, 300_000));

const env = { STOREBRIDGE_KEY: KEY, STOREBRIDGE_CONNECTION: CONNECTION };
const portOf = (url: string) => new URL(url).port;

let dir: string;
const servers: CliServer[] = [];
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'storebridge-faults-kill-'))));
afterEach(async () => {
  haltLoads();
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  printRows();
});

/** Starts `storebridge ARGS`, remembered for the clean-up. */
async function server(args: string[]): Promise<CliServer> {
  const s = await startServer(args, env);
  servers.push(s);
  return s;
}

test('kill -9 serve mid-write: started again on the same SQLite file, every acknowledged write is there once', async () => {
  const seeded = 50;
  const adapter = `sqlite:${join(dir, 'serve.db')}`;
  const first = await server(['serve', '--adapter', adapter, '--demo', String(seeded), '--rate-limit', 'off']);
  const load = webhookLoad(first.url, { writers: scale(4, 8), readers: 1, prefix: 'kill-serve', template: demoCatalog(1).products[0] });
  await sleep(scale(1_000, 3_000));
  const killedAt = Date.now();
  await first.kill9();
  const second = await server(['serve', '--adapter', adapter, '--demo', String(seeded), '--rate-limit', 'off', '--port', portOf(first.url)]);
  const recoveryMs = (await recovery(() => send(`${second.url}/products?jobid=1&limit=1`, { headers: { SvcKey: KEY } }))) + (Date.now() - killedAt);
  await sleep(scale(1_000, 3_000));
  await load.stop();
  const { lost, doubled } = await auditWrites(second.url, load.acknowledged, seeded);
  record({ scenario: 'kill -9 serve (SQLite) mid-write', requests: load.tally.requests, answers: load.tally.counts, recoveryMs, restart: true, lost, doubled, note: `${load.acknowledged.size} writes acknowledged; unanswered ones sent again` });

  expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
  expect(crashTraces(second.stderr())).toEqual([]);
});

test('kill -9 reverse-service mid-transaction: started again on its SQLite state, the daemon finishes, nothing lost or doubled', async () => {
  const products = scale(200, 1_000);
  const orders = demoOrderCount(products);
  const adapter = `sqlite:${join(dir, 'service.db')}`;
  const first = await server(['reverse-service', '--adapter', adapter, '--demo', String(products)]);
  const counting = await countingProxy(first.url);
  const local = join(dir, 'daemon-a.db');
  const daemon = spawnCli(['daemon', '--service', counting.url, '--adapter', `sqlite:${local}`, '--once', '--json', '--poll-ms', '200'], env);
  await waitUntil('the daemon to pull 20 products', async () => (await reverseStatus(first.url)).products.succeeded > 20);
  const killedAt = Date.now();
  await first.kill9();
  const second = await server(['reverse-service', '--adapter', adapter, '--demo', String(products), '--port', portOf(first.url)]);
  const recoveryMs = Date.now() - killedAt;
  const code = await daemon.exit;
  const result = lastJsonLine(daemon.stdout());
  await counting.close();
  const view = await reverseStatus(second.url);
  const { lost, doubled } = await auditRoundTrip(`sqlite:${local}`, view, { products, orders });
  record({ scenario: 'kill -9 reverse-service (SQLite state) mid-transaction', requests: counting.tally.requests, answers: counting.tally.counts, recoveryMs, restart: true, lost, doubled, note: `daemon --once exit ${code}` });

  expect(code).toBe(0);
  expect(result).toMatchObject({ ok: true, pulled: { products, orders }, pushed: { products, orders } });
  expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
  expect(crashTraces(second.stderr() + daemon.stderr())).toEqual([]);
});

test('kill -9 daemon mid-pull: started again, it gets the item it held (after its lease) and finishes; nothing lost or doubled', async () => {
  const products = scale(200, 1_000);
  const orders = demoOrderCount(products);
  // A short lease: the item the killed daemon held is handed out again after 2 s, not 60.
  const service = await server(['reverse-service', '--demo', String(products), '--lease-ms', '2000']);
  const counting = await countingProxy(service.url);
  const local = `sqlite:${join(dir, 'daemon-b.db')}`;
  const args = ['daemon', '--service', counting.url, '--adapter', local, '--once', '--json', '--poll-ms', '100'];
  const first = spawnCli(args, env);
  await waitUntil('the daemon to pull 20 products', async () => (await reverseStatus(service.url)).products.succeeded > 20);
  const killedAt = Date.now();
  first.child.kill('SIGKILL');
  await first.exit;
  const again = await runCli(args, env);
  const finishedMs = Date.now() - killedAt;
  const result = lastJsonLine(again.stdout);
  await counting.close();
  const view = await reverseStatus(service.url);
  const { lost, doubled } = await auditRoundTrip(local, view, { products, orders });
  record({ scenario: 'kill -9 daemon mid-pull', requests: counting.tally.requests, answers: counting.tally.counts, recoveryMs: null, lost, doubled, note: `the second daemon finished ${finishedMs} ms after the kill (lease 2 s); exit ${again.code}` });

  expect(again.code).toBe(0);
  expect(result.ok).toBe(true);
  expect(view).toMatchObject({ products: { succeeded: products, failed: 0 }, orders: { succeeded: orders, failed: 0 } });
  expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
  expect(crashTraces(again.stderr)).toEqual([]);
});

test('kill -9 sync --state mid-write: the next run resumes from the checkpoint, the sink holds the catalog once', async () => {
  const products = scale(2_000, 8_000);
  const store = await server(['serve', '--demo', String(products), '--rate-limit', 'off']);
  const sinkFile = join(dir, 'sync-sink.db');
  const args = ['sync', store.url, '--into', `sqlite:${sinkFile}`, '--json', '--state', join(dir, 'sync-state.json'), '--page-size', '50'];
  const runs = new Tally();
  const first = spawnCli(args, env);
  const sink = await createSqlAdapter({ connection: `sqlite:${sinkFile}` });
  const signal = () => AbortSignal.timeout(5_000);
  await waitUntil('a third of the catalog in the sink', async () => (await sink.products.count({ signal: signal() })) > products / 3);
  first.child.kill('SIGKILL');
  await first.exit;
  runs.add({ kind: 'reset', ms: 0 });
  const before = await sink.products.count({ signal: signal() });
  const again = await runCli(args, env);
  runs.add({ kind: again.code === 0 ? '2xx' : '5xx', ms: 0 });
  const report = lastJsonLine(again.stdout);
  const ids = (await sink.products.list({ sortorder: 'asc', limit: 1_000_000, signal: signal() })).map((i) => i._id);
  const held = { products: await sink.products.count({ signal: signal() }), orders: await sink.orders.count({ signal: signal() }) };
  await sink.close();
  const catalog = demoCatalog(products);
  const lost = catalog.products.filter((p) => !new Set(ids).has(p._id)).length + Math.max(0, catalog.orders.length - held.orders);
  const doubled = ids.length - new Set(ids).size + Math.max(0, held.products - products) + Math.max(0, held.orders - catalog.orders.length);
  record({ scenario: 'kill -9 sync --state mid-write', requests: runs.requests, answers: runs.counts, recoveryMs: null, lost, doubled, note: `killed with ${before} products in the sink; the second run resumed: ${report.resumed}` });

  expect(again.code).toBe(0);
  expect(report).toMatchObject({ ok: true, resumed: true, products: { count: products }, orders: { count: catalog.orders.length } });
  expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
});

describeRedis('kill -9 a BullMQ sync worker', () => {
  let redis: Redis;
  let prefix: string;
  let stores: LoopbackStores | undefined;
  let queue: SyncQueue | undefined;
  const workers: WorkerProcess[] = [];

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = uniqueRedisPrefix();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.kill()));
    await queue?.queue.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    await stores?.close();
    queue = stores = undefined;
    await purgePrefix(redis, prefix);
    await redis.quit();
  });

  test('mid-write: the other worker takes the connection over and completes it from the checkpoint; nothing lost or doubled', async () => {
    const products = scale(400, 2_000);
    stores = await startLoopbackStores({ count: 1, products, delayMs: 5 });
    const id = stores.ids[0];
    const sinkFile = join(dir, `${prefix}.db`);
    const registry = join(dir, `registry-${prefix}.json`);
    writeFileSync(registry, JSON.stringify({ [id]: { baseUrl: stores.url(id), key: stores.key(id), sink: sinkFile } }));
    const logKey = `${prefix}:test-log`;
    const start = (name: string) => {
      const w = spawnWorker({ SB_REDIS_URL: REDIS_URL, SB_PREFIX: prefix, SB_REGISTRY: registry, SB_LOG_KEY: logKey, SB_NAME: name, SB_LOG_PAGES: '1' });
      workers.push(w);
      return w;
    };
    const a = start('a');
    await a.ready;
    queue = createSyncQueue({ connection: REDIS_URL, prefix, backoffMs: 200 });
    await queue.addConnection({ id, intervalMs: 60_000 });
    await waitUntil('worker a to write pages', async () => (await readLog(redis, logKey)).filter((e) => e.type === 'page').length >= 3);
    const killedAt = Date.now();
    await a.kill();
    const b = start('b');
    await b.ready;
    await waitUntil('a complete run by worker b', async () => (await readLog(redis, logKey)).some((e) => e.type === 'run' && e.outcome === 'ok' && e.pid === b.child.pid), 60_000);
    const recoveryMs = Date.now() - killedAt;
    const log = await readLog(redis, logKey);
    const runs = log.filter((e) => e.type === 'run');
    const sink = await createSqlAdapter({ connection: `sqlite:${sinkFile}` });
    const signal = AbortSignal.timeout(5_000);
    const ids = (await sink.products.list({ sortorder: 'asc', limit: 100_000, signal })).map((i) => i._id);
    const held = { products: await sink.products.count({ signal }), orders: await sink.orders.count({ signal }) };
    await sink.close();
    const catalog = demoCatalog(products);
    const lost = catalog.products.filter((p) => !ids.includes(p._id)).length + Math.max(0, catalog.orders.length - held.orders);
    const doubled = Math.max(0, held.products - products) + Math.max(0, held.orders - catalog.orders.length);
    const resumed = runs.find((r) => r.pid === b.child.pid)?.resumed === true;
    record({
      scenario: 'kill -9 BullMQ sync worker mid-write',
      requests: runs.length + 1,
      answers: { '2xx': runs.filter((r) => r.outcome === 'ok').length, '4xx': 0, '5xx': runs.filter((r) => r.outcome !== 'ok').length, reset: 1 },
      recoveryMs,
      restart: true,
      lost,
      doubled,
      note: `runs: the killed one (reset) and the other worker's (${resumed ? 'resumed from the checkpoint' : 'from the start'}); recovery includes the lock expiry`,
    });

    expect(resumed).toBe(true);
    expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
    expect(crashTraces(b.output())).toEqual([]);
  });
});
