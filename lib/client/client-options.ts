/**
 * The caller's options, parsed once into a `ClientConfig` (errors name the bad option).
 */
import { InvalidOptionError } from '../errors';
import type { FetchLike } from '../http/exchange';
import { parseRetry, type RetryOptions, type RetryPolicy } from '../http/retry';
import { KEY_HEADERS } from '../contract/dialects';
import type { WebhookOperation } from '../contract/webhook-routes';
import { operationUrls } from './client-urls';

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
  /** Per-operation URLs (as configured in a connection); each one given overrides `baseUrl`'s. */
  urls?: OperationUrls;
  /** The connection's key, sent in every header of `keyHeaders` and nowhere else. */
  svcKey: string;
  /**
   * The headers the key is sent in. Default both of the contract's `KEY_HEADERS`: `SvcKey` (the
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
  readonly urls: Readonly<Record<Operation, string>>;
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

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 10_000_000;

function positiveInt(name: string, v: unknown, fallback: number | undefined, min = 1): number | undefined {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new InvalidOptionError(name, `must be an integer ≥ ${min}`);
  return v;
}

function checkUrl(name: string, v: unknown, svcKey: string): string {
  if (typeof v !== 'string' || v === '') throw new InvalidOptionError(name, 'must be an http(s) URL');
  let u: URL;
  try {
    u = new URL(v.replace('{id}', 'x'));
  } catch {
    throw new InvalidOptionError(name, 'must be an http(s) URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InvalidOptionError(name, 'must be an http(s) URL');
  // Credentials in a URL end up in logs and errors: the key belongs in the key headers only.
  if (u.username || u.password) throw new InvalidOptionError(name, 'must not carry credentials');
  if (svcKey && v.includes(svcKey)) throw new InvalidOptionError(name, 'must not contain the key (it is sent in the key headers)');
  return v;
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function checkKeyHeaders(v: unknown): readonly string[] {
  if (v === undefined) return KEY_HEADERS;
  if (!Array.isArray(v) || v.length === 0 || v.some((h) => typeof h !== 'string' || !HEADER_NAME.test(h))) {
    throw new InvalidOptionError('keyHeaders', 'must be a non-empty array of header names');
  }
  if (new Set(v.map((h: string) => h.toLowerCase())).size !== v.length) throw new InvalidOptionError('keyHeaders', 'must not name a header twice');
  return [...(v as string[])];
}

export function parseClientOptions(options: StoreClientOptions): ClientConfig {
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object');
  const { svcKey } = options;
  if (typeof svcKey !== 'string' || svcKey === '') throw new InvalidOptionError('svcKey', 'must be a non-empty string');
  if (/[\r\n]/.test(svcKey)) throw new InvalidOptionError('svcKey', 'must not contain line breaks');
  if (options.urls !== undefined && (typeof options.urls !== 'object' || options.urls === null)) throw new InvalidOptionError('urls', 'must be an object of URLs by operation');
  const baseUrl = options.baseUrl === undefined ? undefined : checkUrl('baseUrl', options.baseUrl, svcKey);
  const urls = operationUrls(baseUrl, options.urls ?? {}, (name, url) => checkUrl(name, url, svcKey));
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new InvalidOptionError('fetch', 'must be a function');
  const hooks = options.hooks ?? {};
  for (const k of ['beforeRequest', 'afterResponse', 'beforeRetry'] as const) {
    const h = hooks[k];
    if (h !== undefined && (!Array.isArray(h) || h.some((f) => typeof f !== 'function'))) {
      throw new InvalidOptionError(`hooks.${k}`, 'must be an array of functions');
    }
  }
  return {
    urls,
    svcKey,
    keyHeaders: checkKeyHeaders(options.keyHeaders),
    timeoutMs: positiveInt('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS)!,
    totalBudgetMs: positiveInt('totalBudgetMs', options.totalBudgetMs, undefined),
    maxResponseBytes: positiveInt('maxResponseBytes', options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES)!,
    retry: parseRetry(options.retry),
    fetch: options.fetch,
    hooks: {
      beforeRequest: hooks.beforeRequest ?? [],
      afterResponse: hooks.afterResponse ?? [],
      beforeRetry: hooks.beforeRetry ?? [],
    },
    pageSize: positiveInt('pageSize', options.pageSize, undefined),
  };
}
