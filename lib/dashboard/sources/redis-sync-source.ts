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
import { RedisSyncHealth, syncNamespace, type RedisConnection, type SyncNamespaceOptions } from '../../sync/redis-sync-state';
import type { RunRecord } from '../../sync/sync-health';
import type { SyncMode } from '../../sync/sync-run';
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

/**
 * @example
 * ```ts
 * import { createDashboardRouter, createRedisSyncSource } from 'storebridge/dashboard';
 * const sync = createRedisSyncSource({ connection: 'redis://127.0.0.1:6379' }); // same prefix/queue as the workers
 * app.use('/ops', createDashboardRouter({ sync, basePath: '/ops' }));
 * ```
 */
export function createRedisSyncSource(options: RedisSyncSourceOptions): SyncSource & { readonly queue: unknown } {
  const ns = syncNamespace(options);
  const { redis, owned } = redisClient(options.connection) as { redis: Redis; owned: boolean };
  const health = new RedisSyncHealth(redis, ns);
  const queue: SyncQueue = createSyncQueue({ connection: redis, prefix: ns.prefix, queueName: ns.queueName, attempts: options.attempts, backoffMs: options.backoffMs });
  const pausedKey = `${ns.ns}@paused`;
  if (owned) {
    // Reads fail or time out while Redis is down, and the page says so: no unhandled 'error' event.
    redis.on('error', () => undefined);
  }
  (queue.queue as unknown as { on?(event: string, listener: () => void): void }).on?.('error', () => undefined);
  const label = typeof options.connection === 'string' ? `Redis ${safeRedisUrl(options.connection)} (${ns.ns})` : `Redis (${ns.ns})`;

  return {
    label,
    capabilities: { runNow: true, pause: true },
    queue: queue.queue,
    async connections() {
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
    },
    history: (name: string, limit: number): Promise<RunRecord[]> => health.history(name, limit),
    runNow: (name) => queue.runNow(name),
    async pause(name) {
      const s = (await queue.connections()).find((c) => c.id === name);
      if (!s) return false;
      const record: PausedView = { intervalMs: s.intervalMs, pausedAt: new Date().toISOString(), ...(s.mode ? { mode: s.mode } : {}) };
      // Saved first: if removing the scheduler fails, "Resume" still restores what was there.
      await redis.hset(pausedKey, name, JSON.stringify(record));
      await queue.removeConnection(name);
      return true;
    },
    async resume(name) {
      const p = parsePaused((await redis.hget(pausedKey, name)) ?? undefined);
      if (!p) return false;
      await queue.addConnection({ id: name, intervalMs: p.intervalMs, ...(p.mode ? { mode: p.mode } : {}) });
      await redis.hdel(pausedKey, name);
      return true;
    },
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
