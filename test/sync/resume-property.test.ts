/**
 * Property: however a run dies (abort after some page, or a sink failure at some write), and
 * however many times, the runs that follow leave every item in the sink exactly once, and the
 * completed run's report counts each item once.
 */
import fc from 'fast-check';
import { createMemoryAdapter } from '../../adapters/memory';
import { createStoreClient } from '../../lib/client';
import { demoCatalog } from '../../lib/demo';
import { MemoryCheckpointStore, runSync, type SyncReport } from '../../lib/sync';
import type { StoreAdapter, WriteOptions } from '../../lib/adapter';
import type { Order, Product } from '../../lib/contract/webhook';
import { startFakeStore } from '../client/fake-store';

const KEY = 'resume-prop-key-123456';
const full = demoCatalog(80);

test('crash anywhere, resume: every item exactly once', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 80 }),
      fc.integer({ min: 1, max: 15 }),
      fc.constantFrom('offset' as const, 'cursor' as const),
      fc.array(fc.oneof(fc.record({ abortAfterPage: fc.integer({ min: 1, max: 12 }) }), fc.record({ failAtWrite: fc.integer({ min: 1, max: 90 }) })), { maxLength: 3 }),
      async (count, pageSize, pagination, crashes) => {
        const products = full.products.slice(0, count);
        const orders = full.orders.slice(0, Math.ceil(count / 4));
        const store = await startFakeStore({ products, orders, key: KEY, pageSize, pagination });
        try {
          const sink = createMemoryAdapter();
          const checkpoints = new MemoryCheckpointStore();
          const client = createStoreClient({ baseUrl: store.url, svcKey: KEY, retry: 0 });
          let report: SyncReport | undefined;
          let completed = 0;
          for (const crash of [...crashes, undefined]) {
            const controller = new AbortController();
            let pages = 0;
            let writes = 0;
            const target: StoreAdapter =
              crash && 'failAtWrite' in crash
                ? {
                    products: { ...bind(sink.products), upsert: (i: Product, o: WriteOptions) => (++writes === crash.failAtWrite ? Promise.reject(new Error('crash')) : sink.products.upsert(i, o)) },
                    orders: { ...bind(sink.orders), upsert: (i: Order, o: WriteOptions) => (++writes === crash.failAtWrite ? Promise.reject(new Error('crash')) : sink.orders.upsert(i, o)) },
                  } as StoreAdapter
                : sink;
            report = await runSync({
              connectionId: 'c',
              client,
              sink: target,
              checkpoints,
              signal: controller.signal,
              onEvent: (e) => void (crash && 'abortAfterPage' in crash && e.type === 'page' && ++pages === crash.abortAfterPage && controller.abort()),
            });
            // A crash point past the end of the data does not crash: that run completes.
            if (!report.error) completed++;
            expect(report.jobid).toBe(report.error ? completed + 1 : completed);
          }
          expect(report).toMatchObject({ ok: true, products: { count: products.length, seen: products.length, duplicates: 0 }, orders: { count: orders.length, seen: orders.length } });
          const ids = (await sink.products.list({ sortorder: 'asc', limit: 1000, signal: new AbortController().signal })).map((x) => x._id).sort();
          expect(ids).toEqual(products.map((p) => p._id).sort());
          expect((await checkpoints.load('c'))?.run).toBeUndefined();
        } finally {
          await store.close();
        }
      },
    ),
    { numRuns: 30 },
  );
});

function bind<T extends object>(store: T): T {
  const s = store as Record<string, unknown>;
  return { list: (s.list as Function).bind(store), count: (s.count as Function).bind(store), get: (s.get as Function).bind(store) } as unknown as T;
}
