/**
 * The daemon's options, events and report, and the one place options are checked: every problem is
 * an `InvalidOptionError` naming the option (never repeating the key).
 */
import type { StoreAdapter } from '../../adapter';
import { guardAdapter, type GuardedAdapter } from '../../adapter-guard';
import { DEFAULT_DIALECT, DIALECT_NAMES, dialectOf, type Dialect, type DialectName } from '../../contract/dialects';
import { INTERFACE_LIMITS } from '../../contract/limits';
import type { Mode } from '../../contract/messages';
import { REVERSE_BASE_PATH } from '../../contract/reverse-routes';
import type { Entity } from '../../contract/webhook';
import { InvalidOptionError } from '../../errors';
import { exchangeOf, type Exchange, type FetchLike } from '../../http/exchange';
import { parseRetry, type RetryOptions, type RetryPolicy } from '../../http/retry';

/** Reason codes of the storage failure reports the daemon sends (`reasons[].code`). */
export const FAILURE_CODES = {
  /** The adapter's `checkProduct` / `checkOrder` refused the item; one reason per message. */
  REFUSED_BY_STORE: 1001,
  /** The adapter threw while reading or writing the item. */
  STORE_FAILED: 1002,
  /** The item cannot be read into the store's (webhook) form. */
  NOT_CONVERTIBLE: 1003,
} as const;

export type TransactionKind = 'pull' | 'push' | 'pingsample';

export type DaemonEvent =
  | { readonly type: 'mode'; readonly mode: Mode }
  | { readonly type: 'initialized'; readonly kind: TransactionKind; readonly entity?: Entity }
  | { readonly type: 'resumed'; readonly kind: TransactionKind; readonly entity?: Entity | 'finish' }
  | { readonly type: 'item-stored'; readonly entity: Entity; readonly id: string; /** The store's id when it differs (an inserted order). */ readonly storeId?: string }
  | { readonly type: 'item-failed'; readonly entity: Entity; readonly id: string; readonly error: string }
  | { readonly type: 'page-pushed'; readonly kind: 'push' | 'pingsample'; readonly entity: Entity; readonly items: number; readonly bytes: number; readonly refused: number }
  | { readonly type: 'push-item-skipped'; readonly entity: Entity; readonly id: string; readonly reason: string }
  | { readonly type: 'finished'; readonly kind: TransactionKind; readonly entity?: Entity }
  | { readonly type: 'idle'; readonly nextPollMs: number }
  | { readonly type: 'error'; readonly error: string };

export interface DaemonOptions {
  /** The service's base URL (`{base_url}`), e.g. `https://sync.example.com`. `GET` of it must answer 200. */
  readonly serviceUrl: string;
  /** The connection key. Only ever sent in paths; never logged, never in errors or events. */
  readonly connectionKey: string;
  /** The store's adapter: pulls are written into it, pushes are read from it. */
  readonly adapter: StoreAdapter | GuardedAdapter;
  /**
   * How items are written and acknowledged: `spec` (strings, ISO dates, acknowledgements by `_id`) or
   * `click2sync` (numbers, epoch-ms dates, acknowledgements by `sku` / `orderid`). Default `spec`.
   */
  readonly dialect?: DialectName;
  /** Wait between polls (ms). Default 1000. */
  readonly pollIntervalMs?: number;
  /** When idle (`start()`), the wait doubles up to this (ms). Default 30 000. */
  readonly idlePollMaxMs?: number;
  /** Time-out of each call to the service (ms). Default 30 000. */
  readonly requestTimeoutMs?: number;
  /** Largest reply read from the service (bytes); a larger one is an error. Default 16 MiB (a pulled item may be near 10 MB). */
  readonly maxResponseBytes?: number;
  /** Byte budget of one push page's body. Default 10 000 000. */
  readonly maxPageBytes?: number;
  /** Most items in one push page. Default 500. */
  readonly pageItems?: number;
  /** Items of each entity a sample push sends (one page). Default 10. */
  readonly sampleSize?: number;
  /** `hasmore` answering `waiting` this many times in a row ends the entity's loop (the deployed daemons stop after about 11). Default 11. */
  readonly maxWaits?: number;
  /** `readyfornext` answering `false` this many times in a row fails the pass. Default 120. */
  readonly maxReadyPolls?: number;
  /** `runOnce` gives up (report `ok: false`) after this many failed passes in a row (at once on a 404: unknown key). Default 5. */
  readonly maxConsecutiveErrors?: number;
  /** `runOnce` gives up after this many passes in a row that the service asked for but that changed nothing. Default 10. */
  readonly maxStalledPasses?: number;
  /** Retries of one call, in ky's shape (`limit`, `statusCodes`, `delay`, …). GETs are retried on those statuses, network failures and time-outs; POSTs only on those statuses. Default `{limit: 2}`. */
  readonly retry?: number | RetryOptions;
  /** A `fetch` to call instead of the default transport (`node:http` / `node:https`, keep-alive). */
  readonly fetch?: FetchLike;
  /** Progress and errors, for logs or a progress bar. Events never hold the key. */
  readonly onEvent?: (event: DaemonEvent) => void;
  /** The clock (Unix ms). Default `Date.now`. */
  readonly now?: () => number;
}

/** What a run did. */
export interface DaemonReport {
  /** `false` when the run gave up (errors, no progress). Items refused by the store do not make it false. */
  ok: boolean;
  /** Items pulled and stored (acknowledged `succeded`). */
  pulled: { products: number; orders: number };
  /** Items pulled that could not be stored (acknowledged `failed`): all entities. */
  failed: number;
  /** The same, per entity. */
  failedByEntity: { products: number; orders: number };
  /** Items the service acknowledged receiving in normal push pages (the items sent, when it does not say). */
  pushed: { products: number; orders: number };
  /** Items sent in sample pushes. */
  sampled: { products: number; orders: number };
  /** Items the service refused in push pages (the rest of their page was stored). */
  pushRefused: number;
  /** Items of the store left out of a push (larger than the page budget, or not writable in reverse form). */
  pushSkipped: number;
  /** Transactions finished. */
  transactions: number;
  /** Errors met, oldest first, at most 20. */
  errors: string[];
}

export interface DaemonConfig {
  readonly serviceUrl: string;
  /** `{P}`: the service URL, the base path and the encoded key. */
  readonly base: string;
  readonly adapter: GuardedAdapter;
  readonly dialect: Dialect;
  readonly pollIntervalMs: number;
  readonly idlePollMaxMs: number;
  readonly requestTimeoutMs: number;
  readonly maxResponseBytes: number;
  readonly maxPageBytes: number;
  readonly pageItems: number;
  readonly sampleSize: number;
  readonly maxWaits: number;
  readonly maxReadyPolls: number;
  readonly maxConsecutiveErrors: number;
  readonly maxStalledPasses: number;
  readonly retry: RetryPolicy;
  readonly exchange: Exchange;
  readonly onEvent: (event: DaemonEvent) => void;
  readonly now: () => number;
}

function positiveInteger(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new InvalidOptionError(option, `expected a positive integer, got ${String(value)}`);
  return value;
}

function serviceUrlOf(value: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new InvalidOptionError('serviceUrl', 'expected an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidOptionError('serviceUrl', 'expected an http or https URL');
  return url;
}

export function parseDaemonOptions(options: DaemonOptions): DaemonConfig {
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  const url = serviceUrlOf(options.serviceUrl);
  if (typeof options.connectionKey !== 'string' || options.connectionKey === '') throw new InvalidOptionError('connectionKey', 'expected a non-empty string');
  if (!options.adapter) throw new InvalidOptionError('adapter', "the store's adapter is required");
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new InvalidOptionError('fetch', 'must be a function');
  if (options.dialect !== undefined && !(DIALECT_NAMES as readonly string[]).includes(options.dialect)) throw new InvalidOptionError('dialect', `expected ${DIALECT_NAMES.join(' or ')}`);
  const pollIntervalMs = positiveInteger('pollIntervalMs', options.pollIntervalMs, 1000);
  const idlePollMaxMs = positiveInteger('idlePollMaxMs', options.idlePollMaxMs, 30_000);
  if (idlePollMaxMs < pollIntervalMs) throw new InvalidOptionError('idlePollMaxMs', 'must not be smaller than pollIntervalMs');
  const serviceUrl = url.href.replace(/\/+$/, '');
  return {
    serviceUrl,
    base: `${serviceUrl}${REVERSE_BASE_PATH}/${encodeURIComponent(options.connectionKey)}`,
    adapter: guardAdapter(options.adapter),
    dialect: dialectOf(options.dialect ?? DEFAULT_DIALECT),
    pollIntervalMs,
    idlePollMaxMs,
    requestTimeoutMs: positiveInteger('requestTimeoutMs', options.requestTimeoutMs, 30_000),
    maxResponseBytes: positiveInteger('maxResponseBytes', options.maxResponseBytes, 16 * 1024 * 1024),
    maxPageBytes: positiveInteger('maxPageBytes', options.maxPageBytes, INTERFACE_LIMITS.maxPageBytes),
    pageItems: positiveInteger('pageItems', options.pageItems, 500),
    sampleSize: positiveInteger('sampleSize', options.sampleSize, 10),
    maxWaits: positiveInteger('maxWaits', options.maxWaits, 11),
    maxReadyPolls: positiveInteger('maxReadyPolls', options.maxReadyPolls, 120),
    maxConsecutiveErrors: positiveInteger('maxConsecutiveErrors', options.maxConsecutiveErrors, 5),
    maxStalledPasses: positiveInteger('maxStalledPasses', options.maxStalledPasses, 10),
    retry: parseRetry(options.retry, 'retry', { limit: 2 }),
    exchange: exchangeOf(options.fetch),
    onEvent: options.onEvent ?? (() => undefined),
    now: options.now ?? Date.now,
  };
}

export function emptyReport(): DaemonReport {
  return {
    ok: true,
    pulled: { products: 0, orders: 0 },
    failed: 0,
    failedByEntity: { products: 0, orders: 0 },
    pushed: { products: 0, orders: 0 },
    sampled: { products: 0, orders: 0 },
    pushRefused: 0,
    pushSkipped: 0,
    transactions: 0,
    errors: [],
  };
}

/** Adds `delta` (counts of one run) into `total`. */
export function addReport(total: DaemonReport, delta: DaemonReport): void {
  for (const e of ['products', 'orders'] as const) {
    total.pulled[e] += delta.pulled[e];
    total.failedByEntity[e] += delta.failedByEntity[e];
    total.pushed[e] += delta.pushed[e];
    total.sampled[e] += delta.sampled[e];
  }
  total.failed += delta.failed;
  total.pushRefused += delta.pushRefused;
  total.pushSkipped += delta.pushSkipped;
  total.transactions += delta.transactions;
  for (const e of delta.errors) {
    total.errors.push(e);
    if (total.errors.length > 20) total.errors.shift();
  }
}
