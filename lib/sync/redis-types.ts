/**
 * How a user names a Redis connection for the Redis-backed sync. Its own module, free of ioredis
 * types, so that `redis-connect.ts` (which loads ioredis) and `redis-sync-state.ts` both use it
 * without importing each other (no import cycle in lib/sync; test/architecture/surface.test.ts).
 */

/**
 * An ioredis client (`new Redis(…)` from the ioredis package). Declared structurally so that the
 * types of `storebridge/sync` do not need ioredis installed.
 */
export interface RedisClientLike {
  duplicate(...args: any[]): unknown;
  get(...args: any[]): unknown;
  quit(...args: any[]): unknown;
}

/** ioredis options (`host`, `port`, `username`, `password`, `db`, `tls`, …), passed as they are. */
export interface RedisConnectionOptions {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: object;
  [option: string]: unknown;
}

/** A Redis URL, ioredis options, or an ioredis client (then its owner closes it). */
export type RedisConnection = string | RedisConnectionOptions | RedisClientLike;
