/**
 * Sync state shared by every worker through Redis: checkpoints (and so the wire `jobid`), the
 * per-connection run lock, and the last run of each connection for the health endpoint.
 *
 * Keys, for a namespace `NS` (`<prefix>:<queue>` of the BullMQ queue, `storebridge:sync` by
 * default): `NS@state:<connection>` (JSON `SyncState`), `NS@lock:<connection>` (the run lock's
 * token, with a TTL), `NS@health` (a hash: connection → its last run), `NS@history:<connection>`
 * (its last runs, newest first, trimmed to the history size, deflated), every run in the compact
 * layout of `encodeRun`. The `@` keeps them apart from BullMQ's own `NS:*` keys.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { StorebridgeError } from '../errors';
import { defineOptions, opt, readOption } from '../options';
import { parseSyncState, type CheckpointStore, type SyncState } from './checkpoint-store';
import { checkHistorySize, lastRunOf, runRecordOf, type LastRun, type LastRunEntity, type RunRecord, type SyncHistorySource } from './sync-health';
import type { SyncObservation, SyncObserver } from './sync-observer';
import { asIoredis } from './redis-connect';
import type { RedisClientLike } from './redis-types';

export type { RedisClientLike, RedisConnectionOptions, RedisConnection } from './redis-types';

export interface SyncNamespaceOptions {
  /** BullMQ key prefix. Default `storebridge`. */
  prefix?: string;
  /** The queue's name. Default `sync`. */
  queueName?: string;
}

export const DEFAULT_PREFIX = 'storebridge';
export const DEFAULT_QUEUE_NAME = 'sync';

const PREFIX_RULE = 'must be 1-100 letters, digits, or . _ - { }';
const QUEUE_NAME_RULE = 'must be 1-100 letters, digits, or . _ -';

/** The namespace options (`prefix`, `queueName`), as every Redis-backed sync factory declares them. */
export const SYNC_NAMESPACE_OPTIONS = {
  prefix: z.string({ error: PREFIX_RULE }).regex(/^[A-Za-z0-9_.{}-]{1,100}$/, PREFIX_RULE).optional(),
  queueName: z.string({ error: QUEUE_NAME_RULE }).regex(/^[A-Za-z0-9_.-]{1,100}$/, QUEUE_NAME_RULE).optional(),
};

const parseNamespace = defineOptions('the sync namespace', SYNC_NAMESPACE_OPTIONS);

/** `<prefix>:<queue>`, checked (only those two members of `options` are read). */
export function syncNamespace(options: SyncNamespaceOptions = {}): { prefix: string; queueName: string; ns: string } {
  const n = parseNamespace({ prefix: options.prefix, queueName: options.queueName });
  const prefix = n.prefix ?? DEFAULT_PREFIX;
  const queueName = n.queueName ?? DEFAULT_QUEUE_NAME;
  return { prefix, queueName, ns: `${prefix}:${queueName}` };
}

/** Refused by a fenced checkpoint save: this worker no longer holds the connection's run lock. */
export class SyncLockLostError extends StorebridgeError {
  override readonly name = 'SyncLockLostError';
  readonly code = 'SYNC_LOCK_LOST';
  constructor(readonly connectionId: string) {
    super(`the run lock of connection "${connectionId}" was lost (another worker may run it now); checkpoint not saved`);
  }
}

// SET the state only while KEYS[2] (the lock) still holds ARGV[2] (our token).
const FENCED_SET = `if redis.call('get', KEYS[2]) == ARGV[2] then redis.call('set', KEYS[1], ARGV[1]) return 1 else return 0 end`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Checkpoints in Redis, one JSON value per connection (`SET` replaces it atomically), so a run
 * that died on one worker resumes on another. A value that is not a `SyncState` is refused with a
 * clear error rather than silently restarting the connection.
 *
 * @example
 * ```ts
 * const checkpoints = new RedisCheckpointStore(new Redis(), { prefix: 'storebridge', queueName: 'sync' });
 * createSyncConnection({ id: 'shop-1', client, sink, checkpoints });
 * ```
 */
export class RedisCheckpointStore implements CheckpointStore {
  readonly ns: string;
  private readonly redis: Redis;
  constructor(redis: RedisClientLike, options: SyncNamespaceOptions = {}) {
    this.redis = asIoredis(redis);
    this.ns = syncNamespace(options).ns;
  }

  key(connectionId: string): string {
    return `${this.ns}@state:${connectionId}`;
  }

  async load(connectionId: string): Promise<SyncState | undefined> {
    const text = await this.redis.get(this.key(connectionId));
    if (text === null) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    const state = parseSyncState(value);
    if (!state) throw new Error(`Redis key ${this.key(connectionId)} does not hold a storebridge sync state`);
    return state;
  }

  async save(connectionId: string, state: SyncState): Promise<void> {
    await this.redis.set(this.key(connectionId), JSON.stringify(state));
  }

  /**
   * The same store, with every `save` conditional on `lock` still holding `token` (checked and
   * written in one Lua script): a worker that lost its lock cannot overwrite the checkpoint of the
   * worker that took over; its save fails with `SyncLockLostError`, which ends its run.
   */
  fencedBy(lockKey: string, token: string): CheckpointStore {
    return {
      load: (id) => this.load(id),
      save: async (id, state) => {
        const ok = await this.redis.eval(FENCED_SET, 2, this.key(id), lockKey, JSON.stringify(state), token);
        if (Number(ok) !== 1) throw new SyncLockLostError(id);
      },
    };
  }
}

export type LockAttempt = { acquired: true } | { acquired: false; holder: string | null; ttlMs: number };

/**
 * The per-connection run lock: `SET key token NX PX ttl`, renewed while the run goes on, released
 * only by its holder (compare-and-delete). A holder that dies stops renewing, and the lock expires
 * after `ttlMs`.
 */
export class RedisRunLock {
  readonly ns: string;
  private readonly redis: Redis;
  constructor(
    redis: RedisClientLike,
    readonly ttlMs: number,
    options: SyncNamespaceOptions = {},
  ) {
    this.redis = asIoredis(redis);
    readOption('lockTtlMs', opt.int({ min: 100, unit: 'ms' }), ttlMs);
    this.ns = syncNamespace(options).ns;
  }

  key(connectionId: string): string {
    return `${this.ns}@lock:${connectionId}`;
  }

  async acquire(connectionId: string, token: string): Promise<LockAttempt> {
    const key = this.key(connectionId);
    const r = await this.redis.set(key, token, 'PX', this.ttlMs, 'NX');
    if (r === 'OK') return { acquired: true };
    const [holder, ttl] = await Promise.all([this.redis.get(key), this.redis.pttl(key)]);
    return { acquired: false, holder, ttlMs: Math.max(0, Number(ttl)) };
  }

  /** Pushes the expiry back; false when the lock is no longer ours. */
  async extend(connectionId: string, token: string): Promise<boolean> {
    return Number(await this.redis.eval(EXTEND, 1, this.key(connectionId), token, this.ttlMs)) === 1;
  }

  async release(connectionId: string, token: string): Promise<boolean> {
    return Number(await this.redis.eval(RELEASE, 1, this.key(connectionId), token)) === 1;
  }

  /**
   * Renews the lock every `ttlMs / 3` until `stop()`; calls `onLost` (once) when a renewal finds it
   * gone or taken, or cannot reach Redis before the lock would expire.
   */
  keepAlive(connectionId: string, token: string, onLost: () => void): { stop(): Promise<void> } {
    let lost = false;
    let lastOk = Date.now();
    let pending: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      pending = this.extend(connectionId, token).then(
        (ok) => {
          if (ok) lastOk = Date.now();
          else if (!lost) ((lost = true), onLost());
        },
        () => {
          if (!lost && Date.now() - lastOk >= this.ttlMs) ((lost = true), onLost());
        },
      );
    }, Math.max(30, Math.floor(this.ttlMs / 3)));
    timer.unref?.();
    return {
      stop: async () => {
        clearInterval(timer);
        await pending.catch(() => undefined);
      },
    };
  }
}

/** The version tag of `encodeRun`'s layout (its first member; runs were JSON objects before). */
const RUN_LAYOUT = 2;

type EncodedEntity = [number, number, number, number, number, (number | null)?, (number | null)?];

/** Drops trailing `null`s (absent optional members) from a positional array. */
function trimmed<T extends unknown[]>(a: T): T {
  let end = a.length;
  while (end > 0 && a[end - 1] === null) end--;
  return a.slice(0, end) as T;
}

const encodeEntity = (e: LastRunEntity): EncodedEntity => trimmed([e.count, e.seen, e.written, e.invalid, e.duplicates, e.normalised ?? null, e.fetchedById ?? null]);

function decodeEntity(a: EncodedEntity): LastRunEntity {
  const [count, seen, written, invalid, duplicates, normalised, fetchedById] = a;
  return { count, seen, written, invalid, duplicates, ...(normalised != null ? { normalised } : {}), ...(fetchedById != null ? { fetchedById } : {}) };
}

/**
 * A run as Redis keeps it (a value of the health hash, a line of a connection's history): a JSON
 * array in a fixed order, without the connection (the hash field or the history's key names it),
 * times as Unix ms, `startedAt` only when it is not `at − durationMs`:
 * `[2, outcome, at, durationMs, jobid, resumed 0|1, attempt, worker|null, products, orders, requests,
 * retries, error|null, lastOkAt|null, startedAt?]`, an entity `[count, seen, written, invalid,
 * duplicates, normalised?, fetchedById?]`, trailing absent members left out. About 110 bytes for a
 * run that went well, against about 480 as a JSON object: a fleet keeps a history per connection
 * (docs/scaling-sync.md → Run history, Fleet scale).
 */
export function encodeRun(run: LastRun | RunRecord): string {
  const at = Date.parse(run.at);
  const startedAt = Date.parse(run.startedAt);
  const lastOkAt = 'lastOkAt' in run && run.lastOkAt !== undefined ? Date.parse(run.lastOkAt) : null;
  return JSON.stringify(
    trimmed([
      RUN_LAYOUT,
      run.outcome,
      at,
      run.durationMs,
      run.jobid,
      run.resumed ? 1 : 0,
      run.attempt,
      run.worker ?? null,
      encodeEntity(run.products),
      encodeEntity(run.orders),
      run.requests,
      run.retries,
      run.error ?? null,
      lastOkAt,
      startedAt === at - run.durationMs ? null : startedAt,
    ]),
  );
}

/** Reads what `encodeRun` wrote, or a run kept as a JSON object (the layout before it). */
export function decodeRun(text: string, connection: string): LastRun {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value)) return value as LastRun;
  if (value[0] !== RUN_LAYOUT) throw new Error(`a run record of connection "${connection}" has an unknown layout (${String(value[0])})`);
  const [, outcome, at, durationMs, jobid, resumed, attempt, worker, products, orders, requests, retries, error, lastOkAt, startedAt] = value;
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    connection,
    outcome,
    at: iso(at),
    startedAt: iso(startedAt ?? at - durationMs),
    durationMs,
    jobid,
    resumed: resumed === 1,
    attempt,
    ...(worker != null ? { worker } : {}),
    products: decodeEntity(products),
    orders: decodeEntity(orders),
    requests,
    retries,
    ...(error != null ? { error } : {}),
    ...(lastOkAt != null ? { lastOkAt: iso(lastOkAt) } : {}),
  };
}

export interface SyncHealthOptions extends SyncNamespaceOptions {
  /** Runs kept per connection in its history (`NS@history:<connection>`). Default 50; 0 keeps none. */
  historySize?: number;
}

/**
 * Each connection's last run in a Redis hash, and its last runs in a compressed string per
 * connection, shared by every worker: an observer (give it to the workers) and a health source
 * (give it to `syncHealthHandler`, or a dashboard, in any process).
 *
 * @example
 * ```ts
 * const health = new RedisSyncHealth(redis);            // same prefix/queueName as the queue
 * createSyncWorker({ ..., observers: [health] });
 * http.createServer(syncHealthHandler(health)).listen(8080);
 * ```
 */
export class RedisSyncHealth implements SyncObserver, SyncHistorySource {
  readonly key: string;
  private readonly ns: string;
  private readonly historySize: number;
  private readonly redis: Redis;
  constructor(redis: RedisClientLike, options: SyncHealthOptions = {}) {
    this.redis = asIoredis(redis);
    this.ns = syncNamespace(options).ns;
    this.key = `${this.ns}@health`;
    this.historySize = checkHistorySize(options.historySize);
  }

  /**
   * The key of a connection's run history: its runs newest first, one `encodeRun` line each,
   * deflated into one string (50 runs take about 1 KB: docs/scaling-sync.md → Run history).
   */
  historyKey(connection: string): string {
    return `${this.ns}@history:${connection}`;
  }

  /** Where earlier versions kept the history (a list of JSON objects): read until the connection's next run replaces it. */
  private listHistoryKey(connection: string): string {
    return `${this.ns}@runs:${connection}`;
  }

  /**
   * A connection's last run (its text) and its history's lines, newest first (the older list's JSON
   * objects when there is no history string yet), in one round trip.
   */
  private async stored(connection: string): Promise<{ last: string | null; lines: string[] }> {
    const replies = await this.redis.pipeline().hget(this.key, connection).getBuffer(this.historyKey(connection)).lrange(this.listHistoryKey(connection), 0, -1).exec();
    const failed = replies?.find(([err]) => err);
    if (!replies || failed) throw failed?.[0] ?? new Error('Redis did not answer the pipeline');
    const [last, packed, list] = replies.map(([, value]) => value) as [string | null, Buffer | null, string[]];
    return { last, lines: packed === null ? list : inflateRawSync(packed).toString('utf8').split('\n') };
  }

  async observe(o: SyncObservation): Promise<void> {
    if (o.type !== 'run') return;
    // One run per connection at a time (the run lock), so read-then-write does not race itself.
    const { last, lines } = await this.stored(o.connection);
    const run = lastRunOf(o, last === null ? undefined : decodeRun(last, o.connection));
    const tx = this.redis.multi().hset(this.key, o.connection, encodeRun(run));
    if (this.historySize > 0) {
      const kept = [encodeRun(runRecordOf(run)), ...lines].slice(0, this.historySize);
      tx.set(this.historyKey(o.connection), deflateRawSync(kept.join('\n'))).del(this.listHistoryKey(o.connection));
    }
    const failed = (await tx.exec())?.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async history(connection: string, limit?: number): Promise<RunRecord[]> {
    if (limit !== undefined && limit < 1) return [];
    const { lines } = await this.stored(connection);
    return lines.slice(0, limit ?? lines.length).map((t) => runRecordOf(decodeRun(t, connection)));
  }

  async lastRun(connection: string): Promise<LastRun | undefined> {
    const text = await this.redis.hget(this.key, connection);
    return text === null ? undefined : decodeRun(text, connection);
  }

  async lastRuns(): Promise<LastRun[]> {
    const all = await this.redis.hgetall(this.key);
    return Object.keys(all)
      .sort()
      .map((k) => decodeRun(all[k], k));
  }

  /** Forgets a connection (when it is removed): its last run and its history. */
  async forget(connection: string): Promise<void> {
    await this.redis.multi().hdel(this.key, connection).del(this.historyKey(connection), this.listHistoryKey(connection)).exec();
  }
}
