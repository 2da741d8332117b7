/**
 * The three bindings of the reverse service (Express 4 and 5, node:http, Fetch API): the same
 * answers through each, the key and body checks before the service, the operator routes (loopback
 * only, decoded safely), and a whole daemon run through every one of them.
 */
import express from 'express';
import express4 from 'express4';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createMemoryAdapter } from '../../adapters/memory';
import { CONVERTERS } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import {
  createDaemon,
  createReverseFetchHandler,
  createReverseNodeHandler,
  createReverseServiceRouter,
  
  type ReverseServiceRouter,
} from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';
import { InvalidOptionError } from '../../lib/errors';

const KEY = 'router-key-1';
const P = `${REVERSE_BASE_PATH}/${KEY}`;

function app(router: ReverseServiceRouter) {
  const a = express();
  a.use(router);
  return a;
}

function setup(products = 4) {
  const store = createMemoryAdapter(demoCatalog(products));
  const errors: unknown[] = [];
  const router = createReverseServiceRouter({ adapter: store, connections: [{ key: KEY, name: 'shop' }], maxCallsPerSecond: 0, onError: (e, ctx) => errors.push({ e, ctx }) });
  return { store, router, app: app(router), errors };
}

describe('reverse service router', () => {
  test('an unknown key is a 404 that looks exactly like an unknown path, for every call', async () => {
    const { app: a } = setup();
    const paths = ['/upstreamstatus', '/mode', '/pull/products/next', '/push/finish', '/nothing'];
    for (const p of paths) {
      const res = await request(a).get(`${REVERSE_BASE_PATH}/wrong-key${p}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found' });
      expect(JSON.stringify(res.body)).not.toContain('wrong-key');
    }
    const post = await request(a).post(`${REVERSE_BASE_PATH}/wrong-key/push/products`).send({ products: [] });
    expect(post.status).toBe(404);
    const known = await request(a).get(`${P}/nothing`);
    expect([known.status, known.body]).toEqual([404, { error: 'not found' }]);
  });

  test('each key selects its own connection; the others are untouched', async () => {
    const router = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(2)), connections: [{ key: 'key-a', name: 'a' }, 'key-b'] });
    const a = app(router);
    expect(router.service.connectionNames()).toEqual(['a', 'connection-2']);
    await router.service.enqueue('connection-2', { kind: 'push' });
    expect((await request(a).get(`${REVERSE_BASE_PATH}/key-a/mode`)).body).toEqual({ mode: 'idle' });
    expect((await request(a).get(`${REVERSE_BASE_PATH}/key-b/mode`)).body).toEqual({ mode: 'push' });
    expect((await request(a).post(`${REVERSE_BASE_PATH}/key-a/push/initialize`).send({})).status).toBe(409);
    expect((await request(a).post(`${REVERSE_BASE_PATH}/key-b/push/initialize`).send({})).status).toBe(200);
    expect((await router.service.status('a')).connectionstatus).toBe('waiting');
    expect(() => router.service.enqueue('c', { kind: 'push' })).toThrow(/no reverse connection is named "c"/);
  });

  test('reads answer the spec bodies; calls out of order are 409 and change nothing', async () => {
    const { app: a, router } = setup();
    expect((await request(a).get(`${P}/upstreamstatus`)).body).toEqual({ upstreamstatus: 'waiting', connectionstatus: 'waiting' });
    expect((await request(a).get(`${P}/mode`)).body).toEqual({ mode: 'idle' });
    const entity = await request(a).get(`${P}/entity`);
    expect(entity.status).toBe(409);
    const early = await request(a).get(`${P}/pull/products/next`);
    expect(early.status).toBe(409);
    expect(typeof early.body.error).toBe('string');
    await router.service.enqueue('shop', { kind: 'pull', entity: 'orders' });
    expect((await request(a).post(`${P}/push/initialize`).send({})).status).toBe(409);
    expect((await request(a).post(`${P}/pull/initialize`).send({ entity: 'products' })).status).toBe(409);
    expect((await request(a).get(`${P}/upstreamstatus`)).body).toEqual({ upstreamstatus: 'waiting', connectionstatus: 'waiting' });
    expect((await request(a).get(`${P}/mode`)).body).toEqual({ mode: 'pull' });
    expect((await request(a).get(`${P}/entity`)).body).toEqual({ entity: 'orders' });
    const init = await request(a).post(`${P}/pull/initialize`).send({ entity: 'orders' });
    expect([init.status, init.body]).toEqual([200, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }]);
    expect((await request(a).get(`${P}/pull/orders/hasmore`)).body).toEqual({ hasmore: 'ready' });
    const next = await request(a).get(`${P}/pull/orders/next`);
    expect(next.status).toBe(200);
    expect(next.body.order._id).toBe(demoCatalog(4).orders[0]._id);
    // Wrong method on a known path.
    expect((await request(a).post(`${P}/pull/orders/next`).send({})).status).toBe(405);
  });

  test('bad bodies are 400 with a message; bad JSON is 400; too deep is 400; over 10,000,000 bytes is 413; a bad item alone is refused', async () => {
    const { app: a, router, store } = setup();
    await router.service.enqueue('shop', { kind: 'push' });
    expect((await request(a).post(`${P}/push/initialize`).send({ entity: 'shoes' })).status).toBe(400);
    expect((await request(a).post(`${P}/push/initialize`).send({})).status).toBe(200);
    const notJson = await request(a).post(`${P}/push/products`).set('content-type', 'application/json').send('{"products": [');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatch(/^the body is not valid JSON/);
    const notAPage = await request(a).post(`${P}/push/products`).send({ orders: [] });
    expect([notAPage.status, notAPage.body]).toEqual([400, { error: 'body: expected {products: [ … ]}' }]);
    const deep = await request(a).post(`${P}/push/products`).set('content-type', 'application/json').send('{"products":' + '['.repeat(5000) + ']'.repeat(5000) + '}');
    expect([deep.status, deep.body]).toEqual([400, { error: 'the body is nested more than 64 levels deep' }]);
    // One unreadable item (a price that is not a number, a key that could reach a prototype) is refused alone.
    const mixed = await request(a)
      .post(`${P}/push/products`)
      .set('content-type', 'application/json')
      .send('{"products":[{"_id":"x","variations":[{"prices":[{"tag":"default","currency":"USD","number":"cheap"}]}]},{"_id":"y","__proto__":{"admin":true}},{"_id":"z","title":"Fine","variations":[{"prices":[{"tag":"default","currency":"USD","number":19.99}]}]}]}');
    expect(mixed.status).toBe(200);
    expect(mixed.body.received).toBe(1);
    expect(mixed.body.refused).toEqual([
      { index: 0, id: 'x', error: expect.stringMatching(/products\.0\.variations\.0\.prices\.0\.number/) },
      { index: 1, id: 'y', error: expect.stringMatching(/__proto__/) },
    ]);
    const huge = JSON.stringify({ products: [{ _id: 'big', description: 'x'.repeat(10_000_000) }] });
    const tooLarge = await request(a).post(`${P}/push/products`).set('content-type', 'application/json').send(huge);
    expect([tooLarge.status, tooLarge.body.error]).toEqual([413, 'request body is larger than 10000000 bytes']);
    // The refused items and pages stored nothing; the good item is stored.
    expect(await store.products.get('x')).toBeUndefined();
    expect(await store.products.get('y')).toBeUndefined();
    expect(await store.products.get('big')).toBeUndefined();
    expect((await store.products.get('z'))?.variations?.[0].prices?.[0].number).toBe(19.99);
    const status = await router.service.status('shop');
    expect(status.products).toMatchObject({ received: 1, refused: 2 });
    expect(status.failures.map((f) => [f.source, f.id])).toEqual([
      ['push', 'x'],
      ['push', 'y'],
    ]);
    const fine = await request(a).post(`${P}/push/products`).send({ products: [{ _id: 'x', title: 'New', variations: [{ prices: [{ tag: 'default', currency: 'USD', number: '19.99' }] }] }] });
    expect([fine.status, fine.body]).toEqual([200, { received: 1 }]);
    expect((await store.products.get('x'))?.variations?.[0].prices?.[0].number).toBe(19.99);
  });

  test('push/products/finish is the order finish once the products are finished; push/orders/finish works too', async () => {
    for (const orderFinish of ['push/products/finish', 'push/orders/finish']) {
      const { app: a, router } = setup();
      await router.service.enqueue('shop', { kind: 'push' });
      await request(a).post(`${P}/push/initialize`).send({});
      expect((await request(a).post(`${P}/push/orders/finish`).send({})).status).toBe(409);
      expect((await request(a).post(`${P}/push/products/finish`).send({})).body).toEqual({ ok: true });
      expect((await request(a).get(`${P}/entity`)).body).toEqual({ entity: 'orders' });
      expect((await request(a).post(`${P}/push/finish`).send({})).status).toBe(409);
      expect((await request(a).post(`${P}/${orderFinish}`).send({})).body).toEqual({ ok: true });
      expect((await request(a).post(`${P}/push/finish`).send({})).body).toEqual({ ok: true });
      expect((await request(a).get(`${P}/upstreamstatus`)).body).toEqual({ upstreamstatus: 'finished', connectionstatus: 'finished' });
    }
  });

  test('a failing store is a 500 {error} without internals, the hook gets the call without the key, and the service keeps serving', async () => {
    const store = createMemoryAdapter(demoCatalog(3));
    let broken = true;
    const original = store.products.get.bind(store.products);
    store.products.get = async (id: string) => {
      if (broken) throw new Error('disk on fire at /var/secret');
      return original(id);
    };
    const seen: Array<{ connection: string; call: string }> = [];
    const router = createReverseServiceRouter({ adapter: store, connections: [{ key: KEY, name: 'shop' }], onError: (_e, ctx) => seen.push(ctx) });
    const a = app(router);
    await router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    await request(a).post(`${P}/pull/initialize`).send({});
    const res = await request(a).get(`${P}/pull/products/next`);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toMatch(/disk|secret|at /);
    expect(seen).toEqual([{ connection: 'shop', call: 'GET {P}/pull/products/next' }]);
    broken = false;
    const again = await request(a).get(`${P}/pull/products/next`);
    expect(again.status).toBe(200);
    // The failed call changed nothing: the first delivery is the one that reached the daemon.
    expect((await router.service.status('shop')).products).toMatchObject({ delivered: 1, redelivered: 0 });
  });

  test('operator routes: list, status and queue by name or key for loopback clients; bad references are 400 JSON, unknown ones 404', async () => {
    const { app: a } = setup();
    expect((await request(a).get('/connections/nope/status')).status).toBe(404);
    const queued = await request(a).post(`/connections/${KEY}/queue`).send({ kind: 'pingsample' });
    expect(queued.body).toEqual({ ok: true, position: 0 });
    expect((await request(a).post('/connections/shop/queue').send({ kind: 'pull' })).body).toEqual({ ok: true, position: 1 });
    const bad = await request(a).post('/connections/shop/queue').send({ kind: 'pull', entity: 'shoes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/request\.entity/);
    const status = await request(a).get(`/connections/${KEY}/status`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ connection: 'shop', connectionstatus: 'waiting', mode: 'pingsample', queue: [{ kind: 'pingsample' }, { kind: 'pull', entities: ['products', 'orders'] }] });
    expect(JSON.stringify(status.body)).not.toContain(KEY);
    expect((await request(a).get('/connections/shop/status')).body).toEqual(status.body);
    const list = await request(a).get('/connections');
    expect(list.body).toEqual({ connections: [status.body] });
    // D1: a malformed escape or a control character is a 400 {error}, never Express's HTML page or a stack.
    for (const path of ['/connections/%/status', '/connections/%E0%A4%A/queue', '/connections/a%00b/status']) {
      const res = path.endsWith('queue') ? await request(a).post(path).send({ kind: 'push' }) : await request(a).get(path);
      expect([res.status, res.headers['content-type']]).toEqual([400, 'application/json; charset=utf-8']);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(res.text).not.toMatch(/<|at |node_modules|\/work\//);
    }
    expect((await request(a).get('/connections/shop/queue')).status).toBe(405);
    expect((await request(a).post('/connections/shop/queue').set('content-type', 'application/json').send('{')).status).toBe(400);
    expect((await request(a).post('/connections/shop/queue').send({ kind: 'cancel' })).status).toBe(409);
  });

  test('operator routes refuse clients that are not loopback', async () => {
    const { router } = setup();
    const a = express();
    // Stands in for a client on another host: the socket's peer address is what the check reads.
    a.use((req, _res, next) => {
      Object.defineProperty(req.socket, 'remoteAddress', { value: '10.1.2.3', configurable: true });
      next();
    });
    a.use(router);
    const res = await request(a).get(`/connections/${KEY}/status`);
    expect([res.status, res.body]).toEqual([403, { error: 'the operator routes answer loopback clients only' }]);
    expect((await request(a).post(`/connections/${KEY}/queue`).send({ kind: 'push' })).status).toBe(403);
    // The daemon's own calls are not limited to loopback.
    expect((await request(a).get(`${P}/mode`)).body).toEqual({ mode: 'idle' });
  });

  test('options are checked once, naming the bad option', () => {
    const adapter = createMemoryAdapter();
    expect(() => createReverseServiceRouter({ adapter, connections: [] })).toThrow(InvalidOptionError);
    expect(() => createReverseServiceRouter({ adapter, connections: ['a', 'a'] })).toThrow(/connections\[1\]\.key/);
    expect(() => createReverseServiceRouter({ adapter, connections: ['a'], leaseMs: 0 })).toThrow(/leaseMs/);
    expect(() => createDaemon({ serviceUrl: 'ftp://x', connectionKey: 'k', adapter })).toThrow(/serviceUrl/);
    expect(() => createDaemon({ serviceUrl: 'http://x', connectionKey: '', adapter })).toThrow(/connectionKey/);
    // One policy for unknown names: refused, with the closest known name.
    expect(() => createReverseServiceRouter({ adapter, connections: ['a'], leaseMS: 5 } as never)).toThrow('invalid option "leaseMS": is not an option of createReverseService (did you mean "leaseMs"?)');
    expect(() => createDaemon({ serviceUrl: 'http://x', connectionKey: 'k', adapter, pollMs: 5 } as never)).toThrow(/"pollMs": is not an option of createDaemon/);
    expect(() => createReverseServiceRouter({ adapter, connections: [{ key: 'a', dialect: 'sap' }] } as never)).toThrow(/connections\.0/);
    expect(() => createReverseServiceRouter({ adapter, connections: ['a'], transactionIdleMs: -1 })).toThrow(/transactionIdleMs/);
    // The binding's own options, with the same policy; with a service given, nothing else is an option.
    expect(() => createReverseServiceRouter({ adapter, connections: ['a'], maxBodyBytes: 0 })).toThrow('invalid option "maxBodyBytes": must be an integer ≥ 1 (bytes)');
    expect(() => createReverseServiceRouter({ adapter, connections: ['a'], answerRoot: 'yes' } as never)).toThrow('invalid option "answerRoot": must be true or false');
    const { service } = createReverseServiceRouter({ adapter, connections: ['a'] });
    expect(createReverseServiceRouter({ service, operatorRoutes: false }).service).toBe(service);
    expect(() => createReverseServiceRouter({ service, maxBodyByte: 5 } as never)).toThrow('invalid option "maxBodyByte": is not an option of the reverse service binding (did you mean "maxBodyBytes"?)');
    expect(() => createReverseServiceRouter({ service, leaseMs: 5 } as never)).toThrow('invalid option "leaseMs": is not an option of the reverse service binding');
  });

  test('works mounted in an Express 4 app: a whole pull runs through it', async () => {
    const service = createMemoryAdapter(demoCatalog(6));
    const router = createReverseServiceRouter({ adapter: service, connections: [{ key: KEY, name: 'shop' }], answerRoot: true });
    const a4 = express4();
    a4.use('/', router as never);
    const server = a4.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const port = (server.address() as { port: number }).port;
      await router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
      const store = createMemoryAdapter();
      const report = await createDaemon({ serviceUrl: `http://127.0.0.1:${port}`, connectionKey: KEY, adapter: store, pollIntervalMs: 2 }).runOnce();
      expect(report.pulled.products).toBe(6);
      expect(await store.products.count()).toBe(6);
      const bad = await request(a4).post(`${P}/push/products`).set('content-type', 'application/json').send('{');
      expect(bad.status).toBe(400);
      const p0 = demoCatalog(6).products[0];
      expect(CONVERTERS.products.toReverse((await store.products.get(p0._id))!)).toEqual(CONVERTERS.products.toReverse(p0));
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

/** Serves a Fetch-API handler on node:http (what Bun, Deno or Hono's node adapter do). */
function serveFetch(handler: (request: Request) => Promise<Response>): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = `http://127.0.0.1${req.url}`;
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : (require('node:stream').Readable.toWeb(req) as ReadableStream);
    void handler(new Request(url, { method: req.method, headers: req.headers as Record<string, string>, body, duplex: 'half' } as RequestInit)).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
}

describe.each(['express 5', 'express 4', 'node:http', 'fetch'] as const)('the %s binding', (binding) => {
  let server: Server;
  let url: string;
  let service: ReturnType<typeof createReverseNodeHandler>['service'];
  const catalog = demoCatalog(9);

  beforeAll(async () => {
    const options = { adapter: createMemoryAdapter(catalog), connections: [{ key: KEY, name: 'shop' }], answerRoot: true, maxCallsPerSecond: 0 };
    if (binding === 'fetch') {
      const handler = createReverseFetchHandler({ ...options, remoteAddress: () => '127.0.0.1' });
      service = handler.service;
      server = serveFetch(handler);
    } else if (binding === 'node:http') {
      const handler = createReverseNodeHandler(options);
      service = handler.service;
      server = createServer(handler);
    } else {
      const router = createReverseServiceRouter(options);
      service = router.service;
      const notFound = (_req: unknown, res: { status(n: number): { json(b: unknown): void } }) => res.status(404).json({ error: 'the host app says not found' });
      if (binding === 'express 4') server = createServer(express4().use(router as never).use(notFound as never) as never);
      else server = createServer(express().use(router).use(notFound as never) as never);
    }
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

  test('GET / answers 200 JSON; the service answers its paths as JSON; other paths are left to the host', async () => {
    const root = await fetch(`${url}/`);
    expect([root.status, await root.json()]).toEqual([200, { service: 'storebridge reverse-service', ok: true }]);
    const unknown = await fetch(`${url}${P}/nothing`);
    expect([unknown.status, unknown.headers.get('content-type'), await unknown.json()]).toEqual([404, 'application/json; charset=utf-8', { error: 'not found' }]);
    const elsewhere = await fetch(`${url}/elsewhere`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual(binding.startsWith('express') ? { error: 'the host app says not found' } : { error: 'not found' });
    const latin1 = await fetch(`${url}${P}/pull/initialize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"x":"caf\xe9"}', 'latin1') });
    expect(latin1.status).toBe(409); // read (Latin-1), then refused by state: nothing is queued
    const tooLarge = await fetch(`${url}${P}/push/products`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(10_000_001) }) });
    expect(tooLarge.status).toBe(413);
  });

  test('a whole pull (products, then orders) and a push run through it', async () => {
    await service.enqueue('shop', { kind: 'pull' });
    await service.enqueue('shop', { kind: 'push' });
    const store = createMemoryAdapter();
    const report = await createDaemon({ serviceUrl: url, connectionKey: KEY, adapter: store, pollIntervalMs: 2 }).runOnce();
    expect(report).toMatchObject({ ok: true, pulled: { products: 9, orders: catalog.orders.length }, failed: 0, pushed: { products: 9, orders: catalog.orders.length }, transactions: 2 });
    const status = (await (await fetch(`${url}/connections/shop/status`)).json()) as { transactions: Array<{ kind: string; outcome: string }> };
    expect(status).toMatchObject({ connectionstatus: 'finished', products: { delivered: 9, succeeded: 9 }, orders: { succeeded: catalog.orders.length } });
    expect(status.transactions.map((t) => `${t.kind} ${t.outcome}`)).toEqual(['pull finished', 'push finished']);
  });
});
