/**
 * What the dashboard tests run against, as `examples/sync-workers.ts` builds it: loopback stores
 * (this kit's router, one key each), a real BullMQ queue with one job scheduler per connection and
 * a real worker on Redis (health and run history recorded there), one connection whose registry
 * holds a wrong key (its store answers 401). Plus the gating of the browser suites on Chromium.
 */
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { createSyncQueue, createSyncWorker, RedisSyncHealth, type SyncQueue, type SyncWorker } from '../../lib/sync';
import { purgePrefix, REDIS_URL, REQUIRE_DB, startLoopbackStores, uniqueRedisPrefix, type LoopbackStores } from '../sync/bullmq-helpers';
import { spawnCli, type RunningCli } from '../cli/cli-process';
import { describeWhen } from '../support/describe-when';

export const CHROMIUM = process.env.STOREBRIDGE_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking'];

/**
 * `describe` for a browser suite: skipped with a notice when Chromium is missing, a failure instead
 * under STOREBRIDGE_REQUIRE_DB=1 (CI installs it: `.ci/run`).
 */
export function describeBrowser(name: string, body: () => void): void {
  const requirement = { unavailable: existsSync(CHROMIUM) ? undefined : 'is missing (apt-get install -y chromium)', what: CHROMIUM, check: 'Chromium is installed', suite: 'browser' };
  describeWhen(requirement, name, body);
}

export interface Fleet {
  readonly prefix: string;
  readonly stores: LoopbackStores;
  readonly ids: string[];
  /** The connection whose registry holds a wrong key. */
  readonly failing: string;
  /** Every secret of the setup (store keys, the wrong key). */
  readonly secrets: string[];
  readonly queue: SyncQueue;
  readonly worker: SyncWorker;
  readonly health: RedisSyncHealth;
  readonly redis: Redis;
  readonly sinks: Map<string, MemoryAdapter>;
  /** Resolves when every connection has at least `runs` runs recorded. */
  waitForRuns(runs: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFleet(o: { connections?: number; intervalMs?: number; products?: number } = {}): Promise<Fleet> {
  const prefix = uniqueRedisPrefix();
  const stores = await startLoopbackStores({ count: o.connections ?? 10, products: o.products ?? 60 });
  const ids = stores.ids;
  const failing = ids[ids.length - 1];
  const wrongKey = `wrong-key-${prefix}`;
  const sinks = new Map(ids.map((id) => [id, createMemoryAdapter()]));
  const redis = new Redis(REDIS_URL);
  const worker = createSyncWorker({
    connection: REDIS_URL,
    prefix,
    concurrency: 4,
    lockTtlMs: 3_000,
    resolveConnection: (id) => {
      if (!sinks.has(id)) return undefined;
      return { client: { baseUrl: stores.url(id), svcKey: id === failing ? wrongKey : stores.key(id), pageSize: 50, retry: 0 }, sink: sinks.get(id)! };
    },
  });
  const queue = createSyncQueue({ connection: REDIS_URL, prefix, attempts: 1, backoffMs: 100 });
  const t0 = Date.now();
  for (const [i, id] of ids.entries()) await queue.addConnection({ id, intervalMs: o.intervalMs ?? 600_000, startAt: t0 + i * 20 });
  const health = new RedisSyncHealth(redis, { prefix });
  return {
    prefix,
    stores,
    ids,
    failing,
    secrets: [...ids.map((id) => stores.key(id)), wrongKey],
    queue,
    worker,
    health,
    redis,
    sinks,
    async waitForRuns(runs, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const counts = await Promise.all(ids.map((id) => health.history(id).then((h) => h.length)));
        if (counts.every((n) => n >= runs)) return;
        if (Date.now() > until) throw new Error(`runs recorded: ${counts.join(', ')}; expected ${runs} each`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      await worker.close({ abort: true });
      await queue.queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await purgePrefix(redis, prefix);
      await redis.quit();
      await stores.close();
    },
  };
}

/** Starts `storebridge ARGS` and resolves with its URL once it prints `LABEL http://…`. */
export async function startCliServer(args: string[], label: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ cli: RunningCli; url: string; stop(): Promise<void> }> {
  const cli = spawnCli(args, env);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${label}" line within 15 s: ${cli.stderr()}`)), 15_000);
    const check = () => {
      const m = new RegExp(`${label.source} (http://\\S+)`).exec(cli.stdout());
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    cli.child.stdout!.on('data', check);
    void cli.exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`storebridge ${args[0]} exited (${code}): ${cli.stderr()}`));
    });
  });
  return {
    cli,
    url,
    stop: async () => {
      if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGTERM');
      await cli.exit;
    },
  };
}
