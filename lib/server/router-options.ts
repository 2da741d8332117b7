/**
 * The store router's options, parsed once into a `RouterConfig`. Every check names the option at
 * fault (`InvalidOptionError`); unknown options are warned about once per process, so a typo is
 * visible without breaking a running app.
 */
import { createHmac } from 'node:crypto';
import type { Store as RateLimitStore } from 'express-rate-limit';
import type { StoreAdapter } from '../adapter';
import { guardAdapter, type GuardedAdapter } from '../adapter-guard';
import { KEY_HEADERS } from '../contract/dialects';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_TIME_BUDGET_MS, INTERFACE_LIMITS } from '../contract/limits';
import { ORDER_STATUSES } from '../contract/webhook';
import { InvalidOptionError } from '../errors';
import { CursorCodec } from './cursor';
import { anyKeyVerifier, jwtKeyVerifier, type JwtKeyOptions } from './jwt-key-verifier';
import { staticKeyVerifier, type KeyVerifier, type SvcKeyOption } from './key-verifier';
import { createStoreMetrics, type StoreMetrics } from './server-metrics';
import type { Metrics, Registry } from '../metrics';
import { parseLogger, type Logger } from '../logger';

export type { Logger } from '../logger';

export type Pagination = 'offset' | 'cursor';

export interface FailedAuthLimitOptions {
  /** Failed key checks allowed per client address per window. Default 100. */
  readonly limit?: number;
  /** Default 60,000 (one minute). */
  readonly windowMs?: number;
  /** An express-rate-limit store (e.g. rate-limit-redis) shared by replicas. Default: in memory. */
  readonly store?: RateLimitStore;
}

export interface RateLimitOptions {
  /** Requests allowed per key per window. Default 1,200 (20 a second on average). */
  readonly limit?: number;
  /** Default 60,000 (one minute). */
  readonly windowMs?: number;
  /** An express-rate-limit store shared by replicas. Default: in memory. */
  readonly store?: RateLimitStore;
  /** The separate per-address limit on failed key checks; `false` turns it off. */
  readonly failedAuth?: false | FailedAuthLimitOptions;
}

export interface StoreRouterOptions {
  /** The store's data. Wrapped with `guardAdapter` (already guarded adapters are used as is). */
  readonly adapter: StoreAdapter | GuardedAdapter;
  /**
   * The SvcKeys the sync service may present: several at once for rotation, each a string or
   * `{key, id?, expiresAt?}`. Required unless `keyVerifier` is given.
   */
  readonly svcKeys?: ReadonlyArray<SvcKeyOption>;
  /** A custom key check instead of `svcKeys`/`jwt` (then `cursorSecret` is required). */
  readonly keyVerifier?: KeyVerifier;
  /**
   * SvcKeys that are JWTs (see `jwtKeyVerifier`), alone or beside `svcKeys` (either kind is then
   * accepted). Without `svcKeys`, `cursorSecret` is required.
   */
  readonly jwt?: JwtKeyOptions;
  /** Items per list page when the request has no `limit`. Default 20 (the spec's example). */
  readonly pageSize?: number;
  /** Cap of the `limit` query parameter (an extension). Default 1,000. */
  readonly maxPageSize?: number;
  /** Byte budget of a whole serialized list body. Default 10,000,000. */
  readonly maxPageBytes?: number;
  /** Largest accepted write body. Default 10 MiB (10,485,760 bytes). */
  readonly maxBodyBytes?: number;
  /** Deadline of one request's work (the spec allows one minute). Default 50,000 ms. */
  readonly timeBudgetMs?: number;
  /**
   * HMAC secret of paging cursors (at least 16 bytes). Default: derived from `svcKeys`, so replicas
   * configured with the same keys accept each other's cursors; set it to keep cursors valid across
   * a key rotation.
   */
  readonly cursorSecret?: string | Buffer;
  /** How a list request with neither `offset` nor `next` is answered. Default `offset`. */
  readonly defaultPagination?: Pagination;
  /** Per-key request limit (on by default) and per-address failed-auth limit; `false` turns both off. */
  readonly rateLimit?: false | RateLimitOptions;
  /** Order statuses a write may set. Default: the spec's seven common values; `null`: any. */
  readonly allowedOrderStatuses?: ReadonlyArray<string> | null;
  /** The clock (Unix ms): key expiry and `last_updated` on writes. Default `Date.now`. */
  readonly now?: () => number;
  /** Where requests and adapter failures are reported (pino works as is). Default: nowhere. */
  readonly logger?: Logger;
  /**
   * Also log one `info` line per answered request (operation, route, status, jobid, key id,
   * duration). Default `false`: without it the router logs only failures and refused keys.
   */
  readonly logRequests?: boolean;
  /**
   * Record Prometheus metrics into this prom-client `Registry` (or `createMetrics()` result).
   * Default: none. Exposing them is the owner's choice: mount `metricsHandler(registry)`.
   */
  readonly metrics?: Registry | Metrics;
  /**
   * The request headers a key is read from, in order. Default `['SvcKey', 'C2SKey']`: the spec's
   * name and the one the deployed Click2Sync service sends. Never `Authorization`, never the query.
   * A request carrying two of them with different values is refused (401).
   */
  readonly keyHeaders?: ReadonlyArray<string>;
  /**
   * What a list page carries. `full` (default): the items. `stubs`: only `{_id, last_updated}`
   * (orders also `orderid`), the deployed "list by id" mode: the caller fetches what changed with
   * `GET {list url}?id=X`.
   */
  readonly listing?: Listing;
}

export type Listing = 'full' | 'stubs';

export interface RouterConfig {
  readonly adapter: GuardedAdapter;
  readonly verifier: KeyVerifier;
  readonly pageSize: number;
  readonly maxPageSize: number;
  readonly maxPageBytes: number;
  readonly maxBodyBytes: number;
  readonly timeBudgetMs: number;
  readonly cursors: CursorCodec;
  readonly defaultPagination: Pagination;
  readonly rateLimit:
    | false
    | {
        readonly limit: number;
        readonly windowMs: number;
        readonly store?: RateLimitStore;
        readonly failedAuth: false | { readonly limit: number; readonly windowMs: number; readonly store?: RateLimitStore };
      };
  readonly allowedOrderStatuses: ReadonlySet<string> | null;
  readonly now: () => number;
  readonly logger: Logger | undefined;
  readonly logRequests: boolean;
  readonly metrics: StoreMetrics | undefined;
  /** The key headers as configured (for messages), and lower-cased (for lookups). */
  readonly keyHeaders: readonly string[];
  readonly keyHeaderNames: readonly string[];
  readonly listing: Listing;
}

const KNOWN_OPTIONS = new Set([
  'adapter',
  'svcKeys',
  'keyVerifier',
  'pageSize',
  'maxPageSize',
  'maxPageBytes',
  'maxBodyBytes',
  'timeBudgetMs',
  'cursorSecret',
  'defaultPagination',
  'rateLimit',
  'allowedOrderStatuses',
  'now',
  'logger',
  'logRequests',
  'jwt',
  'metrics',
  'keyHeaders',
  'listing',
]);
const warnedUnknown = new Set<string>();

function positiveInt(name: string, value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new InvalidOptionError(name, `expected an integer from 1 to ${max}, got ${describe(value)}`);
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** Parses and checks the options once. Throws `InvalidOptionError` naming the bad option. */
export function parseRouterOptions(options: StoreRouterOptions): RouterConfig {
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  const logger = parseLogger(options.logger);
  warnUnknownOptions(options, logger);
  const keys = parseKeys(options);
  const sizes = parseSizes(options);
  const metrics = parseMetrics(options);
  const adapter = parseAdapter(options);
  const logRequests = options.logRequests ?? false;
  if (typeof logRequests !== 'boolean') throw new InvalidOptionError('logRequests', 'expected true or false');
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new InvalidOptionError('now', 'expected a function returning Unix milliseconds');
  return {
    adapter: metrics ? metrics.timeAdapter(adapter) : adapter,
    ...keys,
    ...sizes,
    defaultPagination: oneOf('defaultPagination', options.defaultPagination, ['offset', 'cursor'] as const),
    listing: oneOf('listing', options.listing, ['full', 'stubs'] as const),
    rateLimit: parseRateLimit(options.rateLimit),
    allowedOrderStatuses: parseOrderStatuses(options.allowedOrderStatuses),
    now,
    logger,
    logRequests: logger !== undefined && logRequests,
    metrics,
  };
}

/** Unknown options are warned about once per process (through the logger when there is one). */
function warnUnknownOptions(options: StoreRouterOptions, logger: Logger | undefined): void {
  for (const name of Object.keys(options)) {
    if (KNOWN_OPTIONS.has(name) || warnedUnknown.has(name)) continue;
    warnedUnknown.add(name);
    const msg = `storebridge: unknown store router option "${name}" is ignored`;
    if (logger) logger.warn({ option: name }, msg);
    else process.emitWarning(msg, { code: 'STOREBRIDGE_UNKNOWN_OPTION' });
  }
}

function parseAdapter(options: StoreRouterOptions): GuardedAdapter {
  if (!options.adapter) throw new InvalidOptionError('adapter', 'an adapter is required');
  try {
    return guardAdapter(options.adapter);
  } catch (err) {
    throw new InvalidOptionError('adapter', (err as Error).message);
  }
}

/** The first of `choices` when absent, else one of them. */
function oneOf<const T extends string>(name: string, value: unknown, choices: readonly T[]): T {
  if (value === undefined) return choices[0];
  if (!choices.includes(value as T)) throw new InvalidOptionError(name, `expected ${choices.map((c) => `"${c}"`).join(' or ')}, got ${describe(value)}`);
  return value as T;
}

/** The key check (`svcKeys`, `jwt` or `keyVerifier`), the cursor secret and the key header names. */
function parseKeys(options: StoreRouterOptions): Pick<RouterConfig, 'verifier' | 'cursors' | 'keyHeaders' | 'keyHeaderNames'> {
  let verifier: KeyVerifier;
  let derivedSecret: Buffer | undefined;
  if (options.keyVerifier !== undefined) {
    if (options.svcKeys !== undefined || options.jwt !== undefined) throw new InvalidOptionError('keyVerifier', 'give either svcKeys/jwt or keyVerifier, not both');
    if (!options.keyVerifier || typeof options.keyVerifier.verify !== 'function') {
      throw new InvalidOptionError('keyVerifier', 'expected an object with a verify(presented, now) method');
    }
    verifier = options.keyVerifier;
  } else if (options.svcKeys === undefined && options.jwt !== undefined) {
    verifier = jwtKeyVerifier(options.jwt, 'jwt');
  } else {
    if (options.svcKeys === undefined) throw new InvalidOptionError('svcKeys', 'at least one SvcKey is required (or jwt, or a keyVerifier)');
    const s = staticKeyVerifier(options.svcKeys, 'svcKeys');
    verifier = options.jwt !== undefined ? anyKeyVerifier(s, jwtKeyVerifier(options.jwt, 'jwt')) : s;
    // Sorted, so replicas listing the same keys in another order still agree.
    const material = [...s.keyMaterial].sort().join('\n');
    derivedSecret = createHmac('sha256', 'storebridge cursor secret v1').update(material, 'utf8').digest();
  }

  let secret: Buffer;
  if (options.cursorSecret !== undefined) {
    const c = options.cursorSecret;
    if (!(typeof c === 'string' || Buffer.isBuffer(c)) || Buffer.byteLength(c) < 16) {
      throw new InvalidOptionError('cursorSecret', 'expected a string or Buffer of at least 16 bytes');
    }
    secret = Buffer.from(c);
  } else if (derivedSecret) {
    secret = derivedSecret;
  } else {
    throw new InvalidOptionError('cursorSecret', `required with ${options.keyVerifier ? 'a keyVerifier' : 'jwt keys'} (there are no static keys to derive it from)`);
  }
  const keyHeaders = parseKeyHeaders(options.keyHeaders);
  return { verifier, cursors: new CursorCodec(secret), keyHeaders, keyHeaderNames: keyHeaders.map((h) => h.toLowerCase()) };
}

/** An HTTP token (RFC 9110), and not a header that carries something else. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const NOT_KEY_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'content-type', 'content-length']);

function parseKeyHeaders(value: unknown): string[] {
  if (value === undefined) return [...KEY_HEADERS];
  if (!Array.isArray(value) || value.length === 0) throw new InvalidOptionError('keyHeaders', 'expected a non-empty array of header names');
  const seen = new Set<string>();
  value.forEach((name: unknown, i) => {
    if (typeof name !== 'string' || !HEADER_NAME.test(name)) throw new InvalidOptionError(`keyHeaders[${i}]`, `expected an HTTP header name, got ${describe(name)}`);
    const lower = name.toLowerCase();
    if (NOT_KEY_HEADERS.has(lower)) throw new InvalidOptionError(`keyHeaders[${i}]`, `a key is never read from ${name}`);
    if (seen.has(lower)) throw new InvalidOptionError(`keyHeaders[${i}]`, `${name} is listed twice`);
    seen.add(lower);
  });
  return [...value];
}

/** Page and body sizes and the time budget. */
function parseSizes(options: StoreRouterOptions): Pick<RouterConfig, 'pageSize' | 'maxPageSize' | 'maxPageBytes' | 'maxBodyBytes' | 'timeBudgetMs'> {
  const pageSize = positiveInt('pageSize', options.pageSize, 20, 100_000);
  const maxPageSize = positiveInt('maxPageSize', options.maxPageSize, Math.max(1000, pageSize), 100_000);
  if (pageSize > maxPageSize) throw new InvalidOptionError('pageSize', `must not exceed maxPageSize (${maxPageSize})`);
  const maxPageBytes = positiveInt('maxPageBytes', options.maxPageBytes, INTERFACE_LIMITS.maxPageBytes, 1_000_000_000);
  if (maxPageBytes < 256) throw new InvalidOptionError('maxPageBytes', 'must be at least 256 bytes (room for the envelope)');
  const maxBodyBytes = positiveInt('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, 1_000_000_000);
  const timeBudgetMs = positiveInt('timeBudgetMs', options.timeBudgetMs, DEFAULT_TIME_BUDGET_MS, INTERFACE_LIMITS.requestTimeMs);
  return { pageSize, maxPageSize, maxPageBytes, maxBodyBytes, timeBudgetMs };
}

function parseRateLimit(rl: StoreRouterOptions['rateLimit']): RouterConfig['rateLimit'] {
  if (rl === false) return false;
  if (rl !== undefined && (typeof rl !== 'object' || rl === null || Array.isArray(rl))) {
    throw new InvalidOptionError('rateLimit', `expected false or {limit?, windowMs?, store?, failedAuth?}, got ${describe(rl)}`);
  }
  const r = rl ?? {};
  const fa = r.failedAuth;
  if (fa !== undefined && fa !== false && (typeof fa !== 'object' || fa === null)) {
    throw new InvalidOptionError('rateLimit.failedAuth', 'expected false or {limit?, windowMs?, store?}');
  }
  return {
    limit: positiveInt('rateLimit.limit', r.limit, 1200),
    windowMs: positiveInt('rateLimit.windowMs', r.windowMs, 60_000, 2 ** 31 - 1),
    store: r.store,
    failedAuth:
      fa === false
        ? false
        : {
            limit: positiveInt('rateLimit.failedAuth.limit', fa?.limit, 100),
            windowMs: positiveInt('rateLimit.failedAuth.windowMs', fa?.windowMs, 60_000, 2 ** 31 - 1),
            store: fa?.store,
          },
  };
}

function parseOrderStatuses(statuses: StoreRouterOptions['allowedOrderStatuses']): ReadonlySet<string> | null {
  if (statuses === null) return null;
  if (statuses === undefined) return new Set(ORDER_STATUSES);
  if (Array.isArray(statuses) && statuses.length > 0 && statuses.every((s) => typeof s === 'string' && s !== '')) return new Set(statuses);
  throw new InvalidOptionError('allowedOrderStatuses', 'expected null (any status) or a non-empty array of non-empty strings');
}

function parseMetrics(options: StoreRouterOptions): StoreMetrics | undefined {
  if (options.metrics === undefined) return undefined;
  try {
    return createStoreMetrics(options.metrics);
  } catch (err) {
    throw new InvalidOptionError('metrics', (err as Error).message);
  }
}
