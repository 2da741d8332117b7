/**
 * Where the reverse service keeps what it must not forget across a restart: each connection's
 * queue, running transaction, leases, counters, `cursoroffset`s, failure records and the
 * pulled-id → store-id map. A small key-value interface, so that it fits a table in the service's
 * own database (`createSqlReverseStateStore` in `storebridge/adapters/sql`), Redis
 * (`createRedisStateStore`) or memory (the default, and the tests'): reads of known keys, and
 * atomic batches of writes.
 */
import { z } from 'zod';
import { defineOptions, opt } from '../../options';

/** One write of a batch: `value: null` deletes the key. */
export interface StateChange {
  readonly key: string;
  readonly value: string | null;
}

/** The record a `writeIf` batch depends on, and the value it must still hold. */
export interface StateGuard {
  readonly key: string;
  readonly expected: string | null;
}

/**
 * A store for the reverse service's state.
 *
 * @example A store over a Map (what `createMemoryStateStore` is):
 * ```ts
 * const rows = new Map<string, string>();
 * const store: ReverseStateStore = {
 *   async read(keys) { return new Map(keys.filter((k) => rows.has(k)).map((k) => [k, rows.get(k)!])); },
 *   async write(changes) { for (const c of changes) c.value === null ? rows.delete(c.key) : rows.set(c.key, c.value); },
 *   async writeIf(guard, changes) {
 *     if ((rows.get(guard.key) ?? null) !== guard.expected) return false;
 *     await this.write(changes);
 *     return true;
 *   },
 * };
 * createReverseService({ adapter, connections, stateStore: store });
 * ```
 */
export interface ReverseStateStore {
  /** The values of the keys that exist (absent keys are absent from the map). */
  read(keys: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** Applies every change, in order, atomically: all or none (a crash must not leave half a batch). */
  write(changes: readonly StateChange[]): Promise<void>;
  /**
   * Compare-and-set: applies every change, atomically, only if `guard.key` still holds exactly
   * `guard.expected` (`null`: the key is absent); resolves `false`, writing nothing, otherwise.
   * The service guards each call's batch with the connection's state record, so services sharing
   * the store (replicas) never overwrite each other's calls: the loser reads the state again and
   * runs its call once more (docs/deployment.md "Replicas"). Optional for a store of your own:
   * without it the service writes blindly, which is right for one process only.
   */
  writeIf?(guard: StateGuard, changes: readonly StateChange[]): Promise<boolean>;
  /** Releases what the store holds (called by `ReverseService.close()` when the service created it). */
  close?(): Promise<void>;
}

/** The default state store: a Map in this process (nothing survives a restart). */
export function createMemoryStateStore(): ReverseStateStore & { readonly size: number; dump(): ReadonlyMap<string, string> } {
  const rows = new Map<string, string>();
  const apply = (changes: readonly StateChange[]) => {
    for (const c of changes) {
      if (c.value === null) rows.delete(c.key);
      else rows.set(c.key, c.value);
    }
  };
  return {
    async read(keys) {
      const out = new Map<string, string>();
      for (const k of keys) {
        const v = rows.get(k);
        if (v !== undefined) out.set(k, v);
      }
      return out;
    },
    async write(changes) {
      apply(changes);
    },
    async writeIf(guard, changes) {
      if ((rows.get(guard.key) ?? null) !== guard.expected) return false;
      apply(changes);
      return true;
    },
    get size() {
      return rows.size;
    },
    dump: () => new Map(rows),
  };
}

/** The parts of an ioredis client the Redis state store uses. */
export interface RedisStateClient {
  mget(...keys: string[]): Promise<Array<string | null>>;
  multi(): { set(key: string, value: string): unknown; del(key: string): unknown; exec(): Promise<unknown> };
  /** `EVAL` (ioredis' signature): the compare-and-set of `writeIf` is one Lua script. Without it the store has no `writeIf`. */
  eval?(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
  quit?(): Promise<unknown>;
}

/**
 * `writeIf` in Redis: KEYS[1] is the guard, KEYS[2…] the changed keys; ARGV[1] is `1` + the
 * expected value (`0`: absent), ARGV[i+1] the change of KEYS[i] (`s` + value, or `d`). One script,
 * so the check and the writes are atomic (no WATCH, which would need a connection of its own).
 */
const WRITE_IF_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
local want = ARGV[1]
if string.sub(want, 1, 1) == '0' then
  if cur then return 0 end
elseif (not cur) or cur ~= string.sub(want, 2) then
  return 0
end
for i = 2, #KEYS do
  local c = ARGV[i]
  if string.sub(c, 1, 1) == 'd' then redis.call('DEL', KEYS[i]) else redis.call('SET', KEYS[i], string.sub(c, 2)) end
end
return 1`;

const parseRedisStateOptions = defineOptions('createRedisStateStore', {
  // Any text: keys are `prefix` + the service's key, and an empty prefix is a choice.
  prefix: z.string({ error: 'must be a string' }).default('storebridge:reverse:'),
  quitOnClose: opt.boolean().optional(),
});

/**
 * A state store in Redis (`MGET` reads, `MULTI`/`EXEC` batches, a Lua script for `writeIf`). Keys
 * are `prefix` + the service's key.
 *
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * const stateStore = createRedisStateStore(new Redis(process.env.REDIS_URL!), { prefix: 'shop-sync:' });
 * ```
 */
export function createRedisStateStore(redis: RedisStateClient, options: { readonly prefix?: string; readonly quitOnClose?: boolean } = {}): ReverseStateStore {
  const { prefix } = parseRedisStateOptions(options);
  return {
    async read(keys) {
      const out = new Map<string, string>();
      for (let i = 0; i < keys.length; i += 500) {
        const slice = keys.slice(i, i + 500);
        const values = await redis.mget(...slice.map((k) => prefix + k));
        values.forEach((v, j) => {
          if (typeof v === 'string') out.set(slice[j], v);
        });
      }
      return out;
    },
    async write(changes) {
      if (changes.length === 0) return;
      const tx = redis.multi();
      for (const c of changes) {
        if (c.value === null) tx.del(prefix + c.key);
        else tx.set(prefix + c.key, c.value);
      }
      const result = await tx.exec();
      // ioredis answers [[err, reply], …]; a failed command inside EXEC is an error of the batch.
      if (Array.isArray(result)) {
        const failed = result.find((r) => Array.isArray(r) && r[0]);
        if (failed) throw (failed as [Error])[0];
      } else if (result === null) throw new Error('the Redis transaction was aborted');
    },
    ...(redis.eval
      ? {
          async writeIf(guard: StateGuard, changes: readonly StateChange[]): Promise<boolean> {
            const args = [guard.expected === null ? '0' : '1' + guard.expected, ...changes.map((c) => (c.value === null ? 'd' : 's' + c.value))];
            const result = await redis.eval!(WRITE_IF_SCRIPT, changes.length + 1, prefix + guard.key, ...changes.map((c) => prefix + c.key), ...args);
            return Number(result) === 1;
          },
        }
      : {}),
    async close() {
      if (options.quitOnClose) await redis.quit?.();
    },
  };
}
