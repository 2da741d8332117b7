/**
 * Rate-limit counters in Redis (rate-limit-redis over ioredis), so that replicas behind a load
 * balancer enforce one limit per key instead of one each. Both packages are loaded on first use.
 */
import type { Store as RateLimitStore } from 'express-rate-limit';
import { z } from 'zod';
import { StorebridgeError } from '../errors';
import { defineOptions, opt, readOption } from '../options';

/** The Redis rate-limit store cannot be used: its packages are missing, or Redis does not answer. */
export class RedisUnavailableError extends StorebridgeError {
  override readonly name = 'RedisUnavailableError';
  readonly code = 'REDIS_UNAVAILABLE';
}

export interface RedisRateLimitOptions {
  /** Prefix of every Redis key written (e.g. per deployment or test). Default `storebridge:rl:`. */
  readonly prefix?: string;
  /** Connection time-out in ms. Default 5,000. */
  readonly connectTimeoutMs?: number;
  /**
   * Time a counter command may take (ms) before the request it counts fails (500, the limiter
   * closed). Default 2,000: a Redis that stopped answering (paused, a stalled network) is
   * otherwise waited on until TCP gives up, minutes later, with every request held open.
   */
  readonly commandTimeoutMs?: number;
}

export interface RedisRateLimit {
  /** A store for one limiter; `name` keeps limiters apart (`key`, `auth`). */
  store(name: string): RateLimitStore;
  /** Closes the Redis connection. */
  close(): Promise<void>;
}

/** `redis://user:pass@host:port/db` without the credentials, for messages. */
export function redisUrlForDisplay(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'the given Redis URL';
  }
}

const PREFIX_RULE = 'must be 1 to 100 visible ASCII characters';
/** `connectRedisRateLimit`'s options, declared once (`lib/options.ts`); the CLI checks its flags with it before it starts anything. */
export const parseRedisRateLimitOptions = defineOptions('connectRedisRateLimit', {
  prefix: z.string({ error: PREFIX_RULE }).regex(/^[\x21-\x7e]{1,100}$/, PREFIX_RULE).default('storebridge:rl:'),
  connectTimeoutMs: opt.int({ min: 1, max: 600_000, unit: 'ms' }).default(5000),
  commandTimeoutMs: opt.int({ min: 1, max: 600_000, unit: 'ms' }).default(2000),
});

/** Checks `connectRedisRateLimit`'s arguments without connecting: throws `InvalidOptionError` naming `url` or the option. */
export function parseRedisRateLimit(url: string, options: RedisRateLimitOptions = {}): { url: string } & Required<RedisRateLimitOptions> {
  return { url: readOption('url', opt.redisUrl(), url), ...parseRedisRateLimitOptions(options) };
}

/**
 * Connects to Redis (failing fast when it does not answer) and returns stores for the router's
 * `rateLimit.store` / `rateLimit.failedAuth.store`.
 *
 * @example
 * ```ts
 * const redis = await connectRedisRateLimit(process.env.REDIS_URL!, { prefix: 'shop-7:rl:' });
 * app.use('/sync', createStoreRouter({ adapter, svcKeys, rateLimit: { limit: 600, store: redis.store('key'), failedAuth: { store: redis.store('auth') } } }));
 * ```
 */
export async function connectRedisRateLimit(url: string, options: RedisRateLimitOptions = {}): Promise<RedisRateLimit> {
  const { prefix, connectTimeoutMs, commandTimeoutMs } = parseRedisRateLimit(url, options);
  let Redis: typeof import('ioredis').Redis;
  let RedisStore: typeof import('rate-limit-redis').RedisStore;
  try {
    ({ Redis } = require('ioredis') as typeof import('ioredis'));
    ({ RedisStore } = require('rate-limit-redis') as typeof import('rate-limit-redis'));
  } catch (err) {
    throw new RedisUnavailableError('a Redis rate-limit store needs the ioredis and rate-limit-redis packages: npm install ioredis rate-limit-redis', { cause: err });
  }
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    commandTimeout: commandTimeoutMs,
    // A limiter that cannot count fails the request (500) rather than letting it through unlimited.
    maxRetriesPerRequest: 1,
  });
  client.on('error', () => undefined); // reported through the failing commands instead
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.disconnect();
    throw new RedisUnavailableError(`cannot reach Redis at ${redisUrlForDisplay(url)}: ${(err as Error).message}`);
  }
  return {
    store: (name) =>
      new RedisStore({
        prefix: `${prefix}${name}:`,
        sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<never>,
      }),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
