/**
 * The caller's options, parsed once into a `ClientConfig` (errors name the bad option).
 */
import { z } from 'zod';
import { InvalidOptionError } from '../errors';
import { defineOptions, opt } from '../options';
import type { FetchLike } from '../http/exchange';
import type { RetryOptions, RetryPolicy } from '../http/retry';
import { STORE_DIALECT } from '../contract/dialects';
import { INTERFACE_LIMITS } from '../contract/limits';
import type { WebhookOperation } from '../contract/webhook-routes';
import { operationUrls } from './client-urls';
import { entityOf } from '../contract/entities';
import { ENTITIES, type Entity } from '../contract/entities';

export type { FetchLike } from '../http/exchange';
export type { RetryOptions } from '../http/retry';

/** The six webhook operations (the contract's `WebhookOperation`). */
export type Operation = WebhookOperation;

/**
 * Where each operation lives, as a connection configures it. A deployed connection has one URL per
 * entity (`{{URI_PRODUCTS}}`, `{{URI_ORDERS}}`), possibly with a query of its own
 * (`…/c2s.php?entity=products`): give `listProducts` and `listOrders`, and that URL also serves
 * the entity's writes and its by-ID reads (`?id=`). By-ID URLs may hold `{id}` (replaced by the
 * URL-encoded id, e.g. `https://shop.example/items/{id}`); without it the id is sent as `?id=`.
 */
export interface OperationUrls {
  listProducts?: string;
  listOrders?: string;
  getProduct?: string;
  getOrder?: string;
  writeOrder?: string;
  writeProduct?: string;
}

export interface RequestInfo {
  readonly operation: Operation | string;
  readonly method: string;
  /** Never holds the key. */
  readonly url: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
}

/**
 * Hooks for logging and metrics. Payloads never hold the key (nor any header); a hook that throws
 * is ignored.
 *
 * @example Log every attempt and retry with pino:
 * ```ts
 * const log = pino();
 * createStoreClient({ baseUrl, svcKey, hooks: {
 *   afterResponse: [(i) => log.info({ op: i.operation, url: i.url, status: i.status, ms: i.durationMs }, 'store call')],
 *   beforeRetry: [(i) => log.warn({ op: i.operation, attempt: i.attempt, delayMs: i.delayMs, err: i.error.message }, 'retrying')],
 * } });
 * ```
 */
export interface ClientHooks {
  beforeRequest?: Array<(info: RequestInfo) => void>;
  afterResponse?: Array<(info: RequestInfo & { status: number; bytes: number; durationMs: number }) => void>;
  beforeRetry?: Array<(info: RequestInfo & { error: Error; delayMs: number }) => void>;
}

/**
 * A fetch for the client to call instead of its default transport (`node:http` / `node:https` with
 * keep-alive: about half the CPU per request of Node 20's global `fetch`). Inject one for a proxy
 * agent, tracing, or tests; `fetch: globalThis.fetch` uses the global one.
 *
 * @example
 * ```ts
 * import { Agent } from 'undici';
 * const dispatcher = new Agent({ connections: 8 });
 * createStoreClient({ baseUrl, svcKey, fetch: (url, init) => fetch(url, { ...init, dispatcher } as RequestInit) });
 * ```
 */

export interface StoreClientOptions {
  /**
   * The store's base URL: operations live where this kit's router puts them (`/products`,
   * `/products/{id}`, `/orders`, …: the contract's `WEBHOOK_ROUTES`). Optional when `urls` names
   * both list URLs.
   */
  baseUrl?: string;
  /**
   * Per-operation URLs (as configured in a connection); each one given overrides `baseUrl`'s.
   * Without `baseUrl`, the entities with a list URL are the ones the connection covers: a
   * products-only store is `urls: { listProducts }` alone (`config.entities` says which).
   */
  urls?: OperationUrls;
  /** The connection's key, sent in every header of `keyHeaders` and nowhere else. */
  svcKey: string;
  /**
   * The headers the key is sent in. Default the store dialect's `keyHeaders` (both of `KEY_HEADERS`): `SvcKey` (the
   * spec's) and `C2SKey` (what the deployed service sends and deployed stores read), so stores of
   * either kind accept it.
   */
  keyHeaders?: readonly string[];
  /** Per-attempt limit for the whole response, headers and body (default 60,000 ms, the spec's). */
  timeoutMs?: number;
  /** Limit for one call including every retry and backoff (default: none). */
  totalBudgetMs?: number;
  /** Largest response body read (default 10,000,000 bytes); enforced while streaming. */
  maxResponseBytes?: number;
  /** A number (the retry limit) or the full options. `0` disables retries. */
  retry?: number | RetryOptions;
  /** Injectable fetch (default: none, the client speaks `node:http` / `node:https` itself). */
  fetch?: FetchLike;
  hooks?: ClientHooks;
  /**
   * Items per page to ask for with the `limit` query parameter (this kit's router honours it;
   * other stores may ignore it). Unset: no `limit` is sent and the store picks.
   */
  pageSize?: number;
}

export interface ClientConfig {
  /** The URL of each operation of the entities the connection covers (`entities`). */
  readonly urls: Readonly<Partial<Record<Operation, string>>>;
  /** The entities the connection covers: those with a list URL, or all of them with a base URL. */
  readonly entities: readonly Entity[];
  readonly svcKey: string;
  readonly keyHeaders: readonly string[];
  readonly timeoutMs: number;
  readonly totalBudgetMs: number | undefined;
  readonly maxResponseBytes: number;
  readonly retry: RetryPolicy;
  /** The injected fetch, if any. */
  readonly fetch: FetchLike | undefined;
  readonly hooks: Required<ClientHooks>;
  readonly pageSize: number | undefined;
}

/** A call's time-out: the interface's "1 minute per request" (`INTERFACE_LIMITS.requestTimeMs`). */
export const DEFAULT_TIMEOUT_MS = INTERFACE_LIMITS.requestTimeMs;
/** Largest reply read: the interface's 10 MB page (`INTERFACE_LIMITS.maxPageBytes`, 10,000,000 bytes). */
export const DEFAULT_MAX_RESPONSE_BYTES = INTERFACE_LIMITS.maxPageBytes;

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A URL option: absolute http(s), no credentials; a by-ID URL may hold `{id}`. */
const url = () => opt.httpUrl();

const parseOptions = defineOptions('createStoreClient', {
  baseUrl: url().optional(),
  urls: z
    .strictObject({ listProducts: url().optional(), listOrders: url().optional(), getProduct: url().optional(), getOrder: url().optional(), writeOrder: url().optional(), writeProduct: url().optional() })
    .optional(),
  svcKey: opt.text('a non-empty string of one line'),
  keyHeaders: z
    .array(z.string().regex(HEADER_NAME, 'must be header names'), { error: 'must be a non-empty array of header names' })
    .min(1, 'must be a non-empty array of header names')
    .refine((names) => new Set(names.map((h) => h.toLowerCase())).size === names.length, 'must not name a header twice')
    .optional(),
  timeoutMs: opt.int({ min: 1, unit: 'ms' }).default(DEFAULT_TIMEOUT_MS),
  totalBudgetMs: opt.int({ min: 1, unit: 'ms' }).optional(),
  maxResponseBytes: opt.int({ min: 1, unit: 'bytes' }).default(DEFAULT_MAX_RESPONSE_BYTES),
  retry: opt.retry(),
  fetch: opt.fn<FetchLike>().optional(),
  hooks: z
    .strictObject({
      beforeRequest: z.array(opt.fn(), { error: 'must be an array of functions' }).optional(),
      afterResponse: z.array(opt.fn(), { error: 'must be an array of functions' }).optional(),
      beforeRetry: z.array(opt.fn(), { error: 'must be an array of functions' }).optional(),
    })
    .optional(),
  pageSize: opt.int({ min: 1 }).optional(),
});

/** The key must not appear in any URL: URLs end up in logs and errors, the key only in its headers. */
function checkKeyNotIn(name: string, value: string, svcKey: string): string {
  if (value.includes(svcKey)) throw new InvalidOptionError(name, 'must not contain the key (it is sent in the key headers)');
  return value;
}

/** Parses the caller's options once (`lib/options.ts`: a bad value or an unknown option throws `InvalidOptionError` naming it). */
export function parseClientOptions(options: StoreClientOptions): ClientConfig {
  const o = parseOptions(options);
  const { svcKey } = o;
  const baseUrl = o.baseUrl === undefined ? undefined : checkKeyNotIn('baseUrl', o.baseUrl, svcKey);
  const urls = operationUrls(baseUrl, o.urls ?? {}, (name, u) => checkKeyNotIn(name, u, svcKey));
  const hooks = o.hooks ?? {};
  return {
    urls,
    entities: ENTITIES.filter((e) => urls[entityOf(e).operations.list] !== undefined),
    svcKey,
    keyHeaders: o.keyHeaders ?? STORE_DIALECT.keyHeaders,
    timeoutMs: o.timeoutMs,
    totalBudgetMs: o.totalBudgetMs,
    maxResponseBytes: o.maxResponseBytes,
    retry: o.retry,
    fetch: o.fetch,
    hooks: {
      beforeRequest: (hooks.beforeRequest ?? []) as ClientConfig['hooks']['beforeRequest'],
      afterResponse: (hooks.afterResponse ?? []) as ClientConfig['hooks']['afterResponse'],
      beforeRetry: (hooks.beforeRetry ?? []) as ClientConfig['hooks']['beforeRetry'],
    },
    pageSize: o.pageSize,
  };
}
