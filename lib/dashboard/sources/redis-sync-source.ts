/**
 * The sync side of the dashboard over Redis and BullMQ: the health hash and run histories the
 * workers write (`RedisSyncHealth`), the connections' job schedulers (`createSyncQueue`), and the
 * dashboard's own record of paused connections (`NS@paused`, a hash: connection → JSON
 * `PausedView`).
 *
 * "Pause" removes the connection's BullMQ job scheduler (BullMQ's own `queue.pause()` would stop
 * every connection of the queue, not one) after saving its interval and mode; "Resume" upserts the
 * scheduler again from that record. A run in progress finishes. A service that re-adds its
 * schedulers at start-up (`addConnection` for every connection) resumes paused ones: the row then
 * shows the schedule again, and the stale pause record is dropped on the next "Resume".
 */
import type { Redis } from 'ioredis';
import { compareIds } from '../../adapter';
import { createSyncQueue, type SyncQueue } from '../../sync/bullmq-sync-queue';
import { redisClient } from '../../sync/redis-connect';
import { defineOptions, opt } from '../../options';
import { RedisSyncHealth, SYNC_NAMESPACE_OPTIONS, syncNamespace, type RedisConnection, type SyncNamespaceOptions } from '../../sync/redis-sync-state';
import type { RunRecord } from '../../sync/sync-health';
import type { SyncMode } from '../../sync/sync-run';
import { DashboardSourceError } from '../dashboard-errors';
import type { PausedView, SyncConnectionView, SyncSource } from '../dashboard-sources';

export interface RedisSyncSourceOptions extends SyncNamespaceOptions {
  /** Redis: a URL, ioredis options, or an ioredis client (then its owner closes it). */
  connection: RedisConnection;
  /** Attempts of a "Run now" job (as the service's queue). Default 3. */
  attempts?: number;
  /** First retry delay of a "Run now" job (ms). Default 5,000. */
  backoffMs?: number;
}

function parsePaused(text: string | undefined): PausedView | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as Partial<PausedView>;
    if (typeof v.intervalMs !== 'number' || !Number.isSafeInteger(v.intervalMs) || v.intervalMs < 1 || typeof v.pausedAt !== 'string') return undefined;
    const mode: SyncMode | undefined = v.mode === 'full' || v.mode === 'incremental' ? v.mode : undefined;
    return { intervalMs: v.intervalMs, pausedAt: v.pausedAt, ...(mode ? { mode } : {}) };
  } catch {
    return undefined;
  }
}

/** Declared once (`lib/options.ts`); `attempts` and `backoffMs` are the queue's, which reads them again. */
const parseSourceOptions = defineOptions('createRedisSyncSource', {
  connection: opt.redis<RedisConnection>(),
  ...SYNC_NAMESPACE_OPTIONS,
  attempts: opt.int({ min: 1 }).optional(),
  backoffMs: opt.int({ min: 1, unit: 'ms' }).optional(),
});

/**
 * @example
 * ```ts
 * import { createDashboardRouter, createRedisSyncSource } from 'storebridge/dashboard';
 * const sync = createRedisSyncSource({ connection: 'redis://127.0.0.1:6379' }); // same prefix/queue as the workers
 * app.use('/ops', createDashboardRouter({ sync, basePath: '/ops' }));
 * ```
 */
export function createRedisSyncSource(options: RedisSyncSourceOptions): SyncSource & { readonly queue: unknown } {
  parseSourceOptions(options);
  const ns = syncNamespace(options);
  const { redis, owned } = redisClient(options.connection) as { redis: Redis; owned: boolean };
  const health = new RedisSyncHealth(redis, ns);
  const queue: SyncQueue = createSyncQueue({ connection: redis, prefix: ns.prefix, queueName: ns.queueName, attempts: options.attempts, backoffMs: options.backoffMs });
  const pausedKey = `${ns.ns}@paused`;
  (queue.queue as unknown as { on?(event: string, listener: () => void): void }).on?.('error', () => undefined);
  const label = typeof options.connection === 'string' ? `Redis ${safeRedisUrl(options.connection)} (${ns.ns})` : `Redis (${ns.ns})`;
  const reachable = reachability(redis, label);
  /** Runs a read or an action only when Redis is there; else fails at once with the cause. */
  const whenUp = <A extends unknown[], T>(f: (...args: A) => Promise<T>) => async (...args: A): Promise<T> => {
    await reachable();
    return f(...args);
  };

  return {
    label,
    capabilities: { runNow: true, pause: true },
    queue: queue.queue,
    connections: whenUp(async () => {
      const [runs, schedules, paused] = await Promise.all([health.lastRuns(), queue.connections(), redis.hgetall(pausedKey)]);
      const rows = new Map<string, SyncConnectionView>();
      const row = (name: string) => rows.get(name) ?? rows.set(name, { name }).get(name)!;
      for (const r of runs) row(r.connection).lastRun = r;
      for (const s of schedules) row(s.id).schedule = { intervalMs: s.intervalMs, ...(s.mode ? { mode: s.mode } : {}), ...(s.next !== undefined ? { next: s.next } : {}) };
      for (const [name, text] of Object.entries(paused)) {
        const p = parsePaused(text);
        // A scheduler re-added by the service wins over an old pause record.
        if (p && !rows.get(name)?.schedule) row(name).paused = p;
      }
      return [...rows.values()].sort((a, b) => compareIds(a.name, b.name));
    }),
    history: whenUp((name: string, limit: number): Promise<RunRecord[]> => health.history(name, limit)),
    runNow: whenUp((name: string) => queue.runNow(name)),
    pause: whenUp(async (name: string) => {
      const s = (await queue.connections()).find((c) => c.id === name);
      if (!s) return false;
      const record: PausedView = { intervalMs: s.intervalMs, pausedAt: new Date().toISOString(), ...(s.mode ? { mode: s.mode } : {}) };
      // Saved first: if removing the scheduler fails, "Resume" still restores what was there.
      await redis.hset(pausedKey, name, JSON.stringify(record));
      await queue.removeConnection(name);
      return true;
    }),
    resume: whenUp(async (name: string) => {
      const p = parsePaused((await redis.hget(pausedKey, name)) ?? undefined);
      if (!p) return false;
      await queue.addConnection({ id: name, intervalMs: p.intervalMs, ...(p.mode ? { mode: p.mode } : {}) });
      await redis.hdel(pausedKey, name);
      return true;
    }),
    async close() {
      // While Redis is down, a graceful close would wait for it forever: drop the connection instead.
      const up = redis.status === 'ready';
      const closing = queue.close().catch(() => undefined);
      if (up) await Promise.race([closing, new Promise((r) => setTimeout(r, 2_000).unref())]);
      if (owned) {
        if (up) await redis.quit().catch(() => undefined);
        redis.disconnect();
      }
    },
  };
}

/** How long a page waits for a first connection attempt to end (a refused one ends at once). */
const FIRST_CONNECT_WAIT_MS = 1_000;

/**
 * A check to run before each command: resolves when Redis is ready, else throws the reason.
 * ioredis queues commands while it reconnects (BullMQ needs `maxRetriesPerRequest: null`), so a read
 * against a Redis that is down would wait for the dashboard's time limit and then say only that it
 * did not answer. This says why (`cannot be reached (ECONNREFUSED)`) at once.
 */
function reachability(redis: Redis, label: string): () => Promise<void> {
  let cause: string | undefined;
  // Also what keeps an 'error' event from going unhandled while Redis is down (on a client the app
  // passed in, it quiets ioredis's "Unhandled error event" line): the page and `onError` say it.
  redis.on('error', (err: NodeJS.ErrnoException) => {
    cause = typeof err?.code === 'string' ? err.code : /^[A-Z]{3,}\b/.exec(err?.message ?? '')?.[0] ?? 'error';
  });
  redis.on('ready', () => (cause = undefined));
  return async () => {
    if (redis.status === 'ready') return;
    if (cause === undefined && ['wait', 'connecting', 'connect'].includes(redis.status)) {
      // The first attempt is under way: its outcome comes within milliseconds on a refused port.
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          for (const e of ['ready', 'error', 'close']) redis.off(e, done);
          resolve();
        };
        const timer = setTimeout(done, FIRST_CONNECT_WAIT_MS);
        for (const e of ['ready', 'error', 'close']) redis.once(e, done);
      });
      if ((redis.status as string) === 'ready') return;
    }
    // Not ready with no known cause (slow first connect): the command goes ahead under the time limit.
    if (cause !== undefined) throw new DashboardSourceError(label, `cannot be reached (${cause})`);
    if (redis.status === 'end') throw new DashboardSourceError(label, 'is closed');
  };
}

/** A Redis URL without its password, for labels. */
export function safeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return 'Redis';
  }
}
