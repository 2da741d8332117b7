/**
 * Sync state shared by every worker through Redis: checkpoints (and so the wire `jobid`), the
 * per-connection run lock, and the last run of each connection for the health endpoint.
 *
 * Keys, for a namespace `NS` (`<prefix>:<queue>` of the BullMQ queue, `storebridge:sync` by
 * default): `NS@state:<connection>` (JSON `SyncState`), `NS@lock:<connection>` (the run lock's
 * token, with a TTL), `NS@health` (a hash: connection → JSON `LastRun`), `NS@runs:<connection>` (a
 * list of JSON `RunRecord`, newest first, trimmed to the history size). The `@` keeps them apart
 * from BullMQ's own `NS:*` keys.
 */
import type { Redis } from 'ioredis';
import { InvalidOptionError, StorebridgeError } from '../errors';
import { parseSyncState, type CheckpointStore, type SyncState } from './checkpoint-store';
import { checkHistorySize, lastRunOf, runRecordOf, type LastRun, type RunRecord, type SyncHistorySource } from './sync-health';
import type { SyncObservation, SyncObserver } from './sync-observer';
import { asIoredis } from './redis-connect';

/**
 * An ioredis client (`new Redis(…)` from the ioredis package). Declared structurally so that the
 * types of `storebridge/sync` do not need ioredis installed.
 */
export interface RedisClientLike {
  duplicate(...args: any[]): unknown;
  get(...args: any[]): unknown;
  quit(...args: any[]): unknown;
}

/** ioredis options (`host`, `port`, `username`, `password`, `db`, `tls`, …), passed as they are. */
export interface RedisConnectionOptions {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: object;
  [option: string]: unknown;
}

/** A Redis URL, ioredis options, or an ioredis client (then its owner closes it). */
export type RedisConnection = string | RedisConnectionOptions | RedisClientLike;

export interface SyncNamespaceOptions {
  /** BullMQ key prefix. Default `storebridge`. */
  prefix?: string;
  /** The queue's name. Default `sync`. */
  queueName?: string;
}

export const DEFAULT_PREFIX = 'storebridge';
export const DEFAULT_QUEUE_NAME = 'sync';

/** `<prefix>:<queue>`, checked. */
export function syncNamespace(options: SyncNamespaceOptions = {}): { prefix: string; queueName: string; ns: string } {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  if (typeof prefix !== 'string' || !/^[A-Za-z0-9_.{}-]{1,100}$/.test(prefix)) throw new InvalidOptionError('prefix', 'must be 1-100 letters, digits, or . _ - { }');
  if (typeof queueName !== 'string' || !/^[A-Za-z0-9_.-]{1,100}$/.test(queueName)) throw new InvalidOptionError('queueName', 'must be 1-100 letters, digits, or . _ -');
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
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 100) throw new InvalidOptionError('lockTtlMs', 'must be an integer ≥ 100 (milliseconds)');
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

export interface SyncHealthOptions extends SyncNamespaceOptions {
  /** Runs kept per connection in its history (`NS@runs:<connection>`). Default 50; 0 keeps none. */
  historySize?: number;
}

/**
 * Each connection's last run in a Redis hash, and its last runs in a capped list, shared by every
 * worker: an observer (give it to the workers) and a health source (give it to
 * `syncHealthHandler`, or a dashboard, in any process).
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

  /** The Redis list holding a connection's run history. */
  historyKey(connection: string): string {
    return `${this.ns}@runs:${connection}`;
  }

  async observe(o: SyncObservation): Promise<void> {
    if (o.type !== 'run') return;
    // One run per connection at a time (the run lock), so read-then-write does not race itself.
    const previous = await this.lastRun(o.connection);
    const run = lastRunOf(o, previous);
    const tx = this.redis.multi().hset(this.key, o.connection, JSON.stringify(run));
    if (this.historySize > 0) {
      const list = this.historyKey(o.connection);
      tx.lpush(list, JSON.stringify(runRecordOf(run))).ltrim(list, 0, this.historySize - 1);
    }
    const failed = (await tx.exec())?.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async history(connection: string, limit?: number): Promise<RunRecord[]> {
    if (limit !== undefined && limit < 1) return [];
    const texts = await this.redis.lrange(this.historyKey(connection), 0, limit === undefined ? -1 : limit - 1);
    return texts.map((t) => JSON.parse(t) as RunRecord);
  }

  async lastRun(connection: string): Promise<LastRun | undefined> {
    const text = await this.redis.hget(this.key, connection);
    return text === null ? undefined : (JSON.parse(text) as LastRun);
  }

  async lastRuns(): Promise<LastRun[]> {
    const all = await this.redis.hgetall(this.key);
    return Object.keys(all)
      .sort()
      .map((k) => JSON.parse(all[k]) as LastRun);
  }

  /** Forgets a connection (when it is removed): its last run and its history. */
  async forget(connection: string): Promise<void> {
    await this.redis.multi().hdel(this.key, connection).del(this.historyKey(connection)).exec();
  }
}
