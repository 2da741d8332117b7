/**
 * Property tests of the Redis-backed state against real Redis: the run lock behaves like a
 * single-holder model under any sequence of acquire/extend/release by several workers, and
 * checkpoints round-trip any valid state.
 */
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { RedisCheckpointStore, RedisRunLock, type SyncState } from '../../lib/sync';
import { describeRedis, purgePrefix, REDIS_URL, uniqueRedisPrefix } from './bullmq-helpers';

describeRedis('Redis sync state (properties)', () => {
  let redis: Redis;
  const prefix = uniqueRedisPrefix();
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await purgePrefix(redis, prefix);
    await redis.quit();
  });

  test('the run lock has at most one holder, and only the holder extends or releases it', async () => {
    const op = fc.record({ kind: fc.constantFrom('acquire', 'extend', 'release'), worker: fc.integer({ min: 0, max: 2 }), connection: fc.constantFrom('a', 'b') });
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const lock = new RedisRunLock(redis, 60_000, { prefix, queueName: `q${round++}` });
        const holder = new Map<string, number>(); // the model: connection → worker
        for (const { kind, worker, connection } of ops) {
          const token = `w${worker}|r|job-${worker}`;
          const mine = holder.get(connection) === worker;
          if (kind === 'acquire') {
            const r = await lock.acquire(connection, token);
            expect(r.acquired).toBe(!holder.has(connection));
            if (!r.acquired) expect(r.holder).toBe(`w${holder.get(connection)}|r|job-${holder.get(connection)}`);
            else holder.set(connection, worker);
          } else if (kind === 'extend') {
            expect(await lock.extend(connection, token)).toBe(mine);
          } else {
            expect(await lock.release(connection, token)).toBe(mine);
            if (mine) holder.delete(connection);
          }
        }
      }),
      { numRuns: 40 },
    );
  });

  test('checkpoints round-trip any valid state, across Redis connections', async () => {
    const other = new Redis(REDIS_URL);
    try {
      const progress = fc.record({
        seen: fc.nat(),
        written: fc.nat(),
        unchanged: fc.nat(),
        duplicates: fc.nat(),
        invalid: fc.nat(),
        anomalies: fc.nat(),
        stubs: fc.nat(),
        fetchedById: fc.nat(),
        normalisations: fc.dictionary(fc.constantFrom('number-from-string', 'next-empty', 'items-total-placeholder'), fc.nat()),
      });
      const hw = fc.record({ products: fc.nat(), orders: fc.nat() }, { requiredKeys: [] });
      const state: fc.Arbitrary<SyncState> = fc.record(
        {
          jobid: fc.nat(),
          highWater: hw,
          run: fc.record(
            {
              jobid: fc.nat(),
              mode: fc.constantFrom('full' as const, 'incremental' as const),
              startedAt: fc.nat(),
              done: fc.subarray(['products', 'orders'] as const).map((a) => [...a]),
              entity: fc.constantFrom('products' as const, 'orders' as const),
              position: fc.oneof(fc.record({ offset: fc.nat() }), fc.record({ next: fc.string() })),
              progress: fc.record({ products: progress, orders: progress }),
              highWater: hw,
              stopBelow: hw,
              requests: fc.nat(),
              retries: fc.nat(),
            },
            { requiredKeys: ['jobid', 'mode', 'startedAt', 'done', 'progress', 'highWater', 'stopBelow', 'requests', 'retries'] },
          ),
        },
        { requiredKeys: ['jobid'] },
      );
      const writer = new RedisCheckpointStore(redis, { prefix });
      const reader = new RedisCheckpointStore(other, { prefix });
      await fc.assert(
        fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40 }), state, async (id, s) => {
          await writer.save(id, s);
          expect(await reader.load(id)).toEqual(s);
        }),
        { numRuns: 60 },
      );
    } finally {
      await other.quit();
    }
  });
});
