import express from 'express';
import express4 from 'express4';
import request from 'supertest';
import { createMemoryAdapter } from '../../adapters/memory';
import { CONVERTERS } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createDaemon, createReverseServiceRouter, REVERSE_BASE_PATH, type ReverseServiceRouter } from '../../lib/reverse';
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
  const router = createReverseServiceRouter({ adapter: store, connections: [{ key: KEY, name: 'shop' }], onError: (e, ctx) => errors.push({ e, ctx }) });
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
    router.service.enqueue('connection-2', { kind: 'push' });
    expect((await request(a).get(`${REVERSE_BASE_PATH}/key-a/mode`)).body).toEqual({ mode: 'idle' });
    expect((await request(a).get(`${REVERSE_BASE_PATH}/key-b/mode`)).body).toEqual({ mode: 'push' });
    expect((await request(a).post(`${REVERSE_BASE_PATH}/key-a/push/initialize`).send({})).status).toBe(409);
    expect((await request(a).post(`${REVERSE_BASE_PATH}/key-b/push/initialize`).send({})).status).toBe(200);
    expect(router.service.status('a').connectionstatus).toBe('waiting');
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
    router.service.enqueue('shop', { kind: 'pull', entity: 'orders' });
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

  test('bad bodies are 400 with a message; bad JSON is 400; over 10,000,000 bytes is 413', async () => {
    const { app: a, router, store } = setup();
    router.service.enqueue('shop', { kind: 'push' });
    expect((await request(a).post(`${P}/push/initialize`).send({ entity: 'shoes' })).status).toBe(400);
    expect((await request(a).post(`${P}/push/initialize`).send({})).status).toBe(200);
    const notJson = await request(a).post(`${P}/push/products`).set('content-type', 'application/json').send('{"products": [');
    expect([notJson.status, notJson.body]).toEqual([400, { error: 'the body is not valid JSON' }]);
    const wrongShape = await request(a).post(`${P}/push/products`).send({ products: [{ _id: 'x', variations: [{ prices: [{ tag: 'default', currency: 'USD', number: 19.99 }] }] }] });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.body.error).toMatch(/products\.0\.variations\.0\.prices\.0\.number/);
    const polluted = await request(a).post(`${P}/push/products`).set('content-type', 'application/json').send('{"products":[{"_id":"x","__proto__":{"admin":true}}]}');
    expect(polluted.status).toBe(400);
    const huge = JSON.stringify({ products: [{ _id: 'big', description: 'x'.repeat(10_000_000) }] });
    const tooLarge = await request(a).post(`${P}/push/products`).set('content-type', 'application/json').send(huge);
    expect([tooLarge.status, tooLarge.body.error]).toEqual([413, 'the body is larger than 10000000 bytes']);
    // None of the refused pages stored anything.
    expect(await store.products.get('x')).toBeUndefined();
    expect(await store.products.get('big')).toBeUndefined();
    const fine = await request(a).post(`${P}/push/products`).send({ products: [{ _id: 'x', title: 'New', variations: [{ prices: [{ tag: 'default', currency: 'USD', number: '19.99' }] }] }] });
    expect([fine.status, fine.body]).toEqual([200, { received: 1 }]);
    expect((await store.products.get('x'))?.variations?.[0].prices?.[0].number).toBe(19.99);
  });

  test('push/products/finish is the order finish once the products are finished; push/orders/finish works too', async () => {
    for (const orderFinish of ['push/products/finish', 'push/orders/finish']) {
      const { app: a, router } = setup();
      router.service.enqueue('shop', { kind: 'push' });
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
    router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    await request(a).post(`${P}/pull/initialize`).send({});
    const res = await request(a).get(`${P}/pull/products/next`);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: expect.any(String) });
    expect(JSON.stringify(res.body)).not.toMatch(/disk|secret|at /);
    expect(seen).toEqual([{ connection: 'shop', call: 'GET {P}/pull/products/next' }]);
    broken = false;
    const again = await request(a).get(`${P}/pull/products/next`);
    expect(again.status).toBe(200);
    expect(router.service.status('shop').products).toMatchObject({ delivered: 1, redelivered: 1 });
  });

  test('operator routes: status and queue for loopback clients, 404 for unknown keys', async () => {
    const { app: a } = setup();
    expect((await request(a).get('/connections/nope/status')).status).toBe(404);
    const queued = await request(a).post(`/connections/${KEY}/queue`).send({ kind: 'pingsample' });
    expect(queued.body).toEqual({ ok: true, position: 0 });
    expect((await request(a).post(`/connections/${KEY}/queue`).send({ kind: 'pull' })).status).toBe(400);
    const status = await request(a).get(`/connections/${KEY}/status`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ connection: 'shop', connectionstatus: 'waiting', mode: 'pingsample', queue: [{ kind: 'pingsample' }] });
    expect(JSON.stringify(status.body)).not.toContain(KEY);
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
  });

  test('works mounted in an Express 4 app: a whole pull runs through it', async () => {
    const service = createMemoryAdapter(demoCatalog(6));
    const router = createReverseServiceRouter({ adapter: service, connections: [{ key: KEY, name: 'shop' }] });
    const a4 = express4();
    a4.use('/', router as never);
    const server = a4.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const port = (server.address() as { port: number }).port;
      router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
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
