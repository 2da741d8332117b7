/**
 * Sync jobs retry by the same policy as the caller's requests (`lib/http/retry.ts`): what is
 * retried, and how long the worker waits.
 */
import { failureOfRun, retryWait } from '../../lib/sync/bullmq-sync-worker';
import { SYNC_JOB_BACKOFF, SYNC_JOB_RETRY, syncJobRetry } from '../../lib/sync/bullmq-sync-queue';
import { retryDecision } from '../../lib/http/retry';

const retried = (error: Parameters<typeof failureOfRun>[0], policy = syncJobRetry({})) => retryDecision(policy, 0, failureOfRun(error)).retry;

test('which run failures are retried', () => {
  expect(retried({ name: 'StoreServerError', code: 'STORE_SERVER', message: '', status: 503 })).toBe(true);
  expect(retried({ name: 'StoreRateLimitedError', code: 'STORE_RATE_LIMITED', message: '', status: 429 })).toBe(true);
  expect(retried({ name: 'StoreTimeoutError', code: 'STORE_TIMEOUT', message: '' })).toBe(true);
  expect(retried({ name: 'StoreNetworkError', code: 'STORE_NETWORK', message: '', retryable: true })).toBe(true);
  expect(retried({ name: 'AdapterError', code: 'ADAPTER_FAILED', message: 'the data adapter failed' })).toBe(true);
  // Another attempt cannot help.
  expect(retried({ name: 'StoreAuthError', code: 'STORE_AUTH', message: '', status: 401 })).toBe(false);
  expect(retried({ name: 'StoreAuthError', code: 'STORE_AUTH', message: 'text refusal', status: 200 })).toBe(false);
  expect(retried({ name: 'StoreNotFoundError', code: 'STORE_NOT_FOUND', message: '', status: 404 })).toBe(false);
  expect(retried({ name: 'StoreContractError', code: 'STORE_CONTRACT', message: '', status: 200 })).toBe(false);
  expect(retried({ name: 'StorePagingError', code: 'STORE_PAGING', message: '' })).toBe(false);
  expect(retried({ name: 'StoreNetworkError', code: 'STORE_NETWORK', message: 'untrusted certificate', retryable: false })).toBe(false);
  // The policy's own lists decide: a worker told to retry 404s does.
  expect(retried({ name: 'StoreNotFoundError', code: 'STORE_NOT_FOUND', message: '', status: 404 }, syncJobRetry({ retry: { statusCodes: [404] } }))).toBe(true);
  expect(retried({ name: 'StoreTimeoutError', code: 'STORE_TIMEOUT', message: '' }, syncJobRetry({ retry: { retryOnTimeout: false } }))).toBe(false);
});

test('the waits: the policy\'s backoff (5 s doubling by default, capped, jittered), or from a first delay a job carries', () => {
  const exact = syncJobRetry({ retry: { jitter: false } });
  expect([1, 2, 3, 10].map((n) => retryWait(exact, n))).toEqual([5_000, 10_000, 20_000, 300_000]);
  expect(retryWait(exact, 2, { opts: { backoff: { type: SYNC_JOB_BACKOFF, delay: 50 } } })).toBe(100);
  const jittered = syncJobRetry({});
  for (let i = 0; i < 50; i++) {
    const wait = retryWait(jittered, 1);
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(wait).toBeLessThan(5_000);
  }
});

test('the limit: retry.limit, or the older attempts (attempts = limit + 1); bad values name the option', () => {
  expect(syncJobRetry({}).limit).toBe(SYNC_JOB_RETRY.limit);
  expect(syncJobRetry({ attempts: 5 }).limit).toBe(4);
  expect(syncJobRetry({ attempts: 5, retry: 1 }).limit).toBe(1);
  expect(() => syncJobRetry({ retry: { limit: -1 } })).toThrow(/retry\.limit/);
  expect(() => syncJobRetry({ attempts: 0 })).toThrow(/attempts/);
});
