/**
 * The producer side of the BullMQ scheduler: each connection is a BullMQ *job scheduler*
 * (`sync:<connection id>`, repeating every `intervalMs`) whose iterations are jobs
 * `repeat:sync:<connection id>:<slot ms>` — one job per connection and slot, deduplicated by
 * BullMQ. Job data carries the connection id (and mode) only: no URL, no key. Workers
 * (`createSyncWorker`) resolve the rest from their connection registry.
 */
import type { JobsOptions, Queue } from 'bullmq';
import { z } from 'zod';
import { retryPolicy, type RetryOptions, type RetryPolicy } from '../http/retry';
import { defineOptions, opt, readOption } from '../options';
import type { SyncMode } from './sync-run';
import { SYNC_NAMESPACE_OPTIONS, syncNamespace, type RedisConnection, type SyncNamespaceOptions } from './redis-sync-state';
import { redisClient } from './redis-connect';
import { loadBullmq } from './bullmq-load';

/** What a sync job carries (nothing secret). */
export interface SyncJobData {
  connectionId: string;
  mode?: SyncMode;
}

export const SYNC_JOB_NAME = 'sync';

/** The BullMQ backoff type of sync jobs: the worker computes each wait from its retry policy. */
export const SYNC_JOB_BACKOFF = 'storebridge-retry';

/**
 * The retry policy of sync jobs unless told otherwise (`lib/http/retry.ts`, ky's shape): 2 retries
 * (3 attempts), waiting about 5 s, then 10 s (doubling, at most 5 minutes, full jitter). Which
 * failures are retried follows the same policy as the caller's requests: a store that refused the
 * key (401) or answered 400/404 is not retried; 5xx, 429, timeouts, network and sink failures are.
 */
export const SYNC_JOB_RETRY: RetryOptions = { limit: 2, delay: (n) => 5_000 * 2 ** (n - 1), backoffLimit: 300_000 };

/** The options that make the sync jobs' retry policy, as the queue and the worker declare them. */
const JOB_RETRY_OPTIONS = {
  retry: opt.retryOptions(),
  attempts: opt.int({ min: 1 }).optional(),
  backoffMs: opt.int({ min: 1, unit: 'ms' }).optional(),
};
const parseJobRetry = defineOptions('the sync jobs\' retry', JOB_RETRY_OPTIONS);

/**
 * The sync jobs' retry policy from `retry` (and the older `attempts` / `backoffMs`, which set its
 * limit and its first delay). The queue takes its limit (BullMQ attempts = limit + 1); the worker
 * takes the rest (the waits, what is retried).
 */
export function syncJobRetry(options: { retry?: number | RetryOptions; attempts?: number; backoffMs?: number }): RetryPolicy {
  const o = parseJobRetry({ retry: options.retry, attempts: options.attempts, backoffMs: options.backoffMs });
  const { attempts, backoffMs } = o;
  const legacy: RetryOptions = {
    ...(attempts !== undefined ? { limit: attempts - 1 } : {}),
    ...(backoffMs !== undefined ? { delay: (n: number) => backoffMs * 2 ** (n - 1) } : {}),
  };
  return retryPolicy(o.retry as RetryOptions | undefined, { ...SYNC_JOB_RETRY, ...legacy });
}
export const schedulerIdOf = (connectionId: string): string => `sync:${connectionId}`;

/**
 * A BullMQ job, as far as storebridge's types describe it (the object is bullmq's `Job`; cast it for
 * the full API). Declared structurally so that the types of `storebridge/sync` do not need bullmq.
 */
export interface SyncJobHandle {
  id?: string;
  name: string;
  data: SyncJobData;
  attemptsMade: number;
  failedReason: string;
  returnvalue: unknown;
  getState(): Promise<string>;
}

/** The BullMQ queue (bullmq's `Queue<SyncJobData>`; cast it for the full API). */
export interface SyncQueueHandle {
  readonly name: string;
  /** Adds one job (e.g. with your own `jobId`); `runNow` is the usual way. */
  add(name: string, data: SyncJobData, options?: { jobId?: string; delay?: number; [option: string]: unknown }): Promise<SyncJobHandle>;
  getJob(id: string): Promise<SyncJobHandle | undefined>;
  getActiveCount(): Promise<number>;
  getWaitingCount(): Promise<number>;
  getDelayedCount(): Promise<number>;
  getFailedCount(): Promise<number>;
  getCompletedCount(): Promise<number>;
  getFailed(start?: number, end?: number): Promise<SyncJobHandle[]>;
  getCompleted(start?: number, end?: number): Promise<SyncJobHandle[]>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Removes the queue and all its jobs (not storebridge's state, lock and health keys). */
  obliterate(options?: { force?: boolean; count?: number }): Promise<void>;
}

export interface SyncQueueOptions extends SyncNamespaceOptions {
  /** Redis: a URL, ioredis options, or an ioredis client (kept open by `close()`). */
  connection: RedisConnection;
  /**
   * The retry policy of a run that stops early (store down, sink failing): each retry resumes from
   * the checkpoint. Its `limit` sets the job's attempts here; give the workers the same `retry`
   * (they compute the waits and decide what is retried). Default `SYNC_JOB_RETRY`.
   */
  retry?: number | RetryOptions;
  /** Attempts per run: `retry.limit + 1` (kept for compatibility; `retry` wins). Default 3. */
  attempts?: number;
  /** First retry delay (ms), doubled each retry, carried by each job to the worker (kept for compatibility). Default 5,000. */
  backoffMs?: number;
  /** Finished jobs kept for inspection (completed and failed, each). Default 1,000. */
  keepJobs?: number;
}

export interface ScheduledConnection {
  /** The connection's id: its name in the workers' registry and its checkpoint key. */
  id: string;
  /** The connection's synchronization interval. */
  intervalMs: number;
  /** Default: the mode the worker's registry gives (else `full`). */
  mode?: SyncMode;
  /** First run no earlier than this (Unix ms or Date). Default: now. */
  startAt?: number | Date;
}

export interface ConnectionSchedule {
  id: string;
  intervalMs: number;
  mode?: SyncMode;
  /** When the next run is due (Unix ms), if known. */
  next?: number;
}

export interface SyncQueue {
  /** The BullMQ queue (for dashboards, counts, events: cast to bullmq's `Queue` for all of it). */
  readonly queue: SyncQueueHandle;
  /** Schedules a connection (or changes its interval/mode): idempotent, keyed by id. */
  addConnection(connection: ScheduledConnection): Promise<void>;
  /** Stops scheduling a connection (a run in progress finishes); false when it was not scheduled. */
  removeConnection(id: string): Promise<boolean>;
  connections(): Promise<ConnectionSchedule[]>;
  /** Queues one run now, outside the schedule (still never concurrent with another run of it). */
  runNow(id: string, options?: { mode?: SyncMode }): Promise<string>;
  /** Closes the queue (and the Redis client, when it was created from a URL or options). */
  close(): Promise<void>;
}

const CONNECTION_ID_RULE = 'must be 1-200 printable ASCII characters without spaces';
/** A sync connection's id: its name in the workers' registry, its scheduler's and its keys' part. */
const connectionId = () => z.string({ error: CONNECTION_ID_RULE }).regex(/^[\x21-\x7e]{1,200}$/, CONNECTION_ID_RULE);

/** A connection id given by itself (an argument, a job's data), read as an `id` option is. */
export function checkConnectionId(id: unknown, option = 'id'): string {
  return readOption(option, connectionId(), id);
}

const parseOptions = defineOptions('createSyncQueue', {
  connection: opt.redis<RedisConnection>(),
  ...SYNC_NAMESPACE_OPTIONS,
  ...JOB_RETRY_OPTIONS,
  keepJobs: opt.int({ min: 0 }).default(1_000),
});

const parseScheduled = defineOptions('addConnection', {
  id: connectionId(),
  intervalMs: opt.int({ min: 1, unit: 'ms' }),
  mode: opt.oneOf(['full', 'incremental']).optional(),
  startAt: z.custom<number | Date>((v) => v !== null && Number.isFinite(new Date(v as number | Date).getTime()), { error: 'must be a Unix ms time or a Date' }).optional(),
});

/**
 * @example
 * ```ts
 * import { createSyncQueue } from 'storebridge/sync';
 * const syncQueue = createSyncQueue({ connection: 'redis://127.0.0.1:6379' });
 * for (const c of await registry.all()) await syncQueue.addConnection({ id: c.id, intervalMs: c.intervalMs });
 * await syncQueue.removeConnection('shop-gone');
 * await syncQueue.close();
 * ```
 */
export function createSyncQueue(options: SyncQueueOptions): SyncQueue {
  const o = parseOptions(options);
  const { prefix, queueName } = syncNamespace(o);
  const policy = syncJobRetry(o as Pick<SyncQueueOptions, 'retry' | 'attempts' | 'backoffMs'>);
  const { backoffMs, keepJobs } = o;
  const { redis, owned } = redisClient(o.connection);
  const { Queue } = loadBullmq();
  const queue: Queue<SyncJobData> = new Queue<SyncJobData>(queueName, { connection: redis, prefix });
  // BullMQ re-emits its connection's errors on the queue; unheard, it prints them with a stack.
  // Each call that fails rejects anyway.
  queue.on('error', () => undefined);
  const jobOptions: JobsOptions = {
    attempts: policy.limit + 1,
    // The worker's policy computes each wait; a legacy `backoffMs` travels with the job.
    backoff: { type: SYNC_JOB_BACKOFF, ...(backoffMs !== undefined ? { delay: backoffMs } : {}) },
    removeOnComplete: { count: keepJobs },
    removeOnFail: { count: keepJobs },
  };

  return {
    queue: queue as unknown as SyncQueueHandle,
    async addConnection(c) {
      const { id, intervalMs: every, mode, startAt } = parseScheduled(c);
      const startDate = startAt === undefined ? undefined : new Date(startAt).getTime();
      const data: SyncJobData = { connectionId: id, ...(mode ? { mode } : {}) };
      await queue.upsertJobScheduler(schedulerIdOf(id), { every, ...(startDate !== undefined ? { startDate } : {}) }, { name: SYNC_JOB_NAME, data, opts: jobOptions });
    },
    async removeConnection(id) {
      return queue.removeJobScheduler(schedulerIdOf(checkConnectionId(id)));
    },
    async connections() {
      const all = await queue.getJobSchedulers(0, -1, true);
      return all
        .filter((s) => s.key.startsWith('sync:'))
        .map((s) => {
          const data = s.template?.data as SyncJobData | undefined;
          return {
            id: s.key.slice('sync:'.length),
            intervalMs: Number(s.every),
            ...(data?.mode ? { mode: data.mode } : {}),
            ...(s.next !== undefined ? { next: s.next } : {}),
          };
        });
    },
    async runNow(id, o = {}) {
      const data: SyncJobData = { connectionId: checkConnectionId(id), ...(o.mode ? { mode: o.mode } : {}) };
      const job = await queue.add(SYNC_JOB_NAME, data, jobOptions);
      return job.id!;
    },
    async close() {
      await queue.close();
      if (owned) await redis.quit().catch(() => undefined);
    },
  };
}
