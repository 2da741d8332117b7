/**
 * The store's rate limits, framework-agnostic, so every binding (Express, `node:http`, Fetch)
 * limits the same way: the same counting, the same headers, the same lockout rule.
 *
 * Counting goes through express-rate-limit's `Store` interface: its `MemoryStore` by default, or
 * any store written for it (rate-limit-redis shares the counts between replicas). Only the
 * middleware is not used, because the rules below need the key check's verdict first:
 *
 * - **Per key** (`limit` per `windowMs`, default 1,200 a minute): every request with an accepted
 *   key counts against that key's budget (its SHA-256, or the verifier's `limitKey`). Over it:
 *   429 with `Retry-After`. Every such answer carries the IETF draft-7 `RateLimit` and
 *   `RateLimit-Policy` headers.
 * - **Failed key checks per address** (`failedAuth`, default 100 a minute): only a refused key
 *   counts, and the check runs after the key check, so **a valid key is never refused by it**: a
 *   caller sharing an address (NAT, a proxy) with someone guessing keys cannot be locked out. Over
 *   it, a refused key gets 429 instead of 401. Addresses are counted like express-rate-limit does
 *   (`ipKeyGenerator`: IPv6 by /56 network).
 */
import { ipKeyGenerator, MemoryStore, type Options, type Store } from 'express-rate-limit';

/** One limiter's verdict for a request. */
export interface LimitVerdict {
  readonly allowed: boolean;
  /** `RateLimit`/`RateLimit-Policy` (and `Retry-After` when refused): set on the answer. */
  readonly headers: Readonly<Record<string, string>>;
  /** Seconds until the window resets (the `Retry-After` value). */
  readonly retryAfter: number;
}

/** Counts hits per key in a window through an express-rate-limit store. */
export class WindowLimiter {
  private readonly store: Store;
  private ready: Promise<void> | undefined;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    store?: Store,
    /** Set the draft-7 headers on answers that pass, not only on refusals. */
    private readonly headersOnPass = true,
  ) {
    this.store = store ?? new MemoryStore();
  }

  /** The store wants `init` once, before the first hit (rate-limit-redis reads `windowMs` there). */
  private init(): Promise<void> | undefined {
    if (this.ready === undefined && typeof this.store.init === 'function') {
      this.ready = Promise.resolve(this.store.init({ windowMs: this.windowMs, limit: this.limit } as Options));
    }
    return this.ready;
  }

  /** Counts one hit for `key`. Rejects when the store fails (the request is then answered 500). */
  async hit(key: string): Promise<LimitVerdict> {
    const init = this.init();
    if (init) await init;
    const { totalHits, resetTime } = await this.store.increment(key);
    const retryAfter = resetTime ? Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : Math.ceil(this.windowMs / 1000);
    const allowed = totalHits <= this.limit;
    if (allowed && !this.headersOnPass) return { allowed, headers: NO_HEADERS, retryAfter };
    const headers: Record<string, string> = {
      'ratelimit-policy': `${this.limit};w=${Math.ceil(this.windowMs / 1000)}`,
      ratelimit: `limit=${this.limit}, remaining=${Math.max(0, this.limit - totalHits)}, reset=${retryAfter}`,
    };
    if (!allowed) headers['retry-after'] = String(Math.max(1, retryAfter));
    return { allowed, headers, retryAfter: Math.max(1, retryAfter) };
  }
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The address a failed key check is counted under (IPv6 by /56, IPv4-mapped as IPv4). */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  try {
    return ipKeyGenerator(address);
  } catch {
    return address;
  }
}
