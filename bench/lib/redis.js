'use strict';
/**
 * Redis for the benchmarks: the URL (`STOREBRIDGE_BENCH_REDIS_URL`, else
 * `STOREBRIDGE_TEST_REDIS_URL`, else the loopback default), a reachability probe, `INFO` figures,
 * the memory of a prefix's keys by kind (`MEMORY USAGE`), and removal of a prefix's keys.
 */
const { ROOT } = require('./proc');
const path = require('node:path');

const REDIS_URL = process.env.STOREBRIDGE_BENCH_REDIS_URL || process.env.STOREBRIDGE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

const ioredis = () => require(path.join(ROOT, 'node_modules', 'ioredis'));

/** A client, or undefined when Redis does not answer within 3 s. */
async function connectRedis(url = REDIS_URL) {
  const { Redis } = ioredis();
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch {
    redis.disconnect();
    return undefined;
  }
}

/** One numeric field of `INFO section`. */
async function info(redis, section, field) {
  const m = new RegExp(`^${field}:([0-9.]+)`, 'm').exec(await redis.info(section));
  return m ? Number(m[1]) : NaN;
}

const usedMemory = (redis) => info(redis, 'memory', 'used_memory');

/** Redis's CPU seconds so far (user + system). */
async function redisCpuSeconds(redis) {
  const text = await redis.info('cpu');
  const get = (f) => Number(new RegExp(`^${f}:([0-9.]+)`, 'm').exec(text)?.[1] ?? 0);
  return get('used_cpu_user') + get('used_cpu_sys');
}

async function* scanKeys(redis, prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) yield keys;
  } while (cursor !== '0');
}

/**
 * The bytes `MEMORY USAGE` reports for every key under `prefix`, grouped by `kindOf(key without the
 * prefix)`: `{ total, keys, kinds: { kind: { keys, bytes } } }`.
 */
async function memoryByKind(redis, prefix, kindOf) {
  const out = { total: 0, keys: 0, kinds: {} };
  for await (const keys of scanKeys(redis, prefix)) {
    const pipe = redis.pipeline();
    for (const k of keys) pipe.memory('USAGE', k, 'SAMPLES', 0);
    const sizes = await pipe.exec();
    keys.forEach((k, i) => {
      const bytes = Number(sizes[i][1] ?? 0);
      const kind = kindOf(k.slice(prefix.length + 1));
      const slot = (out.kinds[kind] ??= { keys: 0, bytes: 0 });
      slot.keys++;
      slot.bytes += bytes;
      out.total += bytes;
      out.keys++;
    });
  }
  return out;
}

/** Deletes every key under `prefix`. */
async function purgePrefix(redis, prefix) {
  for await (const keys of scanKeys(redis, prefix)) await redis.del(...keys);
}

module.exports = { REDIS_URL, connectRedis, info, usedMemory, redisCpuSeconds, memoryByKind, purgePrefix };
