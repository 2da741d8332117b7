/**
 * Retry policy as data, in ky's shape: one options object (or just a number, the limit) that the
 * store caller, the reverse daemon and the BullMQ sync worker all normalise with `parseRetry` and
 * apply with `retryDecision`. Which failures are retried is decided here and nowhere else.
 *
 * @example
 * ```ts
 * createStoreClient({ baseUrl, svcKey, retry: 5 });                                  // limit only
 * createStoreClient({ baseUrl, svcKey, retry: { limit: 2, statusCodes: [503], jitter: false } });
 * createDaemon({ …, retry: { limit: 10, delay: (n) => 1000 * n, backoffLimit: 30_000 } });
 * ```
 */
import { InvalidOptionError } from '../errors';

export interface RetryOptions {
  /** Retries after the first attempt (default 3); `0` disables retrying. */
  readonly limit?: number;
  /** Answer statuses that are retried (default 408, 429, 500, 502, 503, 504). Others never are. */
  readonly statusCodes?: readonly number[];
  /** Statuses whose `Retry-After` header sets the wait (default 429, 503). */
  readonly afterStatusCodes?: readonly number[];
  /** Longest `Retry-After` honoured, in ms (default 60 000); a longer one ends the retries. */
  readonly maxRetryAfter?: number;
  /** Longest wait between two attempts, in ms (default 10 000). */
  readonly backoffLimit?: number;
  /** The wait before retry `n` (1 for the first retry), before jitter: default `300 · 2^(n−1)` ms. */
  readonly delay?: (attemptCount: number) => number;
  /**
   * `true` (default): full jitter, a random wait in `[0, delay)`, so thousands of callers that failed
   * together do not retry together. `false`: exactly `delay`. A function: your own, given the delay.
   */
  readonly jitter?: boolean | ((delay: number) => number);
  /** Whether a request that timed out is retried (default `true`: a slow store is usually busy, not broken). */
  readonly retryOnTimeout?: boolean;
}

/** The normalised policy: every member set. */
export interface RetryPolicy {
  readonly limit: number;
  readonly statusCodes: ReadonlySet<number>;
  readonly afterStatusCodes: ReadonlySet<number>;
  readonly maxRetryAfter: number;
  readonly backoffLimit: number;
  readonly delay: (attemptCount: number) => number;
  readonly jitter: (delay: number) => number;
  readonly retryOnTimeout: boolean;
}

export const DEFAULT_RETRY_STATUS_CODES: readonly number[] = [408, 429, 500, 502, 503, 504];
export const DEFAULT_RETRY_AFTER_STATUS_CODES: readonly number[] = [429, 503];

const fullJitter = (delay: number) => Math.random() * delay;
const noJitter = (delay: number) => delay;

function count(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new InvalidOptionError(option, 'must be an integer ≥ 0');
  return value;
}

function statuses(option: string, value: unknown, fallback: readonly number[]): ReadonlySet<number> {
  if (value === undefined) return new Set(fallback);
  if (!Array.isArray(value) || value.some((s) => !Number.isInteger(s) || s < 100 || s > 599)) {
    throw new InvalidOptionError(option, 'must be an array of HTTP statuses (100–599)');
  }
  return new Set(value as number[]);
}

const RETRY_MEMBERS = new Set(['limit', 'statusCodes', 'afterStatusCodes', 'maxRetryAfter', 'backoffLimit', 'delay', 'jitter', 'retryOnTimeout']);

/**
 * Normalises `retry: number | RetryOptions` once (`option` names it in errors). `defaults` changes
 * the defaults for one user of the policy (the daemon waits longer than the caller, say).
 */
export function parseRetry(input: number | RetryOptions | undefined, option = 'retry', defaults: RetryOptions = {}): RetryPolicy {
  const r: RetryOptions = typeof input === 'number' ? { limit: input } : (input ?? {});
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new InvalidOptionError(option, 'must be a number (the retry limit) or an object');
  for (const key of Object.keys(r)) if (!RETRY_MEMBERS.has(key)) throw new InvalidOptionError(`${option}.${key}`, `is not a retry option (expected ${[...RETRY_MEMBERS].join(', ')})`);
  const merged = { ...defaults, ...r };
  const delay = merged.delay ?? ((n: number) => 300 * 2 ** (n - 1));
  if (typeof delay !== 'function') throw new InvalidOptionError(`${option}.delay`, 'must be a function of the attempt count');
  const jitter = merged.jitter === undefined || merged.jitter === true ? fullJitter : merged.jitter === false ? noJitter : merged.jitter;
  if (typeof jitter !== 'function') throw new InvalidOptionError(`${option}.jitter`, 'must be a boolean or a function');
  if (merged.retryOnTimeout !== undefined && typeof merged.retryOnTimeout !== 'boolean') throw new InvalidOptionError(`${option}.retryOnTimeout`, 'must be a boolean');
  return {
    limit: count(`${option}.limit`, merged.limit, 3),
    statusCodes: statuses(`${option}.statusCodes`, merged.statusCodes, DEFAULT_RETRY_STATUS_CODES),
    afterStatusCodes: statuses(`${option}.afterStatusCodes`, merged.afterStatusCodes, DEFAULT_RETRY_AFTER_STATUS_CODES),
    maxRetryAfter: count(`${option}.maxRetryAfter`, merged.maxRetryAfter, 60_000),
    backoffLimit: count(`${option}.backoffLimit`, merged.backoffLimit, 10_000),
    delay,
    jitter,
    retryOnTimeout: merged.retryOnTimeout ?? true,
  };
}

/** What failed, as far as the policy cares. */
export type AttemptFailure =
  | { readonly kind: 'status'; readonly status: number; /** The `Retry-After` header, if any. */ readonly retryAfter?: string | null }
  | { readonly kind: 'timeout' }
  /** No answer: `retryable` is false when another attempt cannot help (an untrusted certificate). */
  | { readonly kind: 'network'; readonly retryable: boolean };

export type RetryDecision = { readonly retry: true; readonly delayMs: number } | { readonly retry: false; readonly reason: 'limit' | 'not-retryable' | 'retry-after-too-long' };

/**
 * Whether attempt `attemptCount` (1 = the first) is followed by another, and after how long.
 * `Retry-After` (seconds or an HTTP date), on a status listed in `afterStatusCodes`, replaces the
 * backoff; one longer than `maxRetryAfter` ends the retries.
 */
export function retryDecision(policy: RetryPolicy, attemptCount: number, failure: AttemptFailure, now = Date.now()): RetryDecision {
  const retryable =
    failure.kind === 'status' ? policy.statusCodes.has(failure.status) : failure.kind === 'timeout' ? policy.retryOnTimeout : failure.retryable;
  if (!retryable) return { retry: false, reason: 'not-retryable' };
  if (attemptCount > policy.limit) return { retry: false, reason: 'limit' };
  if (failure.kind === 'status' && policy.afterStatusCodes.has(failure.status)) {
    const after = parseRetryAfter(failure.retryAfter ?? null, now);
    if (after !== undefined) return after > policy.maxRetryAfter ? { retry: false, reason: 'retry-after-too-long' } : { retry: true, delayMs: after };
  }
  return { retry: true, delayMs: backoffDelay(policy, attemptCount) };
}

/** The wait before retry `attemptCount`: `delay(n)` capped by `backoffLimit`, then jittered. */
export function backoffDelay(policy: RetryPolicy, attemptCount: number): number {
  const base = Math.min(policy.backoffLimit, Math.max(0, policy.delay(attemptCount)));
  return Math.max(0, Math.floor(policy.jitter(base)));
}

/** `Retry-After` as milliseconds (delta-seconds or an HTTP date), or `undefined`. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
