/**
 * The OpenAPI document matches the live services: the real store router (memory adapter, demo
 * catalog) and the real reverse-connection service run on loopback; every request below is a real
 * HTTP call, and each reply's status must be documented for its operation and its body must
 * validate (Ajv, strict, draft 2020-12) against the document's schema for that status. At the end,
 * every documented (operation, status) must have been seen live, except a short list of statuses
 * that cannot be provoked from outside, each with its reason.
 */
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createMemoryAdapter } from '../../adapters/memory';
import type { StoreAdapter } from '../../lib/adapter';
import { demoCatalog } from '../../lib/demo';
import { createOpenApiDocument, openApiHandler } from '../../lib/openapi';
import { createMemoryStateStore, createReverseServiceRouter, type ReverseStateStore } from '../../lib/reverse';
import { createStoreRouter } from '../../lib/server';
import { DocumentValidator, templateRegex } from './openapi-helpers';

const KEY = 'openapi-test-key-0123456789';
const CONN = 'openapi-conn-key-42';
const CONN2 = 'openapi-conn-key-43';
const P = '/api/adapters/custom/reverse/connection/{connection_key}';

const doc = createOpenApiDocument();
const validator = new DocumentValidator(doc);
const seen = new Set<string>();
const servers: Server[] = [];

async function listen(app: express.Express): Promise<string> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve())))));
});

/** An adapter over a memory store whose chosen operations throw (the store is down). */
function failingAdapter(failing: Set<string>): StoreAdapter {
  const memory = createMemoryAdapter(demoCatalog(6));
  const wrap = <T extends object>(name: string, store: T): T =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (failing.has(`${name}.${String(prop)}`) || failing.has(`*.${String(prop)}`)) return Promise.reject(new Error('connection refused (db.internal:5432)'));
          return value.apply(target, args);
        };
      },
    });
  return { products: wrap('products', memory.products), orders: wrap('orders', memory.orders), productBySku: (sku, o) => memory.productBySku(sku, o) } as StoreAdapter;
}

interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

/**
 * One real request. `template` is the documented path (e.g. `/products/{id}`); `url` the concrete
 * URL. Checks that the path matches the template, the status is documented, the body validates.
 */
async function call(base: string, method: 'GET' | 'POST', template: string, concretePath: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  expect(concretePath.split('?')[0]).toMatch(templateRegex(template));
  const res = await fetch(base + concretePath, {
    method,
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body,
  });
  const text = await res.text();
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text);
  const errors = validator.checkResponse(method, template, res.status, body);
  if (errors) throw new Error(`${method} ${concretePath} → ${res.status} does not match the document: ${errors}\n${text.slice(0, 500)}`);
  seen.add(`${method} ${template} ${res.status}`);
  return { status: res.status, body, headers: res.headers };
}

describe('store webhooks, live', () => {
  let store: string;
  let limited: string;
  let broken: string;
  const auth = { headers: { SvcKey: KEY } };
  const json = (value: unknown) => ({ body: JSON.stringify(value), headers: { SvcKey: KEY } });

  beforeAll(async () => {
    const catalog = demoCatalog(45);
    const app = express();
    app.get('/openapi.json', openApiHandler(doc));
    app.use(createStoreRouter({ adapter: createMemoryAdapter(catalog), svcKeys: [KEY], maxBodyBytes: 50_000 }));
    store = await listen(app);
    limited = await listen(express().use(createStoreRouter({ adapter: createMemoryAdapter(catalog), svcKeys: [KEY], rateLimit: { limit: 1, failedAuth: false } })));
    broken = await listen(express().use(createStoreRouter({ adapter: failingAdapter(new Set(['*.list', '*.count', '*.get', '*.upsert'])), svcKeys: [KEY], rateLimit: false })));
  });

  it('serves the document itself with openApiHandler', async () => {
    const res = await fetch(`${store}/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(doc)));
    const again = await fetch(`${store}/openapi.json`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
    const post = await fetch(`${store}/openapi.json`, { method: 'POST' });
    expect(post.status).toBe(404); // app.get: Express answers other methods itself
  });

  it('openApiHandler on a bare node:http server: GET, HEAD, and 405 {error} for other methods', async () => {
    const { createServer } = await import('node:http');
    const server = createServer(openApiHandler(doc)).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/anything`;
    const got = await fetch(url);
    expect(got.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await got.json()) as { openapi: string }).openapi).toBe('3.1.0');
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const del = await fetch(url, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, HEAD');
    expect(await del.json()).toEqual({ error: 'method not allowed; use GET' });
  });

  it.each(['products', 'orders'] as const)('list %s: offset and cursor pages (200), bad parameters (400), no key (401)', async (entity) => {
    const t = `/${entity}`;
    const first = await call(store, 'GET', t, `${t}?sortorder=asc&jobid=7&offset=0&limit=4`, auth);
    expect(first.status).toBe(200);
    expect(first.body.paging).toMatchObject({ pageSize: 4, offset: 0, next: expect.any(String) });
    const cursor = await call(store, 'GET', t, `${t}?sortorder=asc&jobid=7&next=${encodeURIComponent(first.body.paging.next)}&limit=1000`, auth);
    expect(cursor.status).toBe(200);
    expect(cursor.body.paging.next).toBeUndefined();
    for (const bad of ['jobid=x', 'sortorder=up&jobid=7', 'sortorder=asc&jobid=7&offset=1&next=abc', 'sortorder=asc&jobid=7&next=tampered', 'id=a%00b']) {
      expect((await call(store, 'GET', t, `${t}?${bad}`, auth)).status).toBe(400);
    }
    // The deployed forms: no sortorder, no jobid, the key in C2SKey; one item by ?id= (bare), or 404.
    const deployed = await call(store, 'GET', t, `${t}?offset=0`, { headers: { C2SKey: KEY } });
    expect(deployed.status).toBe(200);
    const one = deployed.body[entity][0];
    expect((await call(store, 'GET', t, `${t}?id=${encodeURIComponent(one._id)}`, { headers: { C2SKey: KEY } })).body).toEqual(one);
    expect((await call(store, 'GET', t, `${t}?id=no-such-id`, auth)).status).toBe(404);
    expect((await call(store, 'GET', t, `${t}?sortorder=asc&jobid=7`)).status).toBe(401);
    expect((await call(store, 'GET', t, `${t}?sortorder=asc&jobid=7`, { headers: { SvcKey: 'wrong' } })).status).toBe(401);
    expect((await call(broken, 'GET', t, `${t}?sortorder=asc&jobid=7`, auth)).status).toBe(500);
  });

  it('a method a path does not serve answers 405 {error} with Allow, documented on every operation of that path', async () => {
    const webhookPaths = Object.entries(doc.paths).filter(([, item]) => (item as { get?: { tags?: string[] } }).get?.tags?.includes('webhooks'));
    expect(webhookPaths.map(([p]) => p).sort()).toEqual(['/orders', '/orders/{id}', '/products', '/products/{id}']);
    for (const [template, item] of webhookPaths) {
      const res = await fetch(store + template.replace('{id}', 'prod-000001'), { method: 'DELETE', headers: { SvcKey: KEY } });
      const body = await res.json();
      expect({ template, status: res.status }).toEqual({ template, status: 405 });
      const served = Object.keys(item as object).map((m) => m.toUpperCase()) as Array<'GET' | 'POST'>;
      expect(res.headers.get('allow')?.split(', ')).toEqual(expect.arrayContaining(served));
      for (const method of served) {
        const errors = validator.checkResponse(method, template, 405, body);
        if (errors) throw new Error(`DELETE ${template} → 405 does not match ${method} ${template}: ${errors}`);
        seen.add(`${method} ${template} 405`);
      }
    }
  });

  it('rate limited lists and writes answer 429 with Retry-After', async () => {
    // One limiter per router, counted per key: the first request passes, every later one is refused.
    expect((await call(limited, 'GET', '/products', '/products?sortorder=asc&jobid=1', auth)).status).toBe(200);
    for (const t of ['/products', '/orders']) {
      const over = await call(limited, 'GET', t, `${t}?sortorder=asc&jobid=1`, auth);
      expect(over.status).toBe(429);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await call(limited, 'POST', t, `${t}?jobid=1&id=x`, json({}))).status).toBe(429);
      expect((await call(limited, 'GET', `${t}/{id}`, `${t}/x`, auth)).status).toBe(429);
    }
  });

  it.each(['products', 'orders'] as const)('%s by ID: 200, 404, 400, 401, 500', async (entity) => {
    const list = await call(store, 'GET', `/${entity}`, `/${entity}?sortorder=desc&jobid=1&limit=1`, auth);
    const id = list.body[entity][0]._id;
    const t = `/${entity}/{id}`;
    expect((await call(store, 'GET', t, `/${entity}/${encodeURIComponent(id)}`, auth)).status).toBe(200);
    expect((await call(store, 'GET', t, `/${entity}/no-such-id`, auth)).status).toBe(404);
    expect((await call(store, 'GET', t, `/${entity}/%E0%A4%A`, auth)).status).toBe(400);
    expect((await call(store, 'GET', t, `/${entity}/${encodeURIComponent(id)}`)).status).toBe(401);
    expect((await call(broken, 'GET', t, `/${entity}/${encodeURIComponent(id)}`, auth)).status).toBe(500);
  });

  it('writes: success (200), refusal (400, both shapes), 401, 413, 415, 500', async () => {
    const products = await call(store, 'GET', '/products', '/products?sortorder=asc&jobid=1&limit=3', auth);
    const product = products.body.products[0];
    const written = await call(store, 'POST', '/products', `/products?jobid=3&id=${encodeURIComponent(product._id)}`, json({ ...product, title: 'Renamed', extra: 1 }));
    expect(written.status).toBe(200);
    expect(written.body).toMatchObject({ success: true, product: { title: 'Renamed' } });
    expect(written.body.warnings.length).toBe(1);

    const sku = products.body.products.find((p: any) => p.sku)?.sku ?? product._id;
    const order = { status: 'paid', orderItems: [{ id: sku, quantity: 2, unitPrice: 9.5, currencyId: 'EUR' }], total: { amount: 19, currency: 'EUR' } };
    const ok = await call(store, 'POST', '/orders', '/orders?jobid=3&id=openapi-o1', json(order));
    expect(ok.status).toBe(200);
    expect(ok.body.order._id).toBe('openapi-o1');
    // A create (no id, no body _id, no jobid): the store assigns the id.
    const created = await call(store, 'POST', '/orders', '/orders', json(order));
    expect(created.body).toMatchObject({ success: true, order: { _id: expect.stringMatching(/^order-/) } });

    for (const t of ['/products', '/orders']) {
      const refused = await call(store, 'POST', t, `${t}?jobid=3&id=x1`, json({ _id: 'other', orderItems: [{ id: '', quantity: 0 }] }));
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ success: false, code: 400 });
      const notJson = await call(store, 'POST', t, `${t}?jobid=3&id=x1`, { body: '{"_id":', headers: { SvcKey: KEY } });
      expect(notJson).toMatchObject({ status: 400, body: { error: expect.any(String) } });
      expect((await call(store, 'POST', t, `${t}?jobid=3&id=x1`, { body: '{}' })).status).toBe(401);
      expect((await call(store, 'POST', t, `${t}?jobid=3&id=x1`, json({ _id: 'x1', description: 'x'.repeat(60_000) }))).status).toBe(413);
      expect((await call(store, 'POST', t, `${t}?jobid=3&id=x1`, { body: '{}', headers: { SvcKey: KEY, 'content-type': 'text/plain' } })).status).toBe(415);
      expect((await call(broken, 'POST', t, `${t}?jobid=3&id=${t === '/orders' ? 'o-new' : product._id}`, json(t === '/orders' ? { status: 'paid' } : product))).status).toBe(500);
    }
  });
});

describe('reverse connection, live', () => {
  let base: string;
  let brokenBase: string;
  let router: ReturnType<typeof createReverseServiceRouter>;
  const failing = new Set<string>();
  let brokenRouter: ReturnType<typeof createReverseServiceRouter>;
  /** A state store that fails while `stateDown` is set (its database is down). */
  let stateDown = false;
  const memoryState = createMemoryStateStore();
  const stateStore: ReverseStateStore = {
    read: (keys) => (stateDown ? Promise.reject(new Error('connection refused (state-db.internal:5432)')) : memoryState.read(keys)),
    write: (changes) => (stateDown ? Promise.reject(new Error('connection refused (state-db.internal:5432)')) : memoryState.write(changes)),
  };
  const path = (rel: string, key = CONN) => `${P.replace('{connection_key}', encodeURIComponent(key))}${rel}`;
  const tmpl = (rel: string) => P + rel;
  const get = (rel: string, concrete = rel, b = base) => call(b, 'GET', tmpl(rel), path(concrete));
  const post = (rel: string, body: unknown, concrete = rel, b = base) => call(b, 'POST', tmpl(rel), path(concrete), { body: JSON.stringify(body) });

  /** A service whose state store is down from the start: every call must read the connection's state first. */
  let downBase: string;
  const downState = createMemoryStateStore();
  const down: ReverseStateStore = { read: () => Promise.reject(new Error('ECONNREFUSED state-db.internal')), write: (c) => downState.write(c) };

  /** A call with the other method: the 405 is documented on the operation that exists. */
  async function wrongMethod(method: 'GET' | 'POST', rel: string): Promise<number> {
    const res = await fetch(base + path(concrete(rel)), { method: method === 'GET' ? 'POST' : 'GET', ...(method === 'GET' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}) });
    const body = await res.json();
    const errors = validator.checkResponse(method, tmpl(rel), res.status, body);
    if (errors) throw new Error(`${rel} → ${res.status}: ${errors}`);
    seen.add(`${method} ${tmpl(rel)} ${res.status}`);
    return res.status;
  }

  beforeAll(async () => {
    downBase = await listen(express().use(createReverseServiceRouter({ adapter: createMemoryAdapter(), connections: [{ key: CONN, name: 'shop' }], stateStore: down, maxCallsPerSecond: 0 })));
    router = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(8)), connections: [{ key: CONN, name: 'shop' }], maxBodyBytes: 20_000, maxCallsPerSecond: 0 });
    base = await listen(express().use(router));
    brokenRouter = createReverseServiceRouter({ adapter: failingAdapter(failing), connections: [{ key: CONN, name: 'shop' }, { key: CONN2, name: 'shop2' }], stateStore, maxCallsPerSecond: 0 });
    brokenBase = await listen(express().use(brokenRouter));
  });

  const reverseOps = () =>
    Object.entries(doc.paths)
      .filter(([p]) => p.startsWith(P))
      .flatMap(([p, item]) => Object.keys(item).filter((m) => m !== 'parameters').map((m) => [m.toUpperCase() as 'GET' | 'POST', p.slice(P.length)] as const));
  const concrete = (rel: string) => rel.replace('{id}', 'item%2F1');
  /** A body of the right shape for each POST (so state, not shape, decides the answer). */
  const validBody = (rel: string): unknown => {
    if (rel.endsWith('/succeded')) return rel.includes('products') ? { product: { _id: 'item/1' } } : { order: { _id: 'item/1' } };
    if (rel.endsWith('/failed')) return { error: 'disk full', reasons: [{ message: 'no space', code: 1002 }] };
    if (/^\/(push|pingsample)\/(products|orders)$/.test(rel)) return { [rel.split('/')[2]]: [] };
    return {};
  };

  it('every call: unknown key 404, a control character in the key 400, wrong method 405; POSTs: invalid JSON or too deep 400, oversized 413, not JSON 415', async () => {
    for (const [method, rel] of reverseOps()) {
      expect((await call(base, method, tmpl(rel), path(concrete(rel), 'no-such-key'), method === 'POST' ? { body: '{}' } : {})).status).toBe(404);
      expect((await call(base, method, tmpl(rel), path(concrete(rel), 'key\u0001'), method === 'POST' ? { body: '{}' } : {})).body).toEqual({ error: 'the connection key in the path must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)' });
      expect(await wrongMethod(method, rel)).toBe(405);
      if (method === 'POST') {
        expect((await call(base, method, tmpl(rel), path(concrete(rel)), { body: '{"a":' })).status).toBe(400);
        expect((await call(base, method, tmpl(rel), path(concrete(rel)), { body: '['.repeat(100) + ']'.repeat(100) })).body).toEqual({ error: 'the body is nested more than 64 levels deep' });
        expect((await call(base, method, tmpl(rel), path(concrete(rel)), { body: JSON.stringify({ pad: 'x'.repeat(25_000) }) })).status).toBe(413);
        expect((await call(base, method, tmpl(rel), path(concrete(rel)), { body: '{}', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
      }
      if (rel.includes('{id}')) {
        expect((await call(base, method, tmpl(rel), path(rel.replace('{id}', 'a%00b')), { body: '{}' })).body).toEqual({ error: 'the item id in the path must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)' });
      }
    }
  });

  it('every call: 429 {error} with Retry-After when it would wait longer than maxCallDelayMs for its turn (the pace)', async () => {
    // One call a second, no burst, no waiting: the call after an answered one is refused until its turn.
    const paced = await listen(express().use(createReverseServiceRouter({ adapter: createMemoryAdapter(), connections: [{ key: CONN, name: 'shop' }], maxCallsPerSecond: 1, callBurst: 0, maxCallDelayMs: 0 })));
    for (const [method, rel] of reverseOps()) {
      const once = () => call(paced, method, tmpl(rel), path(concrete(rel)), method === 'POST' ? { body: JSON.stringify(validBody(rel)) } : {});
      let reply = await once();
      if (reply.status !== 429) reply = await once(); // that one took the turn
      expect({ rel, status: reply.status, retryAfter: Number(reply.headers.get('retry-after')) > 0 }).toEqual({ rel, status: 429, retryAfter: true });
    }
  });

  it('every state-bound call out of order: 409 {error}, nothing changes', async () => {
    for (const [method, rel] of reverseOps()) {
      if (['/mode', '/upstreamstatus', '/ping', '/strategy', '/cursoroffset'].includes(rel)) continue;
      const reply = await call(base, method, tmpl(rel), path(concrete(rel)), method === 'POST' ? { body: JSON.stringify(validBody(rel)) } : {});
      expect({ rel, status: reply.status }).toEqual({ rel, status: 409 });
    }
    // The calls that only read answer at any time (the deployed daemons start every pass with them).
    expect((await get('/upstreamstatus')).body).toEqual({ upstreamstatus: 'waiting', connectionstatus: 'waiting' });
    expect((await get('/mode')).body).toEqual({ mode: 'idle' });
    expect((await get('/ping')).body).toEqual({ connectionstatus: 'idle' });
    expect((await get('/strategy')).body).toEqual({ strategy: 'push' });
    expect((await get('/cursoroffset')).body).toEqual({ cursoroffset: 0 });
  });

  it.each(['products', 'orders'] as const)('a whole pull of %s: every reply as documented', async (entity) => {
    const noun = entity === 'products' ? 'product' : 'order';
    await router.service.enqueue('shop', { kind: 'pull', entity });
    expect((await get('/mode')).body).toEqual({ mode: 'pull' });
    expect((await get('/ping')).body).toEqual({ connectionstatus: 'pulling' });
    expect((await get('/entity')).body).toEqual({ entity });
    const initialized = { upstreamstatus: 'initialized', connectionstatus: 'initialized' };
    expect((await post('/pull/initialize', { entity })).body).toEqual(initialized);
    // Deployed daemons send initialize again on every pass: a repeat changes nothing.
    expect((await post('/pull/initialize', {})).body).toEqual(initialized);
    let n = 0;
    for (;; n++) {
      const more = await get(`/pull/${entity}/hasmore`);
      if (more.body.hasmore === 'done') break;
      expect(more.body.hasmore).toBe('ready');
      const item = (await get(`/pull/${entity}/next`)).body[noun];
      const id = encodeURIComponent(item._id);
      if (n === 0) {
        await post(`/pull/${entity}/{id}/failed`, { error: 'refused', reasons: [{ message: 'blank SKU', code: 1001 }] }, `/pull/${entity}/${id}/failed`);
        const repeat = await post(`/pull/${entity}/{id}/failed`, { error: 'refused', reasons: [{ message: 'blank SKU', code: 1001 }] }, `/pull/${entity}/${id}/failed`);
        expect(repeat.body).toEqual({ ok: true, duplicate: true });
        const notAnObject = await post(`/pull/${entity}/{id}/succeded`, [item], `/pull/${entity}/${id}/succeded`);
        expect(notAnObject.status).toBe(400);
      } else if (n === 1) {
        // The store kept the item under another id (an insert): recorded, not refused.
        expect((await post(`/pull/${entity}/{id}/succeded`, { [noun]: { ...item, _id: 'erp-77' } }, `/pull/${entity}/${id}/succeded`)).body).toEqual({ ok: true });
        expect((await router.service.status('shop')).idMap.at(-1)).toMatchObject({ entity, pulledId: item._id, storeId: 'erp-77' });
      } else {
        expect((await post(`/pull/${entity}/{id}/succeded`, { [noun]: item }, `/pull/${entity}/${id}/succeded`)).body).toEqual({ ok: true });
      }
      // A hasmore before readyfornext closes the acknowledgement (a deployed daemon whose reply was lost reads no readyfornext).
      expect((await get(`/pull/${entity}/hasmore`)).body.hasmore).toMatch(/^(ready|done)$/);
      expect((await get(`/pull/${entity}/readyfornext`)).body).toEqual({ ready: true });
    }
    expect((await post(`/pull/${entity}/finish`, {})).body).toEqual({ ok: true });
    expect((await post(`/pull/${entity}/finish`, {})).body).toEqual({ ok: true, duplicate: true });
    expect((await post('/pull/finish', {})).body).toEqual({ ok: true });
    expect(['finishing', 'finished']).toContain((await get('/upstreamstatus')).body.connectionstatus);
  });

  it.each(['push', 'pingsample'] as const)('a whole %s: pages, a refused item, finishes', async (kind) => {
    await router.service.enqueue('shop', { kind });
    expect((await get('/mode')).body).toEqual({ mode: kind });
    expect((await get('/ping')).body).toEqual({ connectionstatus: 'fetchingremote' });
    expect((await get('/strategy')).body).toEqual({ strategy: kind });
    const other = kind === 'push' ? 'pingsample' : 'push';
    expect((await post(`/${other}/initialize`, {})).status).toBe(409);
    const initialized = { upstreamstatus: 'initialized', connectionstatus: 'initialized' };
    expect((await post(`/${kind}/initialize`, {})).body).toEqual(initialized);
    expect((await post(`/${kind}/initialize`, {})).body).toEqual(initialized);
    const products = [{ _id: `${kind}-p1`, sku: 'S1', last_updated: '1517360038797 - 3', variations: [{ prices: [{ tag: 'default', currency: 'EUR', number: 19.99 }], availabilities: [{ tag: 'default', quantity: '3' }] }] }];
    const bad = { _id: 'x', variations: [{ prices: [{ tag: 'd', currency: 'EUR', number: 'cheap' }] }] };
    const page = await post(`/${kind}/products`, { products: [bad, ...products] });
    expect(page.body).toEqual({ received: 1, refused: [{ index: 0, id: 'x', error: expect.stringMatching(/products\.0\.variations\.0\.prices\.0\.number/) }], refusedCount: 1 });
    // A sample push never moves the cursor; the push before it (same connection) did, to the value as sent.
    expect((await get('/cursoroffset')).body).toEqual({ cursoroffset: '1517360038797 - 3' });
    expect((await post(`/${kind}/products/finish`, {})).body).toEqual({ ok: true });
    expect((await get('/entity')).body).toEqual({ entity: 'orders' });
    expect((await post(`/${kind}/orders`, { orders: [{ orderid: `${kind}-o1`, dateCreated: 1517360038797, orderItems: [{ id: 'S1', quantity: '2', unitPrice: 9.5 }] }] })).body).toEqual({ received: 1 });
    expect((await post(`/${kind}/orders/finish`, {})).body).toEqual({ ok: true });
    expect((await post(`/${kind}/orders/finish`, {})).body).toEqual({ ok: true, duplicate: true });
    expect((await post(`/${kind}/finish`, {})).body).toEqual({ ok: true });
    if (kind === 'push') {
      // The spec's printed order finish (push/products/finish) finishes the orders once products are finished.
      await router.service.enqueue('shop', { kind: 'push' });
      await post('/push/initialize', {});
      await post('/push/products/finish', {});
      expect((await post('/push/products/finish', {})).body).toEqual({ ok: true });
      expect((await post('/push/products/finish', {})).body).toEqual({ ok: true, duplicate: true });
      await post('/push/finish', {});
    }
  });

  it('a failing store or state store: 500 {error} without internals, nothing changed, and the service keeps serving', async () => {
    failing.add('*.list');
    await brokenRouter.service.enqueue('shop', { kind: 'pull', entity: 'products' });
    const init = await post('/pull/initialize', {}, '/pull/initialize', brokenBase);
    expect(init.status).toBe(500);
    expect(JSON.stringify(init.body)).not.toMatch(/db\.internal|5432/);
    failing.clear();
    expect((await post('/pull/initialize', {}, '/pull/initialize', brokenBase)).status).toBe(200);
    failing.add('*.get');
    expect((await get('/pull/products/next', '/pull/products/next', brokenBase)).status).toBe(500);
    await brokenRouter.service.enqueue('shop2', { kind: 'pull', entity: 'orders' });
    expect((await call(brokenBase, 'POST', tmpl('/pull/initialize'), path('/pull/initialize', CONN2), { body: '{}' })).status).toBe(200);
    expect((await call(brokenBase, 'GET', tmpl('/pull/orders/next'), path('/pull/orders/next', CONN2))).status).toBe(500);
    failing.clear();
    await brokenRouter.service.enqueue('shop', { kind: 'push' });
    failing.add('*.upsertMany');
    // Finish the pull first: the push is queued behind it.
    for (;;) {
      const more = await get('/pull/products/hasmore', '/pull/products/hasmore', brokenBase);
      if (more.body.hasmore === 'done') break;
      const item = (await get('/pull/products/next', '/pull/products/next', brokenBase)).body.product;
      await post('/pull/products/{id}/succeded', { product: item }, `/pull/products/${encodeURIComponent(item._id)}/succeded`, brokenBase);
      await get('/pull/products/readyfornext', '/pull/products/readyfornext', brokenBase);
    }
    await post('/pull/products/finish', {}, '/pull/products/finish', brokenBase);
    await post('/pull/finish', {}, '/pull/finish', brokenBase);
    await post('/push/initialize', {}, '/push/initialize', brokenBase);
    expect((await post('/push/products', { products: [{ _id: 'p' }] }, '/push/products', brokenBase)).status).toBe(500);
    await post('/push/products/finish', {}, '/push/products/finish', brokenBase);
    expect((await post('/push/orders', { orders: [{ _id: 'o' }] }, '/push/orders', brokenBase)).status).toBe(500);
    failing.clear();
    // The state store down while a call changes the connection: 500, and the change is not kept.
    const before = await brokenRouter.service.status('shop');
    stateDown = true;
    const lost = await post('/push/orders/finish', {}, '/push/orders/finish', brokenBase);
    expect([lost.status, lost.body]).toEqual([500, { error: "the service could not read or save the connection's state; try the call again" }]);
    stateDown = false;
    expect(await brokenRouter.service.status('shop')).toEqual(before);
    // Down from the start: every call needs the connection's state first, and answers 500.
    for (const [method, rel] of reverseOps()) {
      const reply = await call(downBase, method, tmpl(rel), path(concrete(rel)), method === 'POST' ? { body: JSON.stringify(validBody(rel)) } : {});
      expect({ rel, status: reply.status, body: reply.body }).toEqual({ rel, status: 500, body: { error: "the service could not read or save the connection's state; try the call again" } });
    }
  });
});

/**
 * Documented statuses the tests cannot provoke from outside, with the reason. Everything else the
 * document lists must have been answered live above.
 */
const NOT_PROVOKED: Record<string, string> = {};

afterAll(() => {
  const missing = validator.documentedResponses().filter((r) => !seen.has(r) && !(r in NOT_PROVOKED));
  expect(missing).toEqual([]);
});
