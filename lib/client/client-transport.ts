/**
 * One HTTP exchange with a store, and the retry loop around it. Everything the caller sends goes
 * through `send`: the key is added in the key headers (`SvcKey` and `C2SKey` by default) here and
 * nowhere else.
 */
import { readCappedBody } from '../http/capped-body';
import { exchangeOf } from '../http/exchange';
import { retryDecision, type AttemptFailure, type RetryPolicy } from '../http/retry';
import type { ClientConfig, RequestInfo } from './client-options';
import {
  StoreAbortedError,
  StoreAuthError,
  StoreBadRequestError,
  StoreHttpError,
  StoreNetworkError,
  StoreNotFoundError,
  StoreRateLimitedError,
  StoreResponseTooLargeError,
  StoreServerError,
  StoreTimeoutError,
  StoreClientError,
  type StoreErrorContext,
} from './client-errors';

export interface HttpRequest {
  readonly operation: string;
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly body?: string;
  /** `undefined`: the configured key; `null`: no key header at all (the checker's auth probes). */
  readonly svcKey?: string | null;
  /** The headers the key goes in, instead of the configured ones (the checker's header probes). */
  readonly keyHeaders?: readonly string[];
  readonly signal?: AbortSignal;
  /** Statuses handed back instead of thrown (writes take 400 for the failure structure). */
  readonly accept?: (status: number) => boolean;
  /** Overrides the configured retry limit for this request. */
  readonly retryLimit?: number;
  /** Headers of this request beside the key headers (an `Idempotency-Key`); never the key. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Statuses retried for this request beyond the policy's (409 for a write under an `Idempotency-Key`: its first attempt still runs). */
  readonly retryStatuses?: readonly number[];
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly bytes: number;
  /** Duration of the last attempt, headers and body. */
  readonly durationMs: number;
  readonly attempts: number;
}

/** Counters every request adds to (`requests` counts attempts). */
export interface TransportStats {
  requests: number;
  retries: number;
}

/** Keys shorter than this are not searched for in free text (a one-letter test key would mangle every word). */
export const MIN_REDACTED_KEY_LENGTH = 6;

/** Replaces every occurrence of the key in a text (a store may echo it in its error). */
export function redact(text: string, key: string | null | undefined): string {
  return key && key.length >= MIN_REDACTED_KEY_LENGTH ? text.split(key).join('***') : text;
}

function storeErrorText(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
      return (body as { error: string }).error.slice(0, 500);
    }
  } catch {
    // not JSON: the status alone tells the story
  }
  return undefined;
}

/** Maps a non-accepted status to its error class. */
export function errorForStatus(status: number, context: StoreErrorContext): StoreClientError {
  if (status === 401) return new StoreAuthError(context);
  if (status === 400) return new StoreBadRequestError(context);
  if (status === 404) return new StoreNotFoundError(context);
  if (status === 429) return new StoreRateLimitedError(context);
  if (status >= 500) return new StoreServerError(context);
  return new StoreHttpError(context);
}

const TIMEOUT = Symbol('timeout');
const BUDGET = Symbol('budget');

function safeHook<A>(hooks: Array<(a: A) => void>, arg: A): void {
  for (const h of hooks) {
    try {
      h(arg);
    } catch {
      // A logging hook must not break a sync.
    }
  }
}

async function attempt(config: ClientConfig, req: HttpRequest, info: RequestInfo, deadline: number | undefined): Promise<HttpResponse> {
  const key = req.svcKey === undefined ? config.svcKey : req.svcKey;
  const context = (status?: number): StoreErrorContext => ({ operation: req.operation, method: req.method, url: redact(req.url, config.svcKey), status, attempts: info.attempt });
  const controller = new AbortController();
  const left = deadline === undefined ? Infinity : deadline - Date.now();
  const budgetBound = left < config.timeoutMs;
  const timer = setTimeout(() => controller.abort(budgetBound ? BUDGET : TIMEOUT), Math.max(0, Math.min(config.timeoutMs, left)));
  const onAbort = () => controller.abort(req.signal!.reason);
  req.signal?.addEventListener('abort', onAbort, { once: true });
  const started = Date.now();
  safeHook(config.hooks.beforeRequest, info);
  const headers: Record<string, string> = { ...req.headers, accept: 'application/json' };
  if (key) for (const name of req.keyHeaders ?? config.keyHeaders) headers[name] = key;
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  try {
    if (req.signal?.aborted) throw req.signal.reason;
    // Redirects are never followed: a redirect could carry the SvcKey header to another host.
    const res = await exchangeOf(config.fetch)(req.url, { method: req.method, headers, body: req.body, signal: controller.signal });
    const body = await readCappedBody(res, config.maxResponseBytes);
    if (!body.ok) {
      // Stop reading now: aborting closes the connection instead of draining a huge body.
      controller.abort();
      throw new StoreResponseTooLargeError(context(res.status), config.maxResponseBytes);
    }
    const { text, bytes } = body;
    const durationMs = Date.now() - started;
    safeHook(config.hooks.afterResponse, { ...info, status: res.status, bytes, durationMs });
    return { status: res.status, headers: res.headers, text, bytes, durationMs, attempts: info.attempt };
  } catch (err) {
    if (err instanceof StoreClientError) throw err;
    const reason: unknown = controller.signal.reason;
    if (controller.signal.aborted && reason === TIMEOUT) throw new StoreTimeoutError(context(), 'request', config.timeoutMs);
    if (controller.signal.aborted && reason === BUDGET) throw new StoreTimeoutError(context(), 'budget', config.totalBudgetMs ?? 0);
    if (req.signal?.aborted) throw new StoreAbortedError(context());
    throw new StoreNetworkError(context(), { cause: err });
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onAbort);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What the retry policy needs to know of a failed attempt. */
function failureOf(error: StoreClientError, retryAfter: string | null): AttemptFailure {
  if (error instanceof StoreTimeoutError) return error.limit === 'budget' ? { kind: 'network', retryable: false } : { kind: 'timeout' };
  if (error instanceof StoreNetworkError) return { kind: 'network', retryable: error.retryable };
  if (error.status !== undefined && !(error instanceof StoreResponseTooLargeError)) return { kind: 'status', status: error.status, retryAfter };
  return { kind: 'network', retryable: false }; // aborted, too large: another attempt gets the same
}

/** The retry policy of one request: the configured one, with its own limit and extra statuses. */
function policyFor(policy: RetryPolicy, req: HttpRequest): RetryPolicy {
  if (req.retryLimit === undefined && !req.retryStatuses?.length) return policy;
  const extra = req.retryStatuses ?? [];
  return {
    ...policy,
    limit: req.retryLimit ?? policy.limit,
    statusCodes: new Set([...policy.statusCodes, ...extra]),
    afterStatusCodes: new Set([...policy.afterStatusCodes, ...extra]),
  };
}

/**
 * Sends a request with retries as the configured policy (`lib/http/retry.ts`) says: by default
 * network errors, timeouts, 408, 429 and 5xx are retried with exponential backoff and full jitter
 * (`Retry-After` wins on 429 and 503); 400, 401, 404 and other statuses are not. Non-accepted
 * statuses become typed errors.
 */
export async function send(config: ClientConfig, req: HttpRequest, stats: TransportStats): Promise<HttpResponse> {
  const deadline = config.totalBudgetMs === undefined ? undefined : Date.now() + config.totalBudgetMs;
  const policy = policyFor(config.retry, req);
  const url = redact(req.url, config.svcKey);
  for (let n = 1; ; n++) {
    const info: RequestInfo = { operation: req.operation, method: req.method, url, attempt: n };
    let error: StoreClientError;
    let retryAfter: string | null = null;
    if (req.signal?.aborted) throw new StoreAbortedError({ operation: req.operation, method: req.method, url, attempts: n - 1 });
    stats.requests++;
    try {
      const res = await attempt(config, req, info, deadline);
      if ((res.status >= 200 && res.status < 300) || req.accept?.(res.status)) return res;
      const storeError = storeErrorText(res.text);
      error = errorForStatus(res.status, {
        operation: req.operation,
        method: req.method,
        url,
        status: res.status,
        storeError: storeError === undefined ? undefined : redact(storeError, config.svcKey),
        attempts: n,
      });
      retryAfter = res.headers.get('retry-after');
    } catch (err) {
      error = err as StoreClientError;
    }
    error.attempts = n;
    const decision = retryDecision(policy, n, failureOf(error, retryAfter));
    if (!decision.retry) throw error;
    const { delayMs } = decision;
    if (deadline !== undefined && Date.now() + delayMs >= deadline) throw error;
    safeHook(config.hooks.beforeRetry, { ...info, error, delayMs });
    stats.retries++;
    try {
      await sleep(delayMs, req.signal);
    } catch {
      throw new StoreAbortedError({ operation: req.operation, method: req.method, url, attempts: n });
    }
  }
}
