/**
 * The consumer side of the BullMQ scheduler: a worker process runs sync jobs for any connection,
 * resolving each connection's client options (URL, key) and sink from the service's own registry.
 *
 * One connection never runs twice at once, across workers: before a run the worker takes the
 * connection's Redis run lock (`SET NX PX`, renewed while the run goes on, released by its holder
 * only), and every checkpoint save is fenced by that lock. A tick that finds the lock held by
 * another job is *skipped* (as the in-process scheduler does); a job that finds its *own* lock — a
 * worker ran it and died — waits for that lock to expire, then resumes from the checkpoint.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Job, Worker } from 'bullmq';
import type { Entity } from '../contract/entities';
import type { StoreAdapter } from '../adapter';
import type { GuardedAdapter } from '../adapter-guard';
import { z } from 'zod';
import { defineOptions, opt } from '../options';
import { retryDecision, backoffDelay, type AttemptFailure, type RetryOptions, type RetryPolicy } from '../http/retry';
import { createStoreClient, type StoreClient } from '../client/store-client';
import type { StoreClientOptions } from '../client/client-options';
import type { CheckpointStore } from './checkpoint-store';
import { runSync, type RunError, type SyncEvent, type SyncMode, type SyncReport } from './sync-run';
import { SyncRunFailedError } from './sync-errors';
import { historySizeOption } from './sync-health';
import { notifyObservers, runObservation, type SyncObserver, type SyncOutcome } from './sync-observer';
import { checkConnectionId, SYNC_JOB_BACKOFF, syncJobRetry, type SyncJobData } from './bullmq-sync-queue';
import { loadBullmq } from './bullmq-load';
import { redisClient } from './redis-connect';
import { RedisCheckpointStore, RedisRunLock, RedisSyncHealth, SYNC_NAMESPACE_OPTIONS, syncNamespace, SyncLockLostError, type RedisConnection, type SyncNamespaceOptions } from './redis-sync-state';

/** A connection as the worker's registry resolves it. */
export interface ResolvedConnection {
  /** A client, or the options to create one (created per run, so `stats` are per run). */
  client: StoreClient | StoreClientOptions;
  sink: StoreAdapter | GuardedAdapter;
  mode?: SyncMode;
  entities?: readonly Entity[];
  strategy?: 'auto' | 'offset' | 'cursor';
  concurrency?: number;
}

export interface SyncWorkerOptions extends SyncNamespaceOptions {
  /** Redis: a URL, ioredis options, or an ioredis client (kept open by `close()`). */
  connection: RedisConnection;
  /**
   * The connection registry: URL, key and sink for a connection id; `undefined` when the id is
   * unknown (the job then fails without retry). Keys stay here, never in Redis.
   */
  resolveConnection(id: string): Promise<ResolvedConnection | undefined> | ResolvedConnection | undefined;
  /**
   * Where checkpoints live. Default: `RedisCheckpointStore` on the same Redis, with saves fenced by
   * the run lock. Another store must be shared by every worker, or a run cannot resume elsewhere.
   */
  checkpoints?: CheckpointStore;
  /** Connections this worker runs at the same time. Default 4. */
  concurrency?: number;
  /**
   * How long a silent worker keeps a connection (ms): the TTL of the run lock and of BullMQ's job
   * lock, both renewed while a run goes on. A crashed worker's run is taken over after about
   * `lockTtlMs + stalledIntervalMs`. Default 30,000.
   */
  lockTtlMs?: number;
  /** How often BullMQ looks for jobs of crashed workers (ms). Default 30,000. */
  stalledIntervalMs?: number;
  /** Recoveries of one job from crashed workers before it is failed. Default 2. */
  maxStalledCount?: number;
  /** Names this worker in health records and BullMQ. Default `<hostname>:<pid>`. */
  name?: string;
  /** Metrics, logs… Each run and skipped tick is observed. */
  observers?: readonly SyncObserver[];
  /** Record each connection's last run in Redis for `syncHealthHandler(worker.health)`. Default true. */
  recordHealth?: boolean;
  /** Runs kept in each connection's history in Redis (the dashboard's charts and tables). Default 50; 0 keeps none. */
  historySize?: number;
  /** Progress events of runs, with the job they belong to. */
  onEvent?(event: SyncEvent, context: { connectionId: string; jobId: string }): void;
  /** Worker-level errors (Redis connection, scheduling); default: ignored. */
  onError?(error: Error): void;
  /** Start taking jobs at once. Default true (else call `worker.worker.run()`). */
  autorun?: boolean;
  /**
   * The retry policy of runs that stop early (give the queue the same): the wait before each retry
   * (`delay`, `backoffLimit`, `jitter`) and which failures are retried (`statusCodes`,
   * `retryOnTimeout`; network and sink failures are). A run the policy does not retry (the store
   * refused the key, say) fails its job at once. Default `SYNC_JOB_RETRY`.
   */
  retry?: number | RetryOptions;
}

/** What a sync job returns (kept by BullMQ with the completed job). */
export interface SyncJobResult {
  outcome: SyncOutcome;
  connection: string;
  jobid?: number;
  resumed?: boolean;
  products?: number;
  orders?: number;
  worker: string;
}

/** The BullMQ worker (bullmq's `Worker`; cast it for the full API, e.g. its events). */
export interface SyncWorkerHandle {
  readonly name: string;
  waitUntilReady(): Promise<unknown>;
  /** Starts taking jobs (when created with `autorun: false`). */
  run(): Promise<void>;
  isRunning(): boolean;
  pause(doNotWaitActive?: boolean): Promise<void>;
  resume(): void;
}

export interface SyncWorker {
  readonly worker: SyncWorkerHandle;
  readonly name: string;
  /** Last runs recorded by the workers of this queue (shared through Redis). */
  readonly health: RedisSyncHealth;
  /** Connections running on this worker now. */
  running(): string[];
  /**
   * Stops taking jobs and waits for the runs in progress. `abort: true` aborts them instead: each
   * keeps its checkpoint, and its job is retried (by any worker) from there.
   */
  close(options?: { abort?: boolean }): Promise<void>;
}

/** The worker's options, declared once (`lib/options.ts`: a bad value or an unknown name throws `InvalidOptionError`). */
const parseOptions = defineOptions('createSyncWorker', {
  connection: opt.redis<RedisConnection>(),
  ...SYNC_NAMESPACE_OPTIONS,
  resolveConnection: opt.fn<SyncWorkerOptions['resolveConnection']>('a function (connection id → {client, sink})'),
  checkpoints: opt.object<CheckpointStore>('a CheckpointStore', (v) => typeof (v as CheckpointStore).load === 'function' && typeof (v as CheckpointStore).save === 'function').optional(),
  concurrency: opt.int({ min: 1 }).default(4),
  lockTtlMs: opt.int({ min: 100, unit: 'ms' }).default(30_000),
  stalledIntervalMs: opt.int({ min: 100, unit: 'ms' }).default(30_000),
  maxStalledCount: opt.int({ min: 0 }).default(2),
  name: opt.text('a non-empty string without "|"').refine((n) => !n.includes('|'), 'must be a non-empty string without "|"').optional(),
  observers: z.array(opt.object<SyncObserver>('a sync observer'), { error: 'must be an array of sync observers' }).optional(),
  recordHealth: opt.boolean().optional(),
  historySize: historySizeOption(),
  onEvent: opt.fn<NonNullable<SyncWorkerOptions['onEvent']>>().optional(),
  onError: opt.fn<NonNullable<SyncWorkerOptions['onError']>>().optional(),
  autorun: opt.boolean().optional(),
  retry: opt.retryOptions(),
});

/**
 * @example
 * ```ts
 * import { createSyncWorker, createSyncMetrics } from 'storebridge/sync';
 * const worker = createSyncWorker({
 *   connection: process.env.REDIS_URL!,
 *   async resolveConnection(id) {
 *     const c = await registry.get(id);                    // your table of connections
 *     if (!c) return undefined;
 *     return { client: { baseUrl: c.url, svcKey: await secrets.get(c.keyRef), pageSize: 100 }, sink: sinkFor(id) };
 *   },
 *   observers: [createSyncMetrics(metrics)],
 * });
 * process.on('SIGTERM', () => void worker.close());
 * ```
 */
export function createSyncWorker(options: SyncWorkerOptions): SyncWorker {
  const w = workerParts(options);
  const { Worker } = loadBullmq();
  const worker = new Worker<SyncJobData, SyncJobResult>(w.queueName, (job, token) => processJob(w, job, token), {
    connection: w.redis,
    prefix: w.prefix,
    name: w.name,
    concurrency: w.concurrency,
    lockDuration: w.lockTtlMs,
    stalledInterval: w.stalledIntervalMs,
    maxStalledCount: w.maxStalledCount,
    autorun: options.autorun ?? true,
    // The wait before a retry: the retry policy's (a legacy `backoffMs` a job carries is its first delay).
    settings: { backoffStrategy: (attemptsMade: number, _type?: string, _err?: Error, job?: { opts?: { backoff?: unknown } }) => retryWait(w.retry, attemptsMade, job) },
  });
  worker.on('error', (err) => {
    try {
      options.onError?.(err);
    } catch {
      // an error callback must not crash the worker
    }
  });

  return {
    worker: worker as unknown as SyncWorkerHandle,
    name: w.name,
    health: w.health,
    running: () => [...w.active.values()].map((a) => a.connection),
    async close(o = {}) {
      if (o.abort) for (const a of w.active.values()) a.controller.abort(new Error('the worker is shutting down'));
      await worker.close();
      if (w.owned) await w.redis.quit().catch(() => undefined);
    },
  };
}

/** What a worker's jobs share, from its checked options. */
interface WorkerParts {
  readonly options: SyncWorkerOptions;
  readonly name: string;
  readonly prefix: string;
  readonly queueName: string;
  readonly concurrency: number;
  readonly lockTtlMs: number;
  readonly stalledIntervalMs: number;
  readonly maxStalledCount: number;
  readonly redis: ReturnType<typeof redisClient>['redis'];
  readonly owned: boolean;
  readonly lock: RedisRunLock;
  readonly redisCheckpoints: RedisCheckpointStore;
  readonly health: RedisSyncHealth;
  readonly observers: readonly SyncObserver[];
  readonly active: Map<string, { connection: string; controller: AbortController }>;
  readonly retry: RetryPolicy;
}

function workerParts(options: SyncWorkerOptions): WorkerParts {
  const { concurrency, lockTtlMs, stalledIntervalMs, maxStalledCount, historySize, ...o } = parseOptions(options);
  const { prefix, queueName } = syncNamespace(o);
  const name = o.name ?? `${hostname()}:${process.pid}`;
  const retry = syncJobRetry({ retry: o.retry as RetryOptions | undefined });
  const { redis, owned } = redisClient(o.connection);
  const ns = { prefix, queueName };
  const health = new RedisSyncHealth(redis, { ...ns, historySize });
  return {
    options,
    name,
    prefix,
    queueName,
    concurrency,
    lockTtlMs,
    stalledIntervalMs,
    maxStalledCount,
    redis,
    owned,
    lock: new RedisRunLock(redis, lockTtlMs, ns),
    redisCheckpoints: new RedisCheckpointStore(redis, ns),
    health,
    observers: [...(options.observers ?? []), ...(options.recordHealth === false ? [] : [health])],
    active: new Map(),
    retry,
  };
}

/** The wait before retry `attemptsMade` of a job: the policy's, or from the first delay a job carries (`backoffMs`). */
export function retryWait(policy: RetryPolicy, attemptsMade: number, job?: { opts?: { backoff?: unknown } }): number {
  const backoff = job?.opts?.backoff as { type?: string; delay?: number } | undefined;
  const carried = backoff?.type === SYNC_JOB_BACKOFF && typeof backoff.delay === 'number' ? backoff.delay : undefined;
  return backoffDelay(carried === undefined ? policy : { ...policy, delay: (n) => carried * 2 ** (n - 1) }, Math.max(1, attemptsMade));
}

/** A run's error as the retry policy sees it. */
export function failureOfRun(error: RunError): AttemptFailure {
  if (error.status !== undefined && error.code !== 'STORE_RESPONSE_TOO_LARGE') return { kind: 'status', status: error.status };
  if (error.code === 'STORE_TIMEOUT') return { kind: 'timeout' };
  // Another attempt reads the same answer: a broken contract, a walk that cannot go on, a body too large.
  if (error.code === 'STORE_CONTRACT' || error.code === 'STORE_PAGING' || error.code === 'STORE_RESPONSE_TOO_LARGE') return { kind: 'network', retryable: false };
  // Network failures, sink failures (a database restarting), an aborted run (a worker shutting down).
  return { kind: 'network', retryable: error.retryable ?? true };
}

/** Takes the connection's run lock for a job, or says why not (delayed until a dead worker's lock expires, or skipped). */
async function claim(w: WorkerParts, job: Job<SyncJobData, SyncJobResult>, connectionId: string, token?: string): Promise<string | SyncJobResult> {
  const { DelayedError } = loadBullmq();
  const jobId = job.id ?? '';
  const lockToken = `${w.name}|${randomUUID()}|${jobId}`;
  const got = await w.lock.acquire(connectionId, lockToken);
  if (got.acquired) return lockToken;
  const holderJob = got.holder?.split('|').slice(2).join('|');
  if (got.holder === null || holderJob === jobId) {
    // This very job, left running by a worker that died (or the lock expired as we asked):
    // come back once that lock has expired, then resume from the checkpoint.
    await job.moveToDelayed(Date.now() + got.ttlMs + 25, token);
    throw new DelayedError();
  }
  await notifyObservers(w.observers, { type: 'skipped', connection: connectionId, at: Date.now(), reason: 'busy', worker: w.name, jobId });
  return { outcome: 'skipped', connection: connectionId, worker: w.name };
}

async function processJob(w: WorkerParts, job: Job<SyncJobData, SyncJobResult>, token?: string): Promise<SyncJobResult> {
  const { UnrecoverableError } = loadBullmq();
  const connectionId = job.data?.connectionId;
  try {
    checkConnectionId(connectionId, 'job.data.connectionId');
  } catch {
    throw new UnrecoverableError('the job has no valid connectionId');
  }
  const claimed = await claim(w, job, connectionId, token);
  if (typeof claimed !== 'string') return claimed;
  const jobId = job.id ?? '';
  const controller = new AbortController();
  w.active.set(jobId, { connection: connectionId, controller });
  const keepAlive = w.lock.keepAlive(connectionId, claimed, () => controller.abort(new SyncLockLostError(connectionId)));
  try {
    return await runJob(w, job, connectionId, claimed, controller);
  } finally {
    w.active.delete(jobId);
    await keepAlive.stop();
    await w.lock.release(connectionId, claimed).catch(() => undefined);
  }
}

/** Runs the sync of a claimed connection, reports it, and turns an early stop into a retry or a failure. */
async function runJob(w: WorkerParts, job: Job<SyncJobData, SyncJobResult>, connectionId: string, lockToken: string, controller: AbortController): Promise<SyncJobResult> {
  const { UnrecoverableError } = loadBullmq();
  const jobId = job.id ?? '';
  const { options } = w;
  const resolved = await options.resolveConnection(connectionId);
  if (!resolved) throw new UnrecoverableError(`connection "${connectionId}" is not in this worker's registry`);
  const client = resolved.client && 'walk' in resolved.client ? resolved.client : createStoreClient(resolved.client);
  const before = { ...client.stats };
  const startedAt = Date.now();
  let report: SyncReport;
  try {
    report = await runSync({
      connectionId,
      client,
      sink: resolved.sink,
      checkpoints: options.checkpoints ?? w.redisCheckpoints.fencedBy(w.lock.key(connectionId), lockToken),
      mode: job.data.mode ?? resolved.mode,
      entities: resolved.entities,
      strategy: resolved.strategy,
      concurrency: resolved.concurrency,
      signal: controller.signal,
      onEvent: options.onEvent ? (e) => options.onEvent!(e, { connectionId, jobId }) : undefined,
    });
  } catch (err) {
    if (err instanceof SyncLockLostError) throw new UnrecoverableError(err.message);
    throw err;
  }
  const attempt = job.attemptsMade + (job.stalledCounter ?? 0) + 1;
  const lockLost = report.error?.name === 'SyncLockLostError' || controller.signal.reason instanceof SyncLockLostError;
  // A run that lost its lock still counts in metrics, but must not overwrite the health record
  // of the worker that now owns the connection.
  await notifyObservers(
    lockLost ? w.observers.filter((o) => o !== w.health) : w.observers,
    runObservation(report, { startedAt, endedAt: Date.now(), requests: client.stats.requests - before.requests, retries: client.stats.retries - before.retries, attempt, worker: w.name, jobId }),
  );
  if (report.error) {
    // Another worker owns the connection now: retrying this job would only be skipped. A failure the
    // retry policy does not retry (the store refused the key, …) fails the job at once.
    if (lockLost || !retryDecision(w.retry, 0, failureOfRun(report.error)).retry) throw new UnrecoverableError(new SyncRunFailedError(report).message);
    throw new SyncRunFailedError(report);
  }
  return { outcome: report.ok ? 'ok' : 'store_issues', connection: connectionId, jobid: report.jobid, resumed: report.resumed, products: report.products.count, orders: report.orders.count, worker: w.name };
}
