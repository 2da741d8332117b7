/**
 * The reverse service's options, checked once: every problem is an `InvalidOptionError` naming
 * the option (never repeating a key).
 */
import { createHash } from 'node:crypto';
import type { StoreAdapter } from '../../adapter';
import { guardAdapter, type GuardedAdapter } from '../../adapter-guard';
import { z } from 'zod';
import { DEFAULT_DIALECT, DIALECT_NAMES, dialectOf, type Dialect, type DialectName } from '../../contract/dialects';
import { InvalidOptionError } from '../../errors';
import { defineOptions, opt } from '../../options';
import type { Metrics, Registry } from '../../metrics';
import type { PageBounds } from './reverse-items';
import { createReverseMetrics, type ReverseMetrics } from './reverse-metrics';
import { createMemoryStateStore, type ReverseStateStore } from './reverse-state-store';
import type { ThrottleConfig } from './reverse-throttle';

/** One connection the service serves: its `key`, or the key's SHA-256 (`keyDigest`) so the key itself need not be stored. */
export interface ReverseConnectionOption {
  /** The key in the daemon's paths (the deployed daemons make 256 `[A-Z0-9]`). Give it or `keyDigest`. */
  readonly key?: string;
  /** The SHA-256 of the key's UTF-8 bytes, 64 hex digits (`printf %s KEY | sha256sum`): the service compares digests anyway. */
  readonly keyDigest?: string;
  /** Used by the operator routes, `enqueue`, `status`, logs and the state store instead of the key. Default `connection-<n>`. */
  readonly name?: string;
  /** How items handed out by `next` are written: `spec` (strings, ISO dates) or `click2sync` (numbers, epoch-ms dates). Default: the service's `dialect`. */
  readonly dialect?: DialectName;
}

/** What `adapterFor` is told about a connection. */
export interface ConnectionInfo {
  readonly name: string;
  readonly dialect: DialectName;
}

export interface ReverseServiceOptions {
  /**
   * The service's store: pulls are served from it, normal push pages are written into it. Shared
   * by every connection unless `adapterFor` gives each its own (then it may be omitted).
   */
  readonly adapter?: StoreAdapter | GuardedAdapter;
  /**
   * Each connection's own store (multi-tenant: two connections pushing the same `_id` keep
   * separate catalogs). Called once per connection name, on its first call; the service closes
   * what it returns when the connection is removed or the service closes. Without it every
   * connection shares `adapter`.
   *
   * @example A table prefix per connection in one SQL database (what `reverse-service --connections` does):
   * ```ts
   * const main = await openSqlAdapter('postgres://app@db/sync');
   * createReverseService({
   *   connections,
   *   stateStore: await createSqlReverseStateStore(main),
   *   adapterFor: ({ name }) => createSqlAdapter({ db: main.db, tablePrefix: `storebridge_c_${name}_`, destroyOnClose: false }),
   * });
   * ```
   */
  readonly adapterFor?: (connection: ConnectionInfo) => StoreAdapter | GuardedAdapter | Promise<StoreAdapter | GuardedAdapter>;
  /** The connections served (a key alone, or `{key | keyDigest, name, dialect}`); `ReverseService.setConnections` replaces them while it runs. */
  readonly connections: ReadonlyArray<string | ReverseConnectionOption>;
  /** The dialect of connections that name none. Default `spec`. */
  readonly dialect?: DialectName;
  /**
   * Where queues, transactions, leases, counters, `cursoroffset`s, failures and the id map are kept.
   * Default: memory (a restart forgets them). `createSqlReverseStateStore(adapter)` keeps them in the
   * SQL adapter's database, `createRedisStateStore(redis)` in Redis.
   */
  readonly stateStore?: ReverseStateStore;
  /**
   * Whether other services may write the state store too (replicas). Then each call reads the
   * connection's state record first (one keyed read) and writes guarded by it. `false` (one process
   * only) skips that read while the connection is in memory. Default: `true`, except for the memory
   * store the service creates itself (nothing else can reach it).
   */
  readonly stateShared?: boolean;
  /** How long an item handed out by `next` stays reserved (ms). Default 60 000. */
  readonly leaseMs?: number;
  /** A running transaction with no daemon call for this long ends as `expired`, so the queue moves on (ms). Default 900 000 (15 min). */
  readonly transactionIdleMs?: number;
  /** Items of the last sample push kept per entity for inspection. Default 10. */
  readonly sampleKeep?: number;
  /** Failure records kept per connection (status view). Default 1000. */
  readonly keepFailures?: number;
  /**
   * Id mappings shown in the status view (`idMap`, the latest). Default 1000. The id map itself
   * keeps every link, for ever (docs/reverse-connection.md "Identity").
   */
  readonly keepMappings?: number;
  /**
   * An item handed out this many times without an acknowledgement is given up: recorded as failed
   * by the service (code 1004, "not acknowledged after N deliveries") and the pull moves on (a
   * daemon that crashes on an item asks for it again at once, for ever). Default 5.
   */
  readonly maxDeliveries?: number;
  /**
   * Calls a second per connection above which answers are delayed (not refused), so a daemon in a
   * crash loop costs at most about this many calls a second. 0 turns it off. Default 20.
   */
  readonly maxCallsPerSecond?: number;
  /**
   * Calls answered at once above that pace after a quiet time. Default 5 (a deployed daemon's
   * busiest moment: ping, ping, upstreamstatus, entity, hasmore, next; each answer past it is
   * delayed and closes its connection, so a loop holds about this many connections at most).
   */
  readonly callBurst?: number;
  /** The longest an answer is delayed (ms); a call that would wait longer (callers sending many at once) is refused, 429. Default 10 000. */
  readonly maxCallDelayMs?: number;
  /** Items a push page may hold; a longer page is refused whole (413). Deployed daemons send 50. Default 1000. */
  readonly maxPushPageItems?: number;
  /** Refused items of a push page listed in its reply and recorded in `failures` (all are counted). Default 20. */
  readonly maxRefusedListed?: number;
  /** Record Prometheus metrics into this registry (or `createMetrics()` result). Default: none. */
  readonly metrics?: Registry | Metrics;
  /** The clock (Unix ms). Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Called with a store failure behind a 500 answer. `connection` is the connection's name and
   * `call` the path with `{P}` in place of the key: keys never reach a log through this hook.
   */
  readonly onError?: (error: unknown, context: { readonly connection: string; readonly call: string }) => void;
}

export interface ConnectionConfig {
  readonly name: string;
  readonly digest: Buffer;
  readonly dialect: Dialect;
}

export interface ServiceConfig {
  /** The dialect of connections that name none. */
  readonly defaultDialect: Dialect;
  readonly adapter?: GuardedAdapter;
  readonly adapterFor?: ReverseServiceOptions['adapterFor'];
  readonly connections: readonly ConnectionConfig[];
  readonly stateStore: ReverseStateStore;
  /** Whether the service created the state store (and closes it). */
  readonly ownsStateStore: boolean;
  /** Whether other services may write the state store (`stateShared`). */
  readonly stateShared: boolean;
  readonly leaseMs: number;
  readonly transactionIdleMs: number;
  readonly sampleKeep: number;
  readonly keepFailures: number;
  readonly keepMappings: number;
  readonly maxDeliveries: number;
  readonly throttle: ThrottleConfig;
  readonly pageBounds: PageBounds;
  readonly metrics?: ReverseMetrics;
  readonly now: () => number;
  readonly onError: NonNullable<ReverseServiceOptions['onError']>;
}

const MAX_NAME_LENGTH = 200;
const NO_CONTROL = /^[^\u0000-\u001f]*$/;

export function digestOf(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** A key given by its digest: the SHA-256 of the key, in hex. */
export const KEY_DIGEST = /^[0-9a-fA-F]{64}$/;
export const KEY_DIGEST_RULE = 'must be 64 hex digits (the SHA-256 of the key)';

/** A connection key as the service takes it. */
export const KeySchema = z
  .string({ error: 'must be a connection key (a string)' })
  .min(1, 'must not be empty')
  .max(1024, 'must be at most 1024 characters')
  .regex(NO_CONTROL, 'must not contain control characters');
const ConnectionSchema = z.union(
  [
    KeySchema,
    z.strictObject({
      key: KeySchema.optional(),
      keyDigest: z.string().regex(KEY_DIGEST, KEY_DIGEST_RULE).optional(),
      name: z.string().min(1, 'must not be empty').max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`).regex(NO_CONTROL, 'must not contain control characters').optional(),
      dialect: opt.oneOf(DIALECT_NAMES).optional(),
    }),
  ],
  { error: 'must be a key, or {key | keyDigest, name?, dialect?}' },
);
const duration = (what: string) => opt.int({ min: 1, max: 31 * 86_400_000, unit: what }).optional();

/** The service's options, declared once (lib/options.ts: a bad value or an unknown name throws InvalidOptionError). */
const parseOptions = defineOptions('createReverseService', {
  adapter: opt.object<StoreAdapter | GuardedAdapter>("an adapter (the service's store)").optional(),
  adapterFor: opt.fn<NonNullable<ReverseServiceOptions['adapterFor']>>('a function of a connection returning its adapter').optional(),
  connections: z.array(ConnectionSchema, { error: 'must be a non-empty array of keys or {key, name, dialect}' }).min(1, 'must be a non-empty array of keys or {key, name, dialect}'),
  dialect: opt.oneOf(DIALECT_NAMES).optional(),
  stateShared: z.boolean({ error: 'must be true or false' }).optional(),
  stateStore: opt.object<ReverseStateStore>('a ReverseStateStore ({read, write})', (v) => typeof (v as ReverseStateStore).read === 'function' && typeof (v as ReverseStateStore).write === 'function').optional(),
  leaseMs: duration('ms'),
  transactionIdleMs: duration('ms'),
  sampleKeep: opt.int({ min: 1, max: 10_000 }).optional(),
  keepFailures: opt.int({ min: 1, max: 1_000_000 }).optional(),
  keepMappings: opt.int({ min: 1, max: 1_000_000 }).optional(),
  maxDeliveries: opt.int({ min: 1, max: 1000 }).optional(),
  maxCallsPerSecond: opt.int({ min: 0, max: 1_000_000 }).optional(),
  callBurst: opt.int({ min: 0, max: 1_000_000 }).optional(),
  maxCallDelayMs: opt.int({ min: 0, max: 600_000, unit: 'ms' }).optional(),
  maxPushPageItems: opt.int({ min: 1, max: 1_000_000 }).optional(),
  maxRefusedListed: opt.int({ min: 0, max: 100_000 }).optional(),
  metrics: opt.object<Registry | Metrics>('a prom-client Registry or a createMetrics() result').optional(),
  now: opt.fn<() => number>('a function returning Unix milliseconds').optional(),
  onError: opt.fn<NonNullable<ReverseServiceOptions['onError']>>().optional(),
});

/** Names unique, keys unique (compared by digest), each connection's dialect resolved. */
export function connectionsOf(list: ReadonlyArray<string | ReverseConnectionOption>, fallback: Dialect): ConnectionConfig[] {
  const names = new Set<string>();
  const digests = new Set<string>();
  return list.map((entry, i) => {
    const e: ReverseConnectionOption = typeof entry === 'string' ? { key: entry } : entry;
    const name = e.name ?? `connection-${i + 1}`;
    if (names.has(name)) throw new InvalidOptionError(`connections[${i}].name`, `"${name}" is used twice`);
    names.add(name);
    if ((e.key === undefined) === (e.keyDigest === undefined)) throw new InvalidOptionError(`connections[${i}]`, 'give key or keyDigest (one of them)');
    const digest = e.key !== undefined ? digestOf(e.key) : Buffer.from(e.keyDigest!, 'hex');
    if (digests.has(digest.toString('hex'))) throw new InvalidOptionError(`connections[${i}].key`, 'the same key is used twice');
    digests.add(digest.toString('hex'));
    return { name, digest, dialect: e.dialect ? dialectOf(e.dialect) : fallback };
  });
}

export function parseServiceOptions(options: ReverseServiceOptions): ServiceConfig {
  const o = parseOptions(options);
  const dialect = dialectOf(o.dialect ?? DEFAULT_DIALECT);
  if (!o.adapter && !o.adapterFor) throw new InvalidOptionError('adapter', "an adapter (the service's store) is required, or adapterFor (one per connection)");
  return {
    ...(o.adapter ? { adapter: guardAdapter(o.adapter) } : {}),
    ...(o.adapterFor ? { adapterFor: o.adapterFor } : {}),
    connections: connectionsOf(o.connections, dialect),
    defaultDialect: dialect,
    stateStore: o.stateStore ?? createMemoryStateStore(),
    ownsStateStore: o.stateStore === undefined,
    stateShared: o.stateShared ?? o.stateStore !== undefined,
    leaseMs: o.leaseMs ?? 60_000,
    transactionIdleMs: o.transactionIdleMs ?? 900_000,
    sampleKeep: o.sampleKeep ?? 10,
    keepFailures: o.keepFailures ?? 1000,
    keepMappings: o.keepMappings ?? 1000,
    maxDeliveries: o.maxDeliveries ?? 5,
    throttle: { perSecond: o.maxCallsPerSecond ?? 20, burst: o.callBurst ?? 5, maxDelayMs: o.maxCallDelayMs ?? 10_000 },
    pageBounds: { maxItems: o.maxPushPageItems ?? 1000, maxRefusedListed: o.maxRefusedListed ?? 20 },
    ...(o.metrics ? { metrics: createReverseMetrics(o.metrics) } : {}),
    now: o.now ?? Date.now,
    onError: o.onError ?? (() => undefined),
  };
}
