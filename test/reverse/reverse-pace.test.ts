/**
 * The reverse service's defences against a daemon in a loop: answers delayed (not refused) above
 * `maxCallsPerSecond` (and their connections closed), a parallel flood refused beyond
 * `maxCallDelayMs`, and the metrics that count it all.
 */
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createMetrics } from '../../lib/metrics';
import { createReverseNodeHandler, createReverseService, type ReverseServiceOptions } from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';
import { CallThrottle } from '../../lib/reverse/service/reverse-throttle';

const KEY = 'pace-key';
const P = `${REVERSE_BASE_PATH}/${KEY}`;

test('the pace: a burst at once, then one call per 1/perSecond; a call that would wait too long is refused; quiet time restores the burst', () => {
  let now = 0;
  const throttle = new CallThrottle({ perSecond: 10, burst: 2, maxDelayMs: 250 }, () => now);
  const delays = Array.from({ length: 6 }, () => throttle.turn('a'));
  expect(delays).toEqual([
    { delayMs: 0, busy: false },
    { delayMs: 0, busy: true },
    { delayMs: 0, busy: true },
    { delayMs: 100, busy: true },
    { delayMs: 200, busy: true },
    { refused: true, retryAfterMs: 50 },
  ]);
  expect(throttle.turn('b')).toEqual({ delayMs: 0, busy: false }); // per connection
  now += 200; // the daemon waited for its answers: it is held to 10 a second
  expect(throttle.turn('a')).toEqual({ delayMs: 100, busy: true });
  now += 2000; // it slowed down: no delay any more
  expect(throttle.turn('a')).toEqual({ delayMs: 0, busy: false });
  expect(throttle.countsOf('a')).toEqual({ delayed: 3, delayedMs: 400, refused: 1 });
  expect(new CallThrottle({ perSecond: 0, burst: 0, maxDelayMs: 0 }).turn('a')).toEqual({ delayMs: 0, busy: false });
});

describe('over HTTP', () => {
  let server: Server;
  let port: number;
  const metrics = createMetrics();

  async function start(options: Partial<ReverseServiceOptions>): Promise<ReturnType<typeof createReverseNodeHandler>> {
    const handler = createReverseNodeHandler({ adapter: createMemoryAdapter(demoCatalog(4)), connections: [{ key: KEY, name: 'shop' }], answerRoot: true, metrics, ...options });
    server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    return handler;
  }
  afterEach(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

  /** One GET on a given agent; the reply's status, headers and whether the server closed the connection. */
  function get(path: string, agent: Agent | false): Promise<{ status: number; connection?: string; retryAfter?: string; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, retryAfter: res.headers['retry-after'] as string | undefined, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('a daemon calling as fast as it can is held to maxCallsPerSecond; its answers come, none is refused', async () => {
    const handler = await start({ maxCallsPerSecond: 40, callBurst: 0 });
    const agent = new Agent({ keepAlive: true });
    const started = performance.now();
    for (let i = 0; i < 21; i++) expect((await get(`${P}/ping`, agent)).status).toBe(200);
    const elapsed = performance.now() - started;
    agent.destroy();
    expect(elapsed).toBeGreaterThanOrEqual(480); // 20 intervals of 25 ms
    expect(elapsed).toBeLessThan(2000);
    const view = await handler.service.status('shop');
    // The calls waited their turns (how many of them had to depends on how fast this machine is).
    expect(view.throttle).toMatchObject({ maxCallsPerSecond: 40, refused: 0 });
    expect(view.throttle.delayed).toBeGreaterThan(0);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(new RegExp(`storebridge_reverse_call_delay_seconds_count\\{connection="shop"\\} ${view.throttle.delayed}\\b`));
    expect(text).toMatch(/storebridge_reverse_calls_total\{connection="shop",call="ping",status="200"\} 21/);
  });

  test('a refused call (it would wait longer than maxCallDelayMs) answers 429 {error} with Retry-After', async () => {
    await start({ maxCallsPerSecond: 1, callBurst: 0, maxCallDelayMs: 0 });
    expect((await get(`${P}/ping`, false)).status).toBe(200);
    const refused = await get(`${P}/ping`, false);
    expect([refused.status, Number(refused.retryAfter) >= 1, typeof JSON.parse(refused.body).error]).toEqual([429, true, 'string']);
  });
  test('a connection calling faster than its pace gets its connections closed after each answer (a looping daemon holds one at a time); an answer in time keeps it open', async () => {
    await start({ maxCallsPerSecond: 4, callBurst: 2 }); // slow enough for a busy machine to call within each 250 ms
    const replies: Array<string | undefined> = [];
    for (let i = 0; i < 4; i++) {
      const agent = new Agent({ keepAlive: true }); // a new client per call, asking for keep-alive, never closed
      replies.push((await get(`${P}/ping`, agent)).connection);
    }
    expect(replies).toEqual(['keep-alive', 'close', 'close', 'close']);
    await new Promise((resolve) => setTimeout(resolve, 1200)); // quiet: the pace allows it again
    expect((await get(`${P}/ping`, new Agent({ keepAlive: true }))).connection).toBe('keep-alive');
  });
});

test('many calls at once: those that would wait longer than maxCallDelayMs are refused, without taking a turn', async () => {
  const service = createReverseService({ adapter: createMemoryAdapter(), connections: [{ key: KEY, name: 'shop' }], maxCallsPerSecond: 20, callBurst: 0, maxCallDelayMs: 200 });
  const replies = await Promise.all(Array.from({ length: 20 }, () => service.handle({ method: 'GET', key: KEY, path: '/ping' })));
  expect(replies.map((r) => r.status)).toEqual([...Array(5).fill(200), ...Array(15).fill(429)]); // at once, +50, +100, +150, +200 ms
  expect((await service.status('shop')).throttle).toMatchObject({ delayed: 4, refused: 15 });
});

test('a service without metrics records none; with them the status view counters are in reverse_items_total', async () => {
  const metrics = createMetrics();
  const service = createReverseService({ adapter: createMemoryAdapter(demoCatalog(4)), connections: [{ key: KEY, name: 'shop' }], maxCallsPerSecond: 0, maxDeliveries: 1, metrics });
  await service.enqueue('shop', { kind: 'pull', entity: 'orders' });
  await service.handle({ method: 'POST', key: KEY, path: '/pull/initialize', body: {} });
  await service.handle({ method: 'GET', key: KEY, path: '/pull/orders/next' });
  await service.handle({ method: 'GET', key: KEY, path: '/pull/orders/hasmore' });
  const text = await metrics.registry.metrics();
  expect(text).toMatch(/storebridge_reverse_items_total\{connection="shop",entity="orders",outcome="unacknowledged"\} 1/);
  expect(text).toMatch(/storebridge_reverse_items_total\{connection="shop",entity="orders",outcome="delivered"\} 1/);
});
