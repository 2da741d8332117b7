/**
 * Shared pieces of the Redis/BullMQ sync tests: Redis gating (skip with a notice when Redis is
 * unreachable, fail instead under STOREBRIDGE_REQUIRE_DB=1, as the SQL suites do), unique key
 * prefixes and their cleanup, loopback stores (this kit's router over demo catalogs), and worker
 * processes running `bullmq-fixture-worker.ts`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { Redis } from 'ioredis';
import { createMemoryAdapter } from '../../adapters/memory';
import { createStoreRouter } from '../../lib/server';
import { seedDemo } from '../../lib/demo';
import { describeWhen, withoutCredentials } from '../support/describe-when';

export const REDIS_URL = process.env.STOREBRIDGE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export { REQUIRE_DB } from '../support/describe-when';

let probed: { why: string | undefined } | undefined;

/** Why Redis cannot be used, or undefined when it answers (probed once, synchronously). */
export function redisUnreachable(): string | undefined {
  if (!probed) {
    const probe = `const { Redis } = require('ioredis');
const r = new Redis(process.argv[1], { connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
let first; r.on('error', (e) => { first = first || e; });
r.connect().then(() => r.ping()).then(() => { r.disconnect(); process.exit(0); }, (e) => { console.error((first || e).message); process.exit(1); });`;
    const r = spawnSync(process.execPath, ['-e', probe, REDIS_URL], { encoding: 'utf8', timeout: 10_000, cwd: __dirname });
    probed = { why: r.status === 0 ? undefined : (r.stderr || r.error?.message || 'no answer').trim().split('\n')[0] };
  }
  return probed.why;
}

/** `describe` for a Redis suite: skipped with a notice when Redis is unreachable, failing under STOREBRIDGE_REQUIRE_DB=1. */
export function describeRedis(name: string, body: () => void): void {
  const why = redisUnreachable();
  const requirement = { unavailable: why === undefined ? undefined : `is unreachable (${why})`, what: `Redis at ${withoutCredentials(REDIS_URL)}`, check: 'Redis is reachable', suite: 'Redis' };
  describeWhen(requirement, name, body);
}

/** A BullMQ prefix no other test, worker or run uses. */
export const uniqueRedisPrefix = (): string => `sbtest-${randomBytes(5).toString('hex')}`;

/** Deletes every key under the prefix (BullMQ's and storebridge's). */
export async function purgePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

export interface StoreRequest {
  conn: string;
  t: number;
  path: string;
  query: Record<string, string>;
}

export interface LoopbackStores {
  readonly base: string;
  readonly ids: string[];
  url(id: string): string;
  key(id: string): string;
  readonly requests: StoreRequest[];
  close(): Promise<void>;
}

/**
 * `count` stores on one loopback server, each this kit's router over a memory adapter seeded with
 * `demoCatalog(products)`, mounted at `/<id>` with its own key. `delayMs` delays every request;
 * `hold()` is awaited before each request is served (a gate the test opens).
 */
export async function startLoopbackStores(o: { count: number; products: number; delayMs?: number; idPrefix?: string; hold?: () => Promise<void> }): Promise<LoopbackStores> {
  const app = express();
  const requests: StoreRequest[] = [];
  const ids = Array.from({ length: o.count }, (_, i) => `${o.idPrefix ?? 'shop'}-${String(i).padStart(2, '0')}`);
  const keys = new Map(ids.map((id) => [id, `key-${id}-${randomBytes(6).toString('hex')}`]));
  for (const id of ids) {
    const adapter = createMemoryAdapter();
    await seedDemo(adapter, o.products);
    const router = createStoreRouter({ adapter, svcKeys: [keys.get(id)!], rateLimit: false });
    app.use(`/${id}`, (req, _res, next) => {
      requests.push({ conn: id, t: Date.now(), path: req.path, query: { ...(req.query as Record<string, string>) } });
      const go = () => (o.delayMs ? setTimeout(next, o.delayMs) : next());
      if (o.hold) void o.hold().then(go);
      else go();
    }, router);
  }
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    ids,
    url: (id) => `${base}/${id}`,
    key: (id) => keys.get(id)!,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<string>;
  output(): string;
  /** SIGTERM and wait for the exit (graceful close). */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit (a crash). */
  kill(): Promise<void>;
}

const REGISTER = path.join(__dirname, 'bullmq-fixture-register.js');
const WORKER = path.join(__dirname, 'bullmq-fixture-worker.ts');

export function spawnWorker(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, ['-r', REGISTER, WORKER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c;
      const m = /ready (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.stderr!.on('data', (c: Buffer) => (out += c));
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${out}`)));
  });
  ready.catch(() => undefined);
  const signal = async (sig: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    await exited;
  };
  return { child, ready, output: () => out, stop: () => signal('SIGTERM'), kill: () => signal('SIGKILL') };
}

export interface LogEntry {
  type: 'start' | 'page' | 'run' | 'skipped' | 'worker-error';
  pid: number;
  t: number;
  conn: string;
  job: string;
  [k: string]: unknown;
}

export async function readLog(redis: Redis, key: string): Promise<LogEntry[]> {
  return (await redis.lrange(key, 0, -1)).map((s) => JSON.parse(s) as LogEntry);
}

/** Polls `check` every `everyMs` (default 50) until it returns true; throws with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000, everyMs = 50): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
