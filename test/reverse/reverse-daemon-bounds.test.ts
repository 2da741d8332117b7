/**
 * `runOnce` always ends and every wait is bounded, whatever the service does: a `readyfornext` that
 * never turns true, a `hasmore` stuck at `waiting`, a service that asks for work and never moves,
 * 500s on every call, a reply larger than the cap, a host whose `GET /` is not 200. Each fake
 * service below is a real HTTP server on loopback; the daemon is the real one.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryAdapter } from '../../adapters/memory';
import { createDaemon, type DaemonOptions } from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';

const KEY = 'bounds-key';
const servers: Server[] = [];
afterEach(() => Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve()))))));

/** A service answering `{P}` paths with `reply(path)` (status 200 unless it says otherwise), `GET /` with `root`. */
async function fake(reply: (method: string, path: string) => { status?: number; body: unknown } | string, root = 200): Promise<{ url: string; calls: string[] }> {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    const url = req.url ?? '/';
    if (url === '/') return void res.writeHead(root).end('<html></html>');
    const path = url.slice(`${REVERSE_BASE_PATH}/${KEY}`.length);
    calls.push(`${req.method} ${path}`);
    const r = reply(req.method ?? 'GET', path);
    if (typeof r === 'string') return void res.writeHead(200, { 'content-type': 'application/json' }).end(r);
    res.writeHead(r.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(r.body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

const daemon = (url: string, extra: Partial<DaemonOptions> = {}) =>
  createDaemon({ serviceUrl: url, connectionKey: KEY, adapter: createMemoryAdapter(), pollIntervalMs: 1, idlePollMaxMs: 5, retry: { limit: 1, delay: () => 1 }, ...extra });

/** A pull service with one item whose behaviour after the acknowledgement is `after`. */
function pullService(after: (path: string) => unknown) {
  return (method: string, path: string) => {
    if (path === '/ping') return { body: { connectionstatus: 'pulling' } };
    if (path === '/upstreamstatus') return { body: { upstreamstatus: 'initialized' } };
    if (path === '/entity') return { body: { entity: 'products' } };
    if (path === '/pull/products/next') return { body: { product: { _id: 'p1', sku: 'S1' } } };
    const special = after(path);
    if (special !== undefined) return { body: special };
    return { body: {} };
  };
}

test('readyfornext that never turns true: the pass fails after maxReadyPolls, the run gives up after maxConsecutiveErrors', async () => {
  const { url, calls } = await fake(pullService((p) => (p === '/pull/products/hasmore' ? { hasmore: 'ready' } : p === '/pull/products/readyfornext' ? { ready: false } : undefined)));
  const started = Date.now();
  const report = await daemon(url, { maxReadyPolls: 7, maxConsecutiveErrors: 3 }).runOnce();
  expect(report.ok).toBe(false);
  expect(report.errors.at(-1)).toBe('GET {P}/pull/products/readyfornext: still not ready after 7 polls');
  expect(calls.filter((c) => c.endsWith('/readyfornext'))).toHaveLength(3 * 7);
  expect(Date.now() - started).toBeLessThan(5_000);
});

test('hasmore stuck at waiting ends the entity after maxWaits; a service that never moves ends the run after maxStalledPasses', async () => {
  const { url, calls } = await fake(pullService((p) => (p === '/pull/products/hasmore' ? { hasmore: 'waiting' } : p === '/pull/products/readyfornext' ? { ready: true } : undefined)));
  const report = await daemon(url, { maxWaits: 4, maxStalledPasses: 3 }).runOnce();
  // Each pass: 4 waits plus the one that ends the entity, then the finishes; no item moved, so 3 passes and out.
  expect(calls.filter((c) => c.endsWith('/hasmore'))).toHaveLength(3 * 5);
  expect(report).toMatchObject({ ok: false, errors: ['the service asked for work 3 times in a row and nothing moved'] });
  const stuck = await fake((_m, path) => (path === '/ping' ? { body: { connectionstatus: 'pulling' } } : path === '/upstreamstatus' ? { body: { upstreamstatus: 'finishing' } } : { body: {} }));
  const stalled = await daemon(stuck.url, { maxStalledPasses: 3 }).runOnce();
  expect(stalled.ok).toBe(false);
  expect(stalled.errors).toEqual(['the service asked for work 3 times in a row and nothing moved']);
  expect(stuck.calls.filter((c) => c === 'GET /ping')).toHaveLength(6);
});

test('500 on every call: retried per the policy, then the run gives up; a reply over the cap is an error, not memory', async () => {
  const { url, calls } = await fake(() => ({ status: 500, body: { error: 'the service is down' } }));
  const report = await daemon(url, { maxConsecutiveErrors: 2 }).runOnce();
  expect(report.ok).toBe(false);
  expect(report.errors).toEqual(['GET {P}/ping answered HTTP 500: the service is down', 'GET {P}/ping answered HTTP 500: the service is down']);
  expect(calls).toHaveLength(2 * 2); // one retry each
  const big = await fake(() => `{"connectionstatus":"${'x'.repeat(5000)}"}`);
  const capped = await daemon(big.url, { maxResponseBytes: 1000, maxConsecutiveErrors: 1 }).runOnce();
  expect(capped.errors).toEqual(['GET {P}/ping: the reply is larger than 1000 bytes']);
});

test('GET / not 200: the service is judged unreachable (as the deployed daemons do) and the run ends', async () => {
  const { url, calls } = await fake(() => ({ body: { connectionstatus: 'idle' } }), 503);
  const report = await daemon(url, { maxConsecutiveErrors: 2 }).runOnce();
  expect(report.ok).toBe(false);
  expect(report.errors[0]).toBe('GET / answered HTTP 503');
  expect(calls).toEqual([]);
});
