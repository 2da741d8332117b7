/**
 * The store router's options, declared once with the options toolkit (`lib/options.ts`): the
 * declaration is each option's type, check and message. Parsed once into a `RouterConfig` by named
 * steps (keys, sizes, rate limits, …). Every problem is an `InvalidOptionError` naming the option
 * by its path (`rateLimit.failedAuth.limit`); an unknown option is refused with the closest known
 * name, so a misspelt `ratelimit: false` never leaves rate limiting silently on.
 */
import { createHmac } from 'node:crypto';
import type { Store as RateLimitStore } from 'express-rate-limit';
import { z } from 'zod';
import type { StoreAdapter } from '../adapter';
import { guardAdapter, type GuardedAdapter } from '../adapter-guard';
import { STORE_DIALECT } from '../contract/dialects';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_TIME_BUDGET_MS, INTERFACE_LIMITS } from '../contract/limits';
import { ORDER_STATUSES } from '../contract/webhook';
import { InvalidOptionError } from '../errors';
import { defineOptions, opt } from '../options';
import { CursorCodec } from './cursor';
import { anyKeyVerifier, jwtKeyVerifier, jwtOption, type JwtKeyOptions } from './jwt-key-verifier';
import { staticKeyVerifier, svcKeysOption, type KeyVerifier, type SvcKeyOption } from './key-verifier';
import { createStoreMetrics, type StoreMetrics } from './server-metrics';
import type { Metrics, Registry } from '../metrics';
import type { Logger } from '../logger';

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

/**
 * `false`, or an object of `schema`. (A zod union would report every problem of the object at the
 * union's own path; this keeps each at its member's path: `rateLimit.failedAuth.limit`.)
 */
function falseOr<T extends z.ZodType>(schema: T, message: string) {
  return z.any().transform((value, ctx): false | z.output<T> => {
    if (value === false) return false;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: undefined } as z.core.$ZodRawIssue);
    return z.NEVER;
  });
}

const windowMs = opt.int({ min: 1, max: 2 ** 31 - 1, unit: 'ms' });
const rateLimitStore = opt.object<RateLimitStore>('an express-rate-limit store (with increment, decrement and resetKey)', (v) => typeof (v as RateLimitStore).increment === 'function');

/** An HTTP token (RFC 9110), and not a header that carries something else. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const NOT_KEY_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'content-type', 'content-length']);

const keyHeaders = z
  .array(z.string({ error: 'must be an HTTP header name' }).regex(HEADER_NAME, 'must be an HTTP header name').refine((h) => !NOT_KEY_HEADERS.has(h.toLowerCase()), 'is never a key header'), {
    error: 'must be a non-empty array of header names',
  })
  .min(1, 'must be a non-empty array of header names')
  .superRefine((names, ctx) => {
    const seen = new Set<string>();
    names.forEach((name, i) => {
      if (seen.has(name.toLowerCase())) ctx.addIssue({ code: 'custom', path: [i], message: `repeats ${name} (header names are case-insensitive)` });
      seen.add(name.toLowerCase());
    });
  });

/** The rate limits and their defaults (1,200 requests a minute per key, 100 refused keys a minute per address). */
const failedAuthShape = z.strictObject({ limit: opt.int({ min: 1 }).default(100), windowMs: windowMs.default(60_000), store: rateLimitStore.optional() });
const rateLimitShape = z.strictObject({
  limit: opt.int({ min: 1 }).default(1200),
  windowMs: windowMs.default(60_000),
  store: rateLimitStore.optional(),
  failedAuth: falseOr(failedAuthShape, 'must be false or {limit?, windowMs?, store?}').optional(),
});

const parseShape = defineOptions('createStoreRouter', {
  adapter: opt.object<StoreAdapter | GuardedAdapter>('a storebridge adapter (an object with products and orders stores)'),
  svcKeys: svcKeysOption().optional(),
  keyVerifier: opt.object<KeyVerifier>('an object with a verify(presented, now) method', (v) => typeof (v as KeyVerifier).verify === 'function').optional(),
  jwt: jwtOption().optional(),
  keyHeaders: keyHeaders.optional(),
  pageSize: opt.int({ min: 1, max: 100_000 }).optional(),
  maxPageSize: opt.int({ min: 1, max: 100_000 }).optional(),
  maxPageBytes: opt.int({ min: 256, max: 1_000_000_000, unit: 'bytes, room for the envelope' }).default(INTERFACE_LIMITS.maxPageBytes),
  maxBodyBytes: opt.int({ min: 1, max: 1_000_000_000, unit: 'bytes' }).default(DEFAULT_MAX_BODY_BYTES),
  timeBudgetMs: opt.int({ min: 1, max: INTERFACE_LIMITS.requestTimeMs, unit: 'ms' }).default(DEFAULT_TIME_BUDGET_MS),
  cursorSecret: z
    .union([z.string(), z.instanceof(Buffer)], { error: 'must be a string or Buffer of at least 16 bytes' })
    .refine((c) => Buffer.byteLength(c) >= 16, 'must be a string or Buffer of at least 16 bytes')
    .optional(),
  defaultPagination: opt.oneOf(['offset', 'cursor']).default('offset'),
  listing: opt.oneOf(['full', 'stubs']).default('full'),
  rateLimit: falseOr(rateLimitShape, 'must be false or {limit?, windowMs?, store?, failedAuth?}').optional(),
  allowedOrderStatuses: z
    .array(z.string().min(1), { error: 'must be null (any status) or a non-empty array of non-empty strings' })
    .min(1, 'must be null (any status) or a non-empty array of non-empty strings')
    .nullable()
    .optional(),
  now: opt.fn<() => number>('a function returning Unix milliseconds').optional(),
  logger: opt.logger().optional(),
  logRequests: opt.boolean().default(false),
  metrics: opt.object<Registry | Metrics>('a prom-client Registry or the result of createMetrics()').optional(),
});

type ParsedOptions = ReturnType<typeof parseShape>;

/** Parses and checks the options once. Throws `InvalidOptionError` naming the bad option. */
export function parseRouterOptions(options: StoreRouterOptions): RouterConfig {
  const o = parseShape(options);
  const metrics = parseMetrics(o.metrics);
  const adapter = parseAdapter(o.adapter);
  return {
    adapter: metrics ? metrics.timeAdapter(adapter) : adapter,
    ...parseKeys(o),
    ...parseSizes(o),
    defaultPagination: o.defaultPagination,
    listing: o.listing,
    rateLimit: rateLimitOf(o.rateLimit),
    allowedOrderStatuses: o.allowedOrderStatuses === null ? null : new Set(o.allowedOrderStatuses ?? ORDER_STATUSES),
    now: o.now ?? Date.now,
    logger: o.logger,
    logRequests: o.logger !== undefined && o.logRequests,
    metrics,
  };
}

function parseAdapter(adapter: StoreAdapter | GuardedAdapter): GuardedAdapter {
  try {
    return guardAdapter(adapter);
  } catch (err) {
    throw new InvalidOptionError('adapter', (err as Error).message);
  }
}

/** The key check (`svcKeys`, `jwt` or `keyVerifier`), the cursor secret and the key header names. */
function parseKeys(o: ParsedOptions): Pick<RouterConfig, 'verifier' | 'cursors' | 'keyHeaders' | 'keyHeaderNames'> {
  let verifier: KeyVerifier;
  let derivedSecret: Buffer | undefined;
  if (o.keyVerifier !== undefined) {
    if (o.svcKeys !== undefined || o.jwt !== undefined) throw new InvalidOptionError('keyVerifier', 'give either svcKeys/jwt or keyVerifier, not both');
    verifier = o.keyVerifier;
  } else if (o.svcKeys === undefined && o.jwt !== undefined) {
    verifier = jwtKeyVerifier(o.jwt, 'jwt');
  } else {
    if (o.svcKeys === undefined) throw new InvalidOptionError('svcKeys', 'at least one SvcKey is required (or jwt, or a keyVerifier)');
    const s = staticKeyVerifier(o.svcKeys, 'svcKeys');
    verifier = o.jwt !== undefined ? anyKeyVerifier(s, jwtKeyVerifier(o.jwt, 'jwt')) : s;
    // Sorted, so replicas listing the same keys in another order still agree.
    const material = [...s.keyMaterial].sort().join('\n');
    derivedSecret = createHmac('sha256', 'storebridge cursor secret v1').update(material, 'utf8').digest();
  }
  const secret = o.cursorSecret !== undefined ? Buffer.from(o.cursorSecret) : derivedSecret;
  if (!secret) throw new InvalidOptionError('cursorSecret', `required with ${o.keyVerifier ? 'a keyVerifier' : 'jwt keys'} (there are no static keys to derive it from)`);
  const headers = o.keyHeaders ?? [...STORE_DIALECT.keyHeaders];
  return { verifier, cursors: new CursorCodec(secret), keyHeaders: headers, keyHeaderNames: headers.map((h) => h.toLowerCase()) };
}

/** Page sizes: the default page size must fit under the cap of `limit`. */
function parseSizes(o: ParsedOptions): Pick<RouterConfig, 'pageSize' | 'maxPageSize' | 'maxPageBytes' | 'maxBodyBytes' | 'timeBudgetMs'> {
  const pageSize = o.pageSize ?? 20;
  const maxPageSize = o.maxPageSize ?? Math.max(1000, pageSize);
  if (pageSize > maxPageSize) throw new InvalidOptionError('pageSize', `must not exceed maxPageSize (${maxPageSize})`);
  return { pageSize, maxPageSize, maxPageBytes: o.maxPageBytes, maxBodyBytes: o.maxBodyBytes, timeBudgetMs: o.timeBudgetMs };
}

/** On by default: 1,200 requests a minute per key, 100 refused keys a minute per address. */
function rateLimitOf(rl: ParsedOptions['rateLimit']): RouterConfig['rateLimit'] {
  if (rl === false) return false;
  // An absent object or member takes the schemas' defaults, declared once above.
  const r = rl ?? rateLimitShape.parse({});
  return { ...r, failedAuth: r.failedAuth ?? failedAuthShape.parse({}) };
}

function parseMetrics(metrics: Registry | Metrics | undefined): StoreMetrics | undefined {
  if (metrics === undefined) return undefined;
  try {
    return createStoreMetrics(metrics);
  } catch (err) {
    throw new InvalidOptionError('metrics', (err as Error).message);
  }
}
