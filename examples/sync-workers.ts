/**
 * Many connections on several worker processes: BullMQ on Redis schedules each connection's sync,
 * two worker processes share the work, one is killed mid-way and the other takes its connections
 * over (resuming from the checkpoints in Redis). Health and metrics are served over HTTP.
 *
 * For a self-contained demo it starts its own stores (this kit's router over demo catalogs, one per
 * connection, on one loopback server) and keeps each connection's sink in a SQLite file shared by
 * the workers. Needs Redis (default redis://127.0.0.1:6379, or REDIS_URL).
 *
 * Run from the repository root (here 10 connections for 20 seconds; those are the defaults):
 *   npx tsc -p examples --outDir /tmp/sb-examples
 *   NODE_PATH=$PWD/node_modules node /tmp/sb-examples/examples/sync-workers.js 10 20
 *
 * At the end it removes its Redis namespace (a random `sbdemo-…`), unless you named one with
 * SB_PREFIX: that one is kept, for `storebridge dashboard --prefix NAME` to show after the run.
 *
 * Roles: without arguments (or with numbers) this process is the *scheduler* and the stores; it
 * forks `sync-workers.js worker REGISTRY_FILE` twice. Start more workers by hand with that command.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import express from 'express';
import { Redis } from 'ioredis';
import { createMemoryAdapter } from '../adapters/memory';
import { openSqlAdapter } from '../adapters/sql';
import type { StoreAdapter } from '../lib/adapter';
import { createMetrics, metricsHandler } from '../lib/metrics';
import { createStoreRouter } from '../lib/server';
import { seedDemo } from '../lib/demo';
import { createSyncMetrics, createSyncQueue, createSyncWorker, RedisSyncHealth, syncHealthHandler, type LastRun } from '../lib/sync';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// One namespace per demo run, removed at the end unless the user named it (to look at it afterwards).
const NAMED = process.env.SB_PREFIX !== undefined && process.env.SB_PREFIX !== '';
const PREFIX = NAMED ? process.env.SB_PREFIX! : `sbdemo-${randomBytes(3).toString('hex')}`;

/** The service's connection registry: in real life a table, with keys from a secret store. */
interface Registry {
  [connectionId: string]: { baseUrl: string; svcKey: string; sinkFile: string };
}

async function workerMain(registryFile: string): Promise<void> {
  const registry = JSON.parse(readFileSync(registryFile, 'utf8')) as Registry;
  const sinks = new Map<string, Promise<StoreAdapter>>();
  const metrics = createMetrics();
  const worker = createSyncWorker({
    connection: REDIS_URL,
    prefix: PREFIX,
    concurrency: 4,
    lockTtlMs: 3_000, // a crashed worker's connections are taken over after ~lockTtlMs + stalledIntervalMs
    stalledIntervalMs: 2_000,
    // Keys are resolved here, in the worker, from the registry: job data in Redis holds only the id.
    resolveConnection(id) {
      const c = Object.prototype.hasOwnProperty.call(registry, id) ? registry[id] : undefined;
      if (!c) return undefined;
      if (!sinks.has(id)) sinks.set(id, openSqlAdapter(`sqlite:${c.sinkFile}`));
      return sinks.get(id)!.then((sink) => ({ client: { baseUrl: c.baseUrl, svcKey: c.svcKey, pageSize: 50 }, sink }));
    },
    observers: [createSyncMetrics(metrics)],
    onError: (err) => console.error(`[worker ${process.pid}] ${err.message}`),
  });
  // Each worker exposes its own metrics; Prometheus scrapes every worker.
  const server = http.createServer(metricsHandler(metrics)).listen(0, '127.0.0.1');
  await Promise.all([worker.worker.waitUntilReady(), new Promise((r) => server.once('listening', r))]);
  console.log(`[worker ${process.pid}] taking jobs; metrics on http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
  process.once('SIGTERM', () => {
    void worker.close().then(() => {
      server.close();
      process.exit(0);
    });
  });
}

async function schedulerMain(connections: number, seconds: number): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-workers-'));
  // The stores: one loopback server, one router (with its own key) per connection.
  const app = express();
  const registry: Registry = {};
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (let i = 0; i < connections; i++) {
    const id = `shop-${i}`;
    const svcKey = randomBytes(16).toString('hex');
    const adapter = createMemoryAdapter();
    await seedDemo(adapter, 200 + 20 * i);
    app.use(`/${id}`, createStoreRouter({ adapter, svcKeys: [svcKey], rateLimit: false }));
    registry[id] = { baseUrl: `${base}/${id}`, svcKey, sinkFile: path.join(dir, `${id}.db`) };
  }
  const registryFile = path.join(dir, 'registry.json');
  writeFileSync(registryFile, JSON.stringify(registry), { mode: 0o600 });

  // Health of every connection, from Redis: serve it from any process.
  const redis = new Redis(REDIS_URL);
  const health = new RedisSyncHealth(redis, { prefix: PREFIX });
  const healthServer = http.createServer(syncHealthHandler(health, { staleAfterMs: 30_000 })).listen(0, '127.0.0.1');
  await new Promise((r) => healthServer.once('listening', r));
  console.log(`health: http://127.0.0.1:${(healthServer.address() as AddressInfo).port}/health`);

  const workers: ChildProcess[] = [0, 1].map(() => fork(__filename, ['worker', registryFile], { env: { ...process.env, SB_PREFIX: PREFIX } }));
  const queue = createSyncQueue({ connection: REDIS_URL, prefix: PREFIX, backoffMs: 1_000 });
  // First slots spread over the interval, so the connections do not all run at the same instant.
  const ids = Object.keys(registry);
  const t0 = Date.now();
  for (const [i, id] of ids.entries()) await queue.addConnection({ id, intervalMs: 5_000, startAt: t0 + Math.floor((i * 5_000) / ids.length) });
  console.log(`${connections} connections scheduled every 5 s on 2 workers (namespace ${PREFIX})`);

  const summary = (runs: LastRun[]) =>
    runs.map((r) => `${r.connection}: job ${r.jobid} ${r.outcome}${r.resumed ? ' (resumed)' : ''} ${r.products.count}p/${r.orders.count}o by ${r.worker}`).join('\n  ');
  const halfway = setTimeout(() => {
    console.log(`killing worker ${workers[0].pid} (SIGKILL): its runs are taken over by the other one`);
    workers[0].kill('SIGKILL');
  }, (seconds * 1000) / 2);
  const ticker = setInterval(() => void health.lastRuns().then((runs) => console.log(`last runs:\n  ${summary(runs)}`)), 5_000);

  await new Promise((r) => setTimeout(r, seconds * 1000));
  clearTimeout(halfway);
  clearInterval(ticker);
  console.log(`final:\n  ${summary(await health.lastRuns())}`);

  // The schedules go (nothing serves these stores any more); with SB_PREFIX the runs' health and
  // history stay, for the dashboard.
  for (const id of Object.keys(registry)) await queue.removeConnection(id);
  await Promise.all(workers.map((w) => (w.exitCode === null && w.signalCode === null ? new Promise((r) => (w.once('exit', r), w.kill('SIGTERM'))) : undefined)));
  if (NAMED) {
    console.log(`namespace ${PREFIX} kept in Redis (SB_PREFIX); remove it with: redis-cli --scan --pattern '${PREFIX}:*' | xargs -r redis-cli del`);
  } else {
    await queue.queue.obliterate({ force: true });
    // Remove the demo's checkpoints, locks and health too.
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  }
  await queue.close();
  await redis.quit();
  server.closeAllConnections();
  server.close();
  healthServer.close();
  rmSync(dir, { recursive: true, force: true });
}

const [role, arg] = process.argv.slice(2);
const main = role === 'worker' ? workerMain(arg) : schedulerMain(Number(role ?? 10) || 10, Number(arg ?? 20) || 20);
main.catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
