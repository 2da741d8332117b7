/**
 * Internal: ioredis clients for the Redis-backed sync. Not exported from `storebridge/sync`, so the
 * public declarations never import ioredis types (a user without ioredis still typechecks).
 */
import type { Redis } from 'ioredis';
import { opt, readOption } from '../options';
import type { RedisConnection } from './redis-types';

/** ioredis, loaded on first use: importing storebridge never requires it. */
function loadIoredis(): typeof import('ioredis') {
  try {
    return require('ioredis') as typeof import('ioredis');
  } catch (err) {
    throw new Error('the Redis-backed sync needs the ioredis package: npm install ioredis bullmq', { cause: err });
  }
}

export function isRedisClient(c: unknown): boolean {
  return typeof c === 'object' && c !== null && typeof (c as Redis).duplicate === 'function' && typeof (c as Redis).get === 'function';
}

/** Narrows a public `RedisClientLike` to the ioredis client it is. */
export function asIoredis(client: unknown, option = 'redis'): Redis {
  return readOption(option, opt.object<Redis>('an ioredis client', isRedisClient), client);
}

/**
 * An ioredis client for `connection`: the given client itself (`owned: false`), or a new one
 * (`owned: true`, the caller quits it). New clients have `maxRetriesPerRequest: null`, as BullMQ
 * workers require.
 */
export function redisClient(connection: RedisConnection, option = 'connection'): { redis: Redis; owned: boolean } {
  // Checked again here (a factory's schema has `opt.redis()` too): the dashboard's source hands its own on.
  readOption(option, opt.redis(), connection);
  if (isRedisClient(connection)) return { redis: connection as Redis, owned: false };
  const { Redis: RedisClass } = loadIoredis();
  if (typeof connection === 'string') return { redis: quietOnError(new RedisClass(connection, { maxRetriesPerRequest: null })), owned: true };
  return { redis: quietOnError(new RedisClass({ ...(connection as object), maxRetriesPerRequest: null })), owned: true };
}

/**
 * An 'error' listener on a client the kit owns. ioredis emits 'error' on every failed (re)connect;
 * with no listener it prints "[ioredis] Unhandled error event" and a stack to stderr each time.
 * The failures reach the kit through the commands that fail, and ioredis reconnects by itself.
 */
export function quietOnError<C extends { on(event: 'error', listener: (err: Error) => void): unknown }>(client: C): C {
  client.on('error', () => undefined);
  return client;
}
