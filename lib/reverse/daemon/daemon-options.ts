/**
 * The daemon's options, events and report, and the one place options are checked: every problem is
 * an `InvalidOptionError` naming the option (never repeating the key).
 */
import type { StoreAdapter } from '../../adapter';
import { guardAdapter, type GuardedAdapter } from '../../adapter-guard';
import { DEFAULT_DIALECT, DIALECT_NAMES, dialectOf, type Dialect, type DialectName } from '../../contract/dialects';
import { INTERFACE_LIMITS } from '../../contract/limits';
import { REVERSE_FAILURE_CODES, type Mode } from '../../contract/messages';
import type { Entity } from '../../contract/entities';
import { InvalidOptionError } from '../../errors';
import { defineOptions, opt } from '../../options';
import { exchangeOf, type Exchange, type FetchLike } from '../../http/exchange';
import type { RetryOptions, RetryPolicy } from '../../http/retry';
import { ENTITIES, perEntity } from '../../contract/entities';

/** Reason codes of the storage failure reports the daemon sends (`reasons[].code`; all codes: `REVERSE_FAILURE_CODES`). */
export const FAILURE_CODES = {
  REFUSED_BY_STORE: REVERSE_FAILURE_CODES.REFUSED_BY_STORE,
  STORE_FAILED: REVERSE_FAILURE_CODES.STORE_FAILED,
  NOT_CONVERTIBLE: REVERSE_FAILURE_CODES.NOT_CONVERTIBLE,
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
  pulled: Record<Entity, number>;
  /** Items pulled that could not be stored (acknowledged `failed`): all entities. */
  failed: number;
  /** The same, per entity. */
  failedByEntity: Record<Entity, number>;
  /** Items the service acknowledged receiving in normal push pages (the items sent, when it does not say). */
  pushed: Record<Entity, number>;
  /** Items sent in sample pushes. */
  sampled: Record<Entity, number>;
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
  /** The connection key as it goes in `{P}` (percent-encoded). */
  readonly pathKey: string;
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

const positive = (max: number, unit = '') => opt.int({ min: 1, max, unit }).optional();

/** The daemon's options, declared once (lib/options.ts: a bad value or an unknown name throws InvalidOptionError). */
const parseOptions = defineOptions('createDaemon', {
  serviceUrl: opt.httpUrl(),
  connectionKey: opt.text('a non-empty connection key'),
  adapter: opt.object<StoreAdapter | GuardedAdapter>("the store's adapter"),
  dialect: opt.oneOf(DIALECT_NAMES).optional(),
  pollIntervalMs: positive(3_600_000, 'ms'),
  idlePollMaxMs: positive(86_400_000, 'ms'),
  requestTimeoutMs: positive(3_600_000, 'ms'),
  maxResponseBytes: positive(1 << 30, 'bytes'),
  maxPageBytes: positive(1 << 30, 'bytes'),
  pageItems: positive(100_000),
  sampleSize: positive(100_000),
  maxWaits: positive(1_000_000),
  maxReadyPolls: positive(1_000_000),
  maxConsecutiveErrors: positive(1_000_000),
  maxStalledPasses: positive(1_000_000),
  retry: opt.retry({ limit: 2 }),
  fetch: opt.fn<FetchLike>().optional(),
  onEvent: opt.fn<(event: DaemonEvent) => void>().optional(),
  now: opt.fn<() => number>('a function returning Unix milliseconds').optional(),
});

export function parseDaemonOptions(options: DaemonOptions): DaemonConfig {
  const o = parseOptions(options);
  const pollIntervalMs = o.pollIntervalMs ?? 1000;
  const idlePollMaxMs = o.idlePollMaxMs ?? 30_000;
  if (idlePollMaxMs < pollIntervalMs) throw new InvalidOptionError('idlePollMaxMs', 'must not be smaller than pollIntervalMs');
  const serviceUrl = new URL(o.serviceUrl).href.replace(/\/+$/, '');
  return {
    serviceUrl,
    pathKey: encodeURIComponent(o.connectionKey),
    adapter: guardAdapter(o.adapter),
    dialect: dialectOf(o.dialect ?? DEFAULT_DIALECT),
    pollIntervalMs,
    idlePollMaxMs,
    requestTimeoutMs: o.requestTimeoutMs ?? 30_000,
    maxResponseBytes: o.maxResponseBytes ?? 16 * 1024 * 1024,
    maxPageBytes: o.maxPageBytes ?? INTERFACE_LIMITS.maxPageBytes,
    pageItems: o.pageItems ?? 500,
    sampleSize: o.sampleSize ?? 10,
    maxWaits: o.maxWaits ?? 11,
    maxReadyPolls: o.maxReadyPolls ?? 120,
    maxConsecutiveErrors: o.maxConsecutiveErrors ?? 5,
    maxStalledPasses: o.maxStalledPasses ?? 10,
    retry: o.retry,
    exchange: exchangeOf(o.fetch),
    onEvent: o.onEvent ?? (() => undefined),
    now: o.now ?? Date.now,
  };
}

export function emptyReport(): DaemonReport {
  return {
    ok: true,
    pulled: perEntity(() => 0),
    failed: 0,
    failedByEntity: perEntity(() => 0),
    pushed: perEntity(() => 0),
    sampled: perEntity(() => 0),
    pushRefused: 0,
    pushSkipped: 0,
    transactions: 0,
    errors: [],
  };
}

/** Adds `delta` (counts of one run) into `total`. */
export function addReport(total: DaemonReport, delta: DaemonReport): void {
  for (const e of ENTITIES) {
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
