/**
 * The replica invariant as a property: a daemon whose calls go to two services over one state
 * store, in any order fast-check picks (and with the services' caches warm or cold), ends with the
 * same report and the same connection state as a daemon talking to one service. In process (Fetch
 * handlers, a memory state store and one shared catalog), so that many interleavings run. This is
 * the per-call re-read of the state (a service that loaded it once per process answered such a
 * daemon 409, issue 22); the daemon waits for each answer, so the compare-and-set that guards
 * concurrent calls is tested in reverse-replicas-stores.test.ts (which fails without it).
 */
import fc from 'fast-check';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createDaemon, createMemoryStateStore, createReverseFetchHandler, type ReverseStateStore } from '../../lib/reverse';

const KEY = 'model-replica-key';
const NAME = 'shop';

type Handler = (request: Request) => Promise<Response>;

/** `count` services over one state store and one catalog; each queues nothing (the caller does). */
function services(count: number, state: ReverseStateStore, catalog: ReturnType<typeof createMemoryAdapter>) {
  return Array.from({ length: count }, () => createReverseFetchHandler({ adapter: catalog, connections: [{ key: KEY, name: NAME }], stateStore: state, maxCallsPerSecond: 0, answerRoot: true }));
}

/** Runs the kit's daemon (its store: `products` demo products, pushed back after the pulls), routing call n to `route(n)`. */
async function run(handlers: Handler[], route: (n: number) => number) {
  let n = 0;
  const fetch = (input: string | URL | Request, init?: RequestInit) => handlers[route(n++) % handlers.length](new Request(input, init));
  const daemon = createDaemon({ serviceUrl: 'http://replicas.test', connectionKey: KEY, adapter: createMemoryAdapter(), pollIntervalMs: 1, pageItems: 7, fetch: fetch as never });
  return { report: await daemon.runOnce(), calls: n };
}

/** The connection's state as the services see it, without what is per process or per clock. */
async function stateOf(handler: ReturnType<typeof createReverseFetchHandler>) {
  const { throttle: _t, current: _c, transactions, ...view } = await handler.service.status(NAME);
  return { ...view, transactions: transactions.map(({ startedAt: _s, endedAt: _e, ...t }) => t) };
}

test('two services over one state store, calls routed in any order, answer the daemon as one service does', async () => {
  const products = 12;
  const reference = await (async () => {
    const catalog = createMemoryAdapter(demoCatalog(products));
    const [one] = services(1, createMemoryStateStore(), catalog);
    for (const entity of ['products', 'orders'] as const) await one.service.enqueue(NAME, { kind: 'pull', entity });
    await one.service.enqueue(NAME, { kind: 'push' });
    const { report } = await run([one], () => 0);
    return { report, state: await stateOf(one) };
  })();
  expect(reference.report).toMatchObject({ ok: true, pulled: { products, orders: 3 }, pushed: { products, orders: 3 } });

  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 1 }), { minLength: 1, maxLength: 64 }), async (pattern) => {
      const catalog = createMemoryAdapter(demoCatalog(products));
      const two = services(2, createMemoryStateStore(), catalog);
      for (const entity of ['products', 'orders'] as const) await two[pattern[0]].service.enqueue(NAME, { kind: 'pull', entity });
      await two[1 - pattern[0]].service.enqueue(NAME, { kind: 'push' });
      const { report, calls } = await run(two, (n) => pattern[n % pattern.length]);
      expect(report).toEqual(reference.report);
      expect(calls).toBeGreaterThan(60);
      const [a, b] = [await stateOf(two[0]), await stateOf(two[1])];
      expect(a).toEqual(b);
      expect(a).toEqual(reference.state);
    }),
    { numRuns: 25 },
  );
}, 120_000);
