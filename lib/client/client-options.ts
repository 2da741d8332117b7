/**
 * The caller's options, parsed once into a `ClientConfig` (errors name the bad option).
 */
import { InvalidOptionError } from '../errors';
import type { FetchLike } from '../http/exchange';
import { parseRetry, type RetryOptions, type RetryPolicy } from '../http/retry';

export type { FetchLike } from '../http/exchange';
export type { RetryOptions } from '../http/retry';

/** The six webhook operations. */
export type Operation = 'listProducts' | 'listOrders' | 'getProduct' | 'getOrder' | 'writeOrder' | 'writeProduct';

/**
 * Where each operation lives. By-ID URLs may hold `{id}` (replaced by the URL-encoded id);
 * without it the id is appended as a path segment.
 */
export interface OperationUrls {
  listProducts: string;
  listOrders: string;
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
  /** The store's base URL: operations live at `/products`, `/products/{id}`, `/orders`, … */
  baseUrl?: string;
  /** Per-operation URLs (as configured in a connection); overrides `baseUrl`. */
  urls?: OperationUrls;
  /** The connection's key, sent in the `SvcKey` header only. */
  svcKey: string;
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
  readonly urls: Required<OperationUrls>;
  readonly svcKey: string;
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
  // Credentials in a URL end up in logs and errors: the key belongs in the SvcKey header only.
  if (u.username || u.password) throw new InvalidOptionError(name, 'must not carry credentials');
  if (svcKey && v.includes(svcKey)) throw new InvalidOptionError(name, 'must not contain the key (it is sent in the SvcKey header)');
  return v;
}

export function parseClientOptions(options: StoreClientOptions): ClientConfig {
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'must be an object');
  const { svcKey } = options;
  if (typeof svcKey !== 'string' || svcKey === '') throw new InvalidOptionError('svcKey', 'must be a non-empty string');
  if (/[\r\n]/.test(svcKey)) throw new InvalidOptionError('svcKey', 'must not contain line breaks');
  let urls: Required<OperationUrls>;
  if (options.urls) {
    const u = options.urls;
    const listProducts = checkUrl('urls.listProducts', u.listProducts, svcKey);
    const listOrders = checkUrl('urls.listOrders', u.listOrders, svcKey);
    const byId = (base: string) => `${base.replace(/\?.*$/, '').replace(/\/+$/, '')}/{id}`;
    urls = {
      listProducts,
      listOrders,
      getProduct: checkUrl('urls.getProduct', u.getProduct ?? byId(listProducts), svcKey),
      getOrder: checkUrl('urls.getOrder', u.getOrder ?? byId(listOrders), svcKey),
      writeOrder: checkUrl('urls.writeOrder', u.writeOrder ?? listOrders, svcKey),
      writeProduct: checkUrl('urls.writeProduct', u.writeProduct ?? listProducts, svcKey),
    };
  } else {
    const base = checkUrl('baseUrl', options.baseUrl, svcKey).replace(/\/+$/, '');
    urls = {
      listProducts: `${base}/products`,
      listOrders: `${base}/orders`,
      getProduct: `${base}/products/{id}`,
      getOrder: `${base}/orders/{id}`,
      writeOrder: `${base}/orders`,
      writeProduct: `${base}/products`,
    };
  }
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
