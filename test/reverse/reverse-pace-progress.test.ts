/**
 * The pace's progress credit (lib/reverse/service/reverse-throttle.ts): at the default pace (20
 * calls a second, burst 5) the kit's own daemon is not held back (its item cycle is 4 calls, each
 * `succeded` gives the turns back), while a daemon asking for the same item again and again (a
 * crash loop: no acknowledgement, so no credit) is still held to about 20 calls a second.
 */
import { createMemoryAdapter } from '../../adapters/memory';
import { demoOrderCount } from '../../lib/demo';
import { createDaemon } from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';
import { CallThrottle, type Turn } from '../../lib/reverse/service/reverse-throttle';

const delayOf = (t: Turn) => ('refused' in t ? Infinity : t.delayMs);
const busyOf = (t: Turn) => 'busy' in t && t.busy;
import { KEY, startService, type RunningService } from './reverse-helpers';

const PRODUCTS = 600;

let svc: RunningService;
afterEach(async () => svc?.close());

test('credit: progress gives back the turns taken since the last progress; no progress, no credit', () => {
  let now = 0;
  const throttle = new CallThrottle({ perSecond: 10, burst: 2, maxDelayMs: 10_000 }, () => now);
  for (let i = 0; i < 3; i++) expect(delayOf(throttle.turn('a'))).toBe(0);
  expect(throttle.turn('a')).toEqual({ delayMs: 100, busy: true });
  throttle.credit('a'); // progress: the calls so far are forgiven
  for (let i = 0; i < 3; i++) expect(throttle.turn('a')).toEqual({ delayMs: 0, busy: true }); // within the burst again, still told to close (faster than the pace)
  expect(delayOf(throttle.turn('a'))).toBe(100);
  now += 2000; // no progress for a while: a call faster than the pace is busy again
  throttle.turn('a');
  expect(busyOf(throttle.turn('a'))).toBe(true);
  throttle.credit('b'); // another connection's progress changes nothing here
  throttle.turn('a');
  expect(delayOf(throttle.turn('a'))).toBeGreaterThan(0);
});

test(`the kit's own daemon at the default pace: ${PRODUCTS} products and their orders pulled and pushed back, only transaction boundaries delayed, ≥ 200 items/s`, async () => {
  svc = await startService(PRODUCTS, { maxCallsPerSecond: 20 }); // the default pace (the helper turns it off)
  const orders = demoOrderCount(PRODUCTS);
  for (const entity of ['products', 'orders'] as const) await svc.router.service.enqueue('shop', { kind: 'pull', entity });
  await svc.router.service.enqueue('shop', { kind: 'push' });
  const started = performance.now();
  const report = await createDaemon({ serviceUrl: svc.url, connectionKey: KEY, adapter: createMemoryAdapter(), pollIntervalMs: 2 }).runOnce();
  const seconds = (performance.now() - started) / 1000;
  const items = 2 * (PRODUCTS + orders);
  const rate = items / seconds;
  console.log(`own daemon at the default pace: ${items} items (pulled and pushed) in ${seconds.toFixed(2)} s = ${rate.toFixed(0)} items/s`);
  expect(report).toMatchObject({ ok: true, pulled: { products: PRODUCTS, orders }, pushed: { products: PRODUCTS, orders } });
  const view = await svc.router.service.status('shop');
  expect(view.products).toMatchObject({ delivered: PRODUCTS, succeeded: PRODUCTS, redelivered: 0, received: PRODUCTS });
  // What the pace did does not depend on this machine's speed: it held back only a few answers at
  // the three transactions' starts and ends (finish, upstreamstatus, ping, entity, initialize: no
  // progress there), never the item cycle's (1,500 items, 4 calls each).
  expect(view.throttle.refused).toBe(0);
  expect(view.throttle.delayed).toBeLessThanOrEqual(30);
  // So the pace alone cannot hold the daemon under 200 items/s: its delays add up to less than
  // the time 200 items/s would take (before the credit: 4 calls an item at 20 calls/s, 5 items/s).
  expect(view.throttle.delayedMs).toBeLessThan((items / 200) * 1000);
  // And the wall clock, with a floor generous enough for a loaded machine (about 400 measured).
  expect(rate).toBeGreaterThan(100);
}, 120_000);

test('a crash loop (next, next, … on the same item, never acknowledged) is still held to about 20 calls a second', async () => {
  svc = await startService(10, { maxCallsPerSecond: 20, maxDeliveries: 1000 });
  await svc.router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
  const call = (method: string, path: string) => fetch(`${svc.url}${REVERSE_BASE_PATH}/${KEY}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });
  expect((await call('POST', '/pull/initialize')).status).toBe(200);
  const started = performance.now();
  let calls = 0;
  let first: string | undefined;
  while (performance.now() - started < 2500) {
    const hasmore = await call('GET', '/pull/products/hasmore');
    calls++;
    expect(hasmore.status).toBe(200);
    const next = (await (await call('GET', '/pull/products/next')).json()) as { product: { _id: string } };
    calls++;
    first ??= next.product._id;
    expect(next.product._id).toBe(first); // the same item, again and again
  }
  const seconds = (performance.now() - started) / 1000;
  // The burst (5, plus the initialize's turn) is answered at once; every further call waits its 50 ms.
  const rate = (calls - 6) / seconds;
  console.log(`crash loop: ${calls} calls in ${seconds.toFixed(2)} s = ${(calls / seconds).toFixed(1)} calls/s (${rate.toFixed(1)} past the burst)`);
  expect(rate).toBeLessThanOrEqual(21);
  expect((await svc.router.service.status('shop')).throttle.delayed).toBeGreaterThan(30);
}, 30_000);
