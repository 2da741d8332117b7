/**
 * Retry policy as data, in ky's shape: one options object (or just a number, the limit) that the
 * store caller, the reverse daemon and the BullMQ sync worker all read with `opt.retry`
 * (`lib/options.ts`, which checks it and builds the policy with `retryPolicy`) and apply with
 * `retryDecision`. Which failures are retried is decided here and nowhere else.
 *
 * @example
 * ```ts
 * createStoreClient({ baseUrl, svcKey, retry: 5 });                                  // limit only
 * createStoreClient({ baseUrl, svcKey, retry: { limit: 2, statusCodes: [503], jitter: false } });
 * createDaemon({ …, retry: { limit: 10, delay: (n) => 1000 * n, backoffLimit: 30_000 } });
 * ```
 */
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

/**
 * The full policy from checked options (`opt.retry` in `lib/options.ts` checks them and calls this):
 * `defaults` changes the defaults for one user of the policy (the daemon waits longer than the
 * caller, say). Nothing is checked here; a constant policy in code may call it directly.
 */
export function retryPolicy(options: RetryOptions = {}, defaults: RetryOptions = {}): RetryPolicy {
  const merged = { ...defaults, ...dropUndefined(options) };
  return {
    limit: merged.limit ?? 3,
    statusCodes: new Set(merged.statusCodes ?? DEFAULT_RETRY_STATUS_CODES),
    afterStatusCodes: new Set(merged.afterStatusCodes ?? DEFAULT_RETRY_AFTER_STATUS_CODES),
    maxRetryAfter: merged.maxRetryAfter ?? 60_000,
    backoffLimit: merged.backoffLimit ?? 10_000,
    delay: merged.delay ?? ((n: number) => 300 * 2 ** (n - 1)),
    jitter: merged.jitter === undefined || merged.jitter === true ? fullJitter : merged.jitter === false ? noJitter : merged.jitter,
    retryOnTimeout: merged.retryOnTimeout ?? true,
  };
}

/** A member given as `undefined` counts as absent: it leaves the user's default in place. */
function dropUndefined(options: RetryOptions): RetryOptions {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
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
