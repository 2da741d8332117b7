/**
 * The reverse service's options, checked once: every problem is an `InvalidOptionError` naming
 * the option (never repeating a key).
 */
import { createHash } from 'node:crypto';
import type { StoreAdapter } from '../../adapter';
import { guardAdapter, type GuardedAdapter } from '../../adapter-guard';
import { DEFAULT_DIALECT, DIALECT_NAMES, dialectOf, type Dialect, type DialectName } from '../../contract/dialects';
import { hasControlCharacter } from '../../contract/webhook';
import { InvalidOptionError } from '../../errors';
import { createMemoryStateStore, type ReverseStateStore } from './reverse-state-store';

/** One connection the service serves. */
export interface ReverseConnectionOption {
  /** The key in the daemon's paths (the deployed daemons make 256 `[A-Z0-9]`). */
  readonly key: string;
  /** Used by the operator routes, `enqueue`, `status`, logs and the state store instead of the key. Default `connection-<n>`. */
  readonly name?: string;
  /** How items handed out by `next` are written: `spec` (strings, ISO dates) or `click2sync` (numbers, epoch-ms dates). Default: the service's `dialect`. */
  readonly dialect?: DialectName;
}

export interface ReverseServiceOptions {
  /** The service's store: pulls are served from it, normal push pages are written into it. */
  readonly adapter: StoreAdapter | GuardedAdapter;
  /** The connections served (a key alone, or `{key, name, dialect}`). */
  readonly connections: ReadonlyArray<string | ReverseConnectionOption>;
  /** The dialect of connections that name none. Default `spec`. */
  readonly dialect?: DialectName;
  /**
   * Where queues, transactions, leases, counters, `cursoroffset`s, failures and the id map are kept.
   * Default: memory (a restart forgets them). `createSqlReverseStateStore(adapter)` keeps them in the
   * SQL adapter's database, `createRedisStateStore(redis)` in Redis.
   */
  readonly stateStore?: ReverseStateStore;
  /** How long an item handed out by `next` stays reserved (ms). Default 60 000. */
  readonly leaseMs?: number;
  /** A running transaction with no daemon call for this long ends as `expired`, so the queue moves on (ms). Default 900 000 (15 min). */
  readonly transactionIdleMs?: number;
  /** Items of the last sample push kept per entity for inspection. Default 10. */
  readonly sampleKeep?: number;
  /** Failure records kept per connection (status view). Default 1000. */
  readonly keepFailures?: number;
  /** Pulled-id → store-id mappings kept per connection (status view). Default 1000. */
  readonly keepMappings?: number;
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
  readonly adapter: GuardedAdapter;
  readonly connections: readonly ConnectionConfig[];
  readonly stateStore: ReverseStateStore;
  /** Whether the service created the state store (and closes it). */
  readonly ownsStateStore: boolean;
  readonly leaseMs: number;
  readonly transactionIdleMs: number;
  readonly sampleKeep: number;
  readonly keepFailures: number;
  readonly keepMappings: number;
  readonly now: () => number;
  readonly onError: NonNullable<ReverseServiceOptions['onError']>;
}

const MAX_NAME_LENGTH = 200;

export function digestOf(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function positiveInteger(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new InvalidOptionError(option, `expected a positive integer, got ${String(value)}`);
  return value;
}

function dialectOption(option: string, value: unknown, fallback: Dialect): Dialect {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(DIALECT_NAMES as readonly string[]).includes(value)) throw new InvalidOptionError(option, `expected ${DIALECT_NAMES.join(' or ')}`);
  return dialectOf(value);
}

function connectionsOf(list: ReverseServiceOptions['connections'], fallback: Dialect): ConnectionConfig[] {
  if (!Array.isArray(list) || list.length === 0) throw new InvalidOptionError('connections', 'expected a non-empty array of keys or {key, name, dialect}');
  const names = new Set<string>();
  const digests = new Set<string>();
  return list.map((entry, i) => {
    const where = `connections[${i}]`;
    const e: ReverseConnectionOption = typeof entry === 'string' ? { key: entry } : entry;
    if (!e || typeof e.key !== 'string' || e.key.length === 0 || e.key.length > 1024 || hasControlCharacter(e.key)) {
      throw new InvalidOptionError(`${where}.key`, 'expected a non-empty string of at most 1024 characters, without control characters');
    }
    const name = e.name ?? `connection-${i + 1}`;
    if (typeof name !== 'string' || name === '' || name.length > MAX_NAME_LENGTH || hasControlCharacter(name)) {
      throw new InvalidOptionError(`${where}.name`, `expected a non-empty string of at most ${MAX_NAME_LENGTH} characters, without control characters`);
    }
    if (names.has(name)) throw new InvalidOptionError(`${where}.name`, `"${name}" is used twice`);
    names.add(name);
    const digest = digestOf(e.key);
    if (digests.has(digest.toString('hex'))) throw new InvalidOptionError(`${where}.key`, 'the same key is used twice');
    digests.add(digest.toString('hex'));
    return { name, digest, dialect: dialectOption(`${where}.dialect`, e.dialect, fallback) };
  });
}

export function parseServiceOptions(options: ReverseServiceOptions): ServiceConfig {
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  if (!options.adapter) throw new InvalidOptionError('adapter', "an adapter (the service's store) is required");
  if (options.now !== undefined && typeof options.now !== 'function') throw new InvalidOptionError('now', 'expected a function returning Unix milliseconds');
  if (options.onError !== undefined && typeof options.onError !== 'function') throw new InvalidOptionError('onError', 'expected a function');
  const store = options.stateStore;
  if (store !== undefined && (typeof store !== 'object' || typeof store.read !== 'function' || typeof store.write !== 'function')) {
    throw new InvalidOptionError('stateStore', 'expected a ReverseStateStore ({read, write})');
  }
  const dialect = dialectOption('dialect', options.dialect, dialectOf(DEFAULT_DIALECT));
  return {
    adapter: guardAdapter(options.adapter),
    connections: connectionsOf(options.connections, dialect),
    stateStore: store ?? createMemoryStateStore(),
    ownsStateStore: store === undefined,
    leaseMs: positiveInteger('leaseMs', options.leaseMs, 60_000),
    transactionIdleMs: positiveInteger('transactionIdleMs', options.transactionIdleMs, 900_000),
    sampleKeep: positiveInteger('sampleKeep', options.sampleKeep, 10),
    keepFailures: positiveInteger('keepFailures', options.keepFailures, 1000),
    keepMappings: positiveInteger('keepMappings', options.keepMappings, 1000),
    now: options.now ?? Date.now,
    onError: options.onError ?? (() => undefined),
  };
}
