/**
 * `writeIf`, the compare-and-set replicas rely on, on every state store (memory, SQLite,
 * PostgreSQL, MariaDB, Redis): a batch is applied only while its guard holds the expected value,
 * all of it or nothing; and under contention (writers on separate store instances, as replicas
 * are) every read-modify-write that the store accepted is counted exactly once.
 */
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { createSqlAdapter, createSqlReverseStateStore, dropSqlReverseState, type SqlAdapter } from '../../adapters/sql';
import { createMemoryStateStore, createRedisStateStore, type ReverseStateStore } from '../../lib/reverse';
import { createReverseService } from '../../lib/reverse';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { DATABASE_URLS, describeDatabase, uniquePrefix, type ServerKind } from '../adapters/sql-databases';
import { describeRedis, REDIS_URL, uniqueRedisPrefix } from '../sync/bullmq-helpers';

/** `make()` opens another instance over the same storage (another replica's store). */
function casSuite(make: () => Promise<ReverseStateStore>): void {
  test('writeIf applies the batch only while the guard holds the expected value (absent = null), all or nothing', async () => {
    const s = await make();
    expect(await s.writeIf!({ key: 'g', expected: null }, [{ key: 'g', value: 'v1' }, { key: 'x', value: 'a' }])).toBe(true);
    expect(await s.writeIf!({ key: 'g', expected: null }, [{ key: 'g', value: 'v9' }, { key: 'x', value: 'lost' }])).toBe(false);
    expect(await s.writeIf!({ key: 'g', expected: 'v0' }, [{ key: 'g', value: 'v9' }, { key: 'x', value: 'lost' }])).toBe(false);
    expect(Object.fromEntries(await s.read(['g', 'x']))).toEqual({ g: 'v1', x: 'a' });
    expect(await s.writeIf!({ key: 'g', expected: 'v1' }, [{ key: 'x', value: null }, { key: 'g', value: 'v2' }, { key: 'y', value: 'b' }])).toBe(true);
    expect(Object.fromEntries(await s.read(['g', 'x', 'y']))).toEqual({ g: 'v2', y: 'b' });
  });

  test('contention: 3 instances × 15 read-modify-writes of one counter, each retried on a conflict: the counter is 45 and every increment left its record', async () => {
    const stores = [await make(), await make(), await make()];
    const writer = async (s: ReverseStateStore, w: number) => {
      for (let i = 0; i < 15; i++) {
        for (;;) {
          const cur = (await s.read(['n'])).get('n') ?? null;
          const n = cur === null ? 0 : Number(JSON.parse(cur).n);
          if (await s.writeIf!({ key: 'n', expected: cur }, [{ key: 'n', value: JSON.stringify({ n: n + 1, by: w }) }, { key: `rec:${n + 1}`, value: String(w) }])) break;
        }
      }
    };
    await Promise.all(stores.map(writer));
    const final = JSON.parse((await stores[0].read(['n'])).get('n')!).n;
    expect(final).toBe(45);
    const recs = await stores[0].read(Array.from({ length: 45 }, (_, i) => `rec:${i + 1}`));
    expect(recs.size).toBe(45);
    const by = [...recs.values()].reduce((m, w) => m.set(w, (m.get(w) ?? 0) + 1), new Map<string, number>());
    expect([...by.values()].sort()).toEqual([15, 15, 15]);
  }, 60_000);

  test('two services on two instances of the store: enqueues from both, interleaved at random, are all kept (none overwrites another)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), async (sides) => {
        const name = `q${Math.random().toString(36).slice(2, 10)}`;
        const services = [await make(), await make()].map((stateStore) =>
          createReverseService({ adapter: createMemoryAdapter(demoCatalog(2)), connections: [{ key: 'k', name }], stateStore, maxCallsPerSecond: 0 }),
        );
        await Promise.all(sides.map((side, i) => services[side ? 1 : 0].enqueue(name, i % 2 ? { kind: 'push' } : { kind: 'pull', entity: 'products' })));
        const views = await Promise.all(services.map((s) => s.status(name)));
        expect(views[0].queue).toHaveLength(sides.length);
        expect(views[1].queue).toEqual(views[0].queue);
      }),
      { numRuns: 8 },
    );
  }, 60_000);
}

describe('memory state store', () => {
  const shared = createMemoryStateStore();
  casSuite(async () => shared);
});

describe('SQLite state store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-cas-'));
  const opened: SqlAdapter[] = [];
  afterAll(async () => {
    for (const a of opened) await a.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // One connection to the file: better-sqlite3 is synchronous, so a second connection in this
  // process would wait for the first's lock while blocking the thread that holds it. The awaits
  // between each writer's read and its writeIf still interleave the writers.
  casSuite(async () => {
    if (!opened[0]) opened.push(await createSqlAdapter({ connection: `sqlite:${join(dir, 'state.db')}` }));
    return createSqlReverseStateStore(opened[0]);
  });
});

for (const kind of ['postgres', 'mysql'] as ServerKind[]) {
  describeDatabase(kind, `${kind} state store`, () => {
    const prefix = uniquePrefix();
    const opened: SqlAdapter[] = [];
    afterAll(async () => {
      if (opened[0]) {
        await dropSqlReverseState(opened[0]);
        await opened[0].dropTables();
      }
      for (const a of opened) await a.close();
    });
    // Each instance its own pool, as another process's would be.
    casSuite(async () => {
      const a = await createSqlAdapter({ connection: DATABASE_URLS[kind], tablePrefix: prefix });
      opened.push(a);
      return createSqlReverseStateStore(a);
    });
  });
}

describeRedis('Redis state store', () => {
  const prefix = uniqueRedisPrefix();
  const clients: Redis[] = [];
  afterAll(async () => {
    const keys = await clients[0]?.keys(`${prefix}*`);
    if (keys?.length) await clients[0].del(...keys);
    for (const c of clients) await c.quit();
  });
  casSuite(async () => {
    const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
    clients.push(c);
    return createRedisStateStore(c, { prefix });
  });
});
