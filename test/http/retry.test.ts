import fc from 'fast-check';
import { InvalidOptionError } from '../../lib/errors';
import { backoffDelay, parseRetryAfter, retryDecision, type RetryOptions, type RetryPolicy } from '../../lib/http/retry';
import { defineOptions, opt, readOption } from '../../lib/options';

/** A retry option as a factory reads it (`opt.retry` in its `defineOptions`). */
const parseRetry = (retry: number | RetryOptions | undefined, defaults: RetryOptions = {}): RetryPolicy => defineOptions('createWidget', { retry: opt.retry(defaults) })({ retry }).retry;

describe('opt.retry: number | object, normalised once', () => {
  it('a number is the limit; defaults fill the rest', () => {
    const p = parseRetry(5);
    expect(p.limit).toBe(5);
    expect([...p.statusCodes]).toEqual([408, 429, 500, 502, 503, 504]);
    expect([...p.afterStatusCodes]).toEqual([429, 503]);
    expect(p.maxRetryAfter).toBe(60_000);
    expect(parseRetry(undefined).limit).toBe(3);
    expect(parseRetry(undefined, { limit: 10 }).limit).toBe(10);
    expect(parseRetry({ limit: undefined }, { limit: 10 }).limit).toBe(10);
  });

  it('refuses bad members and names them', () => {
    expect(() => parseRetry(-1)).toThrow(InvalidOptionError);
    expect(() => parseRetry({ limit: 1.5 })).toThrow(/retry\.limit/);
    expect(() => parseRetry({ statusCodes: [99] })).toThrow(/retry\.statusCodes/);
    expect(() => parseRetry(-1)).toThrow('invalid option "retry.limit": must be an integer ≥ 0');
    expect(() => parseRetry({ backofLimit: 3 } as never)).toThrow('invalid option "retry.backofLimit": is not an option of createWidget (did you mean "backoffLimit"?)');
    expect(() => parseRetry({ delay: 5 } as never)).toThrow(/retry\.delay.*a function of the attempt count/);
    expect(() => parseRetry({ jitter: 'yes' } as never)).toThrow(/retry\.jitter.*a boolean or a function/);
    expect(() => parseRetry('3' as never)).toThrow('invalid option "retry": must be a number (the retry limit) or an object');
    // Read by itself (a nested option handed on), the member is named under the given path.
    expect(() => readOption('daemon.retry', opt.retry(), { delay: 5 })).toThrow(/daemon\.retry\.delay/);
  });
});

describe('retryDecision', () => {
  const exact = parseRetry({ limit: 3, jitter: false });

  it('retries listed statuses, timeouts and retryable network failures; nothing else', () => {
    for (const status of [408, 429, 500, 502, 503, 504]) expect(retryDecision(exact, 1, { kind: 'status', status }).retry).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 413, 501]) expect(retryDecision(exact, 1, { kind: 'status', status })).toEqual({ retry: false, reason: 'not-retryable' });
    expect(retryDecision(exact, 1, { kind: 'timeout' }).retry).toBe(true);
    expect(retryDecision(parseRetry({ retryOnTimeout: false }), 1, { kind: 'timeout' }).retry).toBe(false);
    expect(retryDecision(exact, 1, { kind: 'network', retryable: true }).retry).toBe(true);
    expect(retryDecision(exact, 1, { kind: 'network', retryable: false }).retry).toBe(false);
  });

  it('stops after limit retries', () => {
    expect(retryDecision(exact, 3, { kind: 'timeout' }).retry).toBe(true);
    expect(retryDecision(exact, 4, { kind: 'timeout' })).toEqual({ retry: false, reason: 'limit' });
    expect(retryDecision(parseRetry(0), 1, { kind: 'timeout' })).toEqual({ retry: false, reason: 'limit' });
  });

  it('exponential backoff capped by backoffLimit; Retry-After on 429/503 replaces it', () => {
    expect([1, 2, 3].map((n) => retryDecision(exact, n, { kind: 'timeout' }))).toEqual([300, 600, 1200].map((delayMs) => ({ retry: true, delayMs })));
    expect(backoffDelay(parseRetry({ jitter: false, backoffLimit: 1000 }), 10)).toBe(1000);
    expect(retryDecision(exact, 1, { kind: 'status', status: 429, retryAfter: '2' })).toEqual({ retry: true, delayMs: 2000 });
    expect(retryDecision(exact, 1, { kind: 'status', status: 500, retryAfter: '2' })).toEqual({ retry: true, delayMs: 300 });
    expect(retryDecision(exact, 1, { kind: 'status', status: 503, retryAfter: '120' })).toEqual({ retry: false, reason: 'retry-after-too-long' });
  });

  it('full jitter stays in [0, delay)', () => {
    const jittered = parseRetry({ limit: 20 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), (n) => {
        const d = backoffDelay(jittered, n);
        return d >= 0 && d < Math.min(10_000, 300 * 2 ** (n - 1));
      }),
    );
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000 + 5000).toUTCString(), 10_000)).toBe(5000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
