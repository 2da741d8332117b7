/**
 * The Express bindings: write bodies (limits, JSON, content types), rate limits (429 + Retry-After),
 * Express 4 mounting, standalone handlers at custom URLs, and option parsing.
 */
import express from 'express';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { InvalidOptionError } from '../../lib/errors';
import { createStoreCore, createStoreHandlers, createStoreRouter, listProductsHandler, type StoreRouterOptions } from '../../lib/server';
import { parseRouterOptions } from '../../lib/server/router-options';
import { KEY, get, listen, post, spyAdapter, startStore } from './helpers';

const catalog = demoCatalog(20);
const order = catalog.orders[0];

describe('write bodies', () => {
  let store: Awaited<ReturnType<typeof startStore>>;
  const spy = spyAdapter(createMemoryAdapter(structuredClone(catalog)));
  beforeAll(async () => {
    store = await startStore({ adapter: spy });
  });
  afterAll(() => store.close());
  beforeEach(() => spy.calls.splice(0));

  it('a JSON body up to the limit is accepted (a ~10 MB order)', async () => {
    const big = { ...order, feedback: 'x'.repeat(10 * 1024 * 1024 - 10_000) };
    // The body limit (10 MiB) lets it through to the write core. Under the default page budget
    // (10,000,000 bytes) the item could never be listed, so the core refuses it (writes.md) ...
    const refused = await post(`${store.base}/orders?jobid=1&id=${order._id}`, big);
    expect(refused.status).toBe(400);
    const reason = expect.stringMatching(/^body: the order is 104\d{5} bytes as JSON, more than the 99997\d\d bytes one list page can hold/);
    expect(refused.body.reasons).toEqual([{ msg: reason, message: reason, code: 400 }]);
    expect(spy.calls).not.toContain('orders.upsert');
    // ... and with a page budget that holds it, it is stored.
    const roomy = await startStore({ adapter: createMemoryAdapter(structuredClone(catalog)), maxPageBytes: 11_000_000 });
    try {
      const r = await post(`${roomy.base}/orders?jobid=1&id=${order._id}`, big);
      expect(r.status).toBe(200);
      expect(r.body.success).toBe(true);
    } finally {
      await roomy.close();
    }
  });

  it('a body over 10 MiB is a 413 {error} and nothing is stored', async () => {
    const big = { ...order, _id: 'too-big', feedback: 'x'.repeat(10 * 1024 * 1024) };
    const r = await post(`${store.base}/orders?jobid=1&id=too-big`, big);
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: 'request body is larger than 10485760 bytes' });
    expect(spy.calls).toEqual([]);
  });

  it('a chunked body over the limit is a 413 too', async () => {
    const s = await startStore({ adapter: createMemoryAdapter(), maxBodyBytes: 1000 });
    try {
      const stream = new ReadableStream({
        start(c) {
          for (let i = 0; i < 5; i++) c.enqueue(new TextEncoder().encode(`{"_id":"x","title":"${'y'.repeat(400)}"}`));
          c.close();
        },
      });
      const res = await fetch(`${s.base}/products?jobid=1&id=x`, {
        method: 'POST',
        headers: { SvcKey: KEY, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: 'request body is larger than 1000 bytes' });
    } finally {
      await s.close();
    }
  });

  it.each([
    ['{"_id": "x",', /^the body is not valid JSON/],
    ['', /^the body is empty/],
    ['   ', /^the body is empty/],
  ])('malformed JSON %p is a 400 with the write failure structure', async (body, message) => {
    const r = await post(`${store.base}/orders?jobid=1&id=x`, body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, code: 400, warnings: [] });
    expect(r.body.error).toMatch(new RegExp(`^order not stored: ${message.source.slice(1)}`));
    expect(r.body.reasons).toHaveLength(1);
    expect(r.body.reasons[0].msg).toMatch(message);
    expect(spy.calls).toEqual([]);
  });

  it('invalid UTF-8 is a 400 with the write failure structure', async () => {
    const res = await fetch(`${store.base}/orders?jobid=1&id=x`, {
      method: 'POST',
      headers: { SvcKey: KEY, 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      success: false,
      code: 400,
      error: 'order not stored: the body is not valid UTF-8',
      reasons: [{ msg: 'the body is not valid UTF-8', message: 'the body is not valid UTF-8', code: 400 }],
      warnings: [],
    });
  });

  it.each([
    [{ SvcKey: KEY, 'content-type': 'text/plain' }, /must be JSON \(Content-Type: application\/json\), got "text\/plain"/],
    [{ SvcKey: KEY, 'content-type': 'application/x-www-form-urlencoded' }, /must be JSON/],
    [{ SvcKey: KEY, 'content-type': 'application/json; charset=latin1' }, /must be UTF-8/],
    [{ SvcKey: KEY, 'content-type': 'application/json', 'content-encoding': 'gzip' }, /compressed/],
  ])('a non-JSON body (%p) is a 415 {error}', async (headers, message) => {
    const r = await post(`${store.base}/orders?jobid=1&id=x`, JSON.stringify(order), headers as Record<string, string>);
    expect(r.status).toBe(415);
    expect(r.body.error).toMatch(message);
    expect(spy.calls).toEqual([]);
  });

  it('a missing Content-Type is a 415', async () => {
    const res = await fetch(`${store.base}/orders?jobid=1&id=x`, { method: 'POST', headers: { SvcKey: KEY }, body: new Uint8Array(Buffer.from('{}')) });
    expect(res.status).toBe(415);
  });

  it('application/*+json and an explicit utf-8 charset are JSON', async () => {
    const r = await post(`${store.base}/products?jobid=1&id=p-vnd`, { title: 'x' }, { SvcKey: KEY, 'content-type': 'application/vnd.api+json; charset=UTF-8' });
    expect(r.status).toBe(200);
  });

  it('__proto__ in a body is refused by the write core and stores nothing', async () => {
    const r = await post(`${store.base}/products?jobid=1&id=p-proto`, '{"title":"x","__proto__":{"polluted":true}}');
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(spy.calls.filter((c) => c.endsWith('upsert'))).toEqual([]);
  });

  it('the write failure structure answers bad parameters; the write success structure a good write', async () => {
    const bad = await post(`${store.base}/orders?jobid=x&id=${order._id}`, order);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, code: 400, reasons: [{ msg: expect.stringMatching(/^jobid/) }], warnings: [] });
    const good = await post(`${store.base}/orders?jobid=3&id=${order._id}`, order);
    expect(good.body).toMatchObject({ success: true, code: 200, warnings: [], order: { _id: order._id } });
  });

  it('a body the host app already parsed (express.json() before the router) is used as is', async () => {
    const app = express();
    app.use(express.json());
    app.use('/sync', createStoreRouter({ adapter: createMemoryAdapter(), svcKeys: [KEY], rateLimit: false }));
    const srv = await listen(app);
    try {
      const r = await post(`${srv.url}/sync/products?jobid=1&id=pre`, { title: 'pre-parsed' });
      expect(r.status).toBe(200);
      expect(r.body.product.title).toBe('pre-parsed');
    } finally {
      await srv.close();
    }
  });
});

describe('rate limits', () => {
  const OTHER = 'another-key-9876543210';
  it('per key: past the limit a 429 {error} with Retry-After; another key has its own budget', async () => {
    const s = await startStore({ adapter: createMemoryAdapter(), svcKeys: [KEY, OTHER], rateLimit: { limit: 3, windowMs: 60_000 } });
    try {
      for (let i = 0; i < 3; i++) expect((await get(`${s.base}/products?sortorder=asc&jobid=1`)).status).toBe(200);
      const limited = await get(`${s.base}/products/anything`);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.body.error).toMatch(/^too many requests with this SvcKey; retry after \d+ seconds$/);
      expect(limited.text).not.toContain(KEY);
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`, { SvcKey: OTHER })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('on by default (1,200 a minute per key)', async () => {
    const s = await startStore({ adapter: createMemoryAdapter(), rateLimit: undefined });
    try {
      const r = await get(`${s.base}/products?sortorder=asc&jobid=1`);
      expect(r.headers.get('ratelimit-policy')).toBe('1200;w=60');
      expect(parseRouterOptions({ adapter: createMemoryAdapter(), svcKeys: [KEY] }).rateLimit).toMatchObject({ limit: 1200, windowMs: 60_000, failedAuth: { limit: 100 } });
    } finally {
      await s.close();
    }
  });

  it('failed key checks are limited per address, separately; a good key from that address is never refused by it', async () => {
    const s = await startStore({ adapter: createMemoryAdapter(), rateLimit: { limit: 1000, failedAuth: { limit: 2, windowMs: 60_000 } } });
    try {
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`)).status).toBe(200);
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`, { SvcKey: 'wrong' })).status).toBe(401);
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`, { SvcKey: 'wrong' })).status).toBe(401);
      const blocked = await get(`${s.base}/products?sortorder=asc&jobid=1`, { SvcKey: 'wrong' });
      expect(blocked.status).toBe(429);
      expect(blocked.body.error).toMatch(/invalid SvcKey from this address/);
      expect(blocked.headers.get('retry-after')).toBeTruthy();
      // The real caller behind the same address (NAT, a proxy) is not locked out ...
      for (let i = 0; i < 5; i++) expect((await get(`${s.base}/products?sortorder=asc&jobid=1`)).status).toBe(200);
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`, { C2SKey: KEY })).status).toBe(200);
      // ... while wrong keys stay blocked.
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`, { SvcKey: 'wrong' })).status).toBe(429);
    } finally {
      await s.close();
    }
  });

  it('a valid key still counts toward its own per-key limit when the address is blocked for bad keys', async () => {
    const s = await startStore({ adapter: createMemoryAdapter(), rateLimit: { limit: 3, failedAuth: { limit: 1, windowMs: 60_000 } } });
    try {
      for (let i = 0; i < 3; i++) expect((await get(`${s.base}/products`, { SvcKey: 'wrong' })).status).toBe(i === 0 ? 401 : 429);
      for (let i = 0; i < 3; i++) expect((await get(`${s.base}/products`)).status).toBe(200);
      const over = await get(`${s.base}/products`);
      expect(over.status).toBe(429);
      expect(over.body.error).toMatch(/^too many requests with this SvcKey/);
    } finally {
      await s.close();
    }
  });
});

describe('mounting', () => {
  it('works in an Express 4 app (all six operations and a 404)', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const express4 = require('express4') as typeof import('express');
    const app = express4();
    app.use('/sync', createStoreRouter({ adapter: createMemoryAdapter(structuredClone(catalog)), svcKeys: [KEY], rateLimit: { limit: 100 } }));
    const srv = await listen(app);
    try {
      const list = await get(`${srv.url}/sync/products?sortorder=asc&jobid=1`);
      expect(list.body.paging.pageSize).toBe(20);
      const page2 = await get(`${srv.url}/sync/orders?sortorder=desc&jobid=1&next=${(await get(`${srv.url}/sync/orders?sortorder=desc&jobid=1&limit=2`)).body.paging.next}`);
      expect(page2.status).toBe(200);
      expect((await get(`${srv.url}/sync/products/${catalog.products[3]._id}`)).body.product._id).toBe(catalog.products[3]._id);
      expect((await get(`${srv.url}/sync/orders/${order._id}`)).body.order._id).toBe(order._id);
      expect((await post(`${srv.url}/sync/orders?jobid=1&id=${order._id}`, order)).body.success).toBe(true);
      expect((await post(`${srv.url}/sync/products?jobid=1&id=p4`, { title: 'four' })).body.product._id).toBe('p4');
      expect((await get(`${srv.url}/sync/products?sortorder=asc&jobid=1&offset=-1`)).status).toBe(400);
      expect((await get(`${srv.url}/sync/products?sortorder[x]=desc&jobid=1`)).body.products[0]._id).toBe((await get(`${srv.url}/sync/products?sortorder=asc`)).body.products[0]._id);
      expect((await get(`${srv.url}/sync/elsewhere`)).status).toBe(404);
      expect((await get(`${srv.url}/sync/products?sortorder=asc&jobid=1`, {})).status).toBe(401);
    } finally {
      await srv.close();
    }
  });

  it('standalone handlers mount at the URLs a connection is configured with (Express 5 and 4)', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    for (const factory of [express, require('express4') as typeof express]) {
      const adapter = createMemoryAdapter(structuredClone(catalog));
      const h = createStoreHandlers({ adapter, svcKeys: [KEY], rateLimit: false });
      const app = factory();
      app.get('/api/catalog', h.listProducts);
      app.get('/api/catalog/item/:id', h.getProduct);
      app.get('/api/sales', h.listOrders);
      app.get('/api/sales/:id', h.getOrder);
      app.post('/hooks/product', h.writeProduct);
      app.post('/hooks/order', h.writeOrder);
      app.get('/only-list', listProductsHandler({ adapter, svcKeys: [KEY] }));
      const srv = await listen(app);
      try {
        expect((await get(`${srv.url}/api/catalog?sortorder=asc&jobid=1`)).body.paging.itemsTotal).toBe(20);
        expect((await get(`${srv.url}/api/catalog/item/${catalog.products[0]._id}`)).body.product._id).toBe(catalog.products[0]._id);
        expect((await get(`${srv.url}/api/sales?sortorder=asc&jobid=1`)).body.orders).toHaveLength(5);
        expect((await get(`${srv.url}/api/sales/nope`)).status).toBe(404);
        expect((await post(`${srv.url}/hooks/order?jobid=1&id=${order._id}`, order)).body.success).toBe(true);
        expect((await post(`${srv.url}/hooks/product?jobid=1&id=p-new`, { title: 'n' })).status).toBe(200);
        expect((await get(`${srv.url}/only-list?sortorder=desc&jobid=1`)).status).toBe(200);
        expect((await get(`${srv.url}/only-list?sortorder=desc&jobid=1`, {})).status).toBe(401);
      } finally {
        await srv.close();
      }
    }
  });

  it('routes outside the router fall through to the host app', async () => {
    const app = express();
    app.use('/sync', createStoreRouter({ adapter: createMemoryAdapter(), svcKeys: [KEY], rateLimit: false }));
    app.get('/health', (_req, res) => void res.json({ ok: true }));
    const srv = await listen(app);
    try {
      expect((await get(`${srv.url}/health`, {})).body).toEqual({ ok: true });
    } finally {
      await srv.close();
    }
  });
});

describe('framework-agnostic core', () => {
  it('serves from a plain node:http server through createStoreCore().handle', async () => {
    const core = createStoreCore({ adapter: createMemoryAdapter(structuredClone(catalog)), svcKeys: [KEY] });
    const srv = await listen(async (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
      const url = new URL(req.url!, 'http://localhost');
      const out = await core.handle('listOrders', { headers: req.headers, rawQuery: url.search });
      res.writeHead(out.status, out.headers).end(out.body);
    });
    try {
      const r = await get(`${srv.url}/anything?sortorder=asc&jobid=2&limit=3`);
      expect(r.body.paging).toMatchObject({ pageSize: 3, itemsTotal: 5 });
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect((await get(`${srv.url}/x?sortorder=asc&jobid=2`, {})).status).toBe(401);
      expect((await get(`${srv.url}/x?sortorder=sideways&jobid=2`)).status).toBe(400);
    } finally {
      await srv.close();
    }
  });
});

describe('options', () => {
  const adapter = createMemoryAdapter();
  const bad: Array<[string, Partial<StoreRouterOptions>]> = [
    ['adapter', { adapter: undefined }],
    ['adapter', { adapter: {} as never }],
    ['svcKeys', { svcKeys: [] }],
    ['svcKeys', { svcKeys: undefined }],
    ['svcKeys.1', { svcKeys: [KEY, 'has space'] }],
    ['svcKeys.0', { svcKeys: [''] }],
    ['svcKeys.0.expiresAt', { svcKeys: [{ key: KEY, expiresAt: 'someday' }] }],
    ['svcKeys.0.id', { svcKeys: [{ key: KEY, id: '' }] }],
    ['svcKeys.0.expires', { svcKeys: [{ key: KEY, expires: 5 } as never] }],
    ['pageSize', { pageSize: 0 }],
    ['pageSize', { pageSize: 2000, maxPageSize: 1000 }],
    ['maxPageSize', { maxPageSize: 1.5 }],
    ['maxPageBytes', { maxPageBytes: '10MB' as never }],
    ['maxPageBytes', { maxPageBytes: 100 }],
    ['timeBudgetMs', { timeBudgetMs: 61_000 }],
    ['cursorSecret', { cursorSecret: 'short' }],
    ['cursorSecret', { svcKeys: undefined, keyVerifier: { verify: () => ({ ok: false, reason: 'unknown' }) } }],
    ['keyVerifier', { keyVerifier: { verify: () => ({ ok: false, reason: 'unknown' }) } }],
    ['defaultPagination', { defaultPagination: 'pages' as never }],
    ['rateLimit', { rateLimit: true as never }],
    ['rateLimit.limit', { rateLimit: { limit: -5 } }],
    ['rateLimit.failedAuth', { rateLimit: { failedAuth: 3 as never } }],
    ['rateLimit.failedAuth.limit', { rateLimit: { failedAuth: { limit: 0 } } }],
    ['rateLimit.store', { rateLimit: { store: {} as never } }],
    ['listing', { listing: 'ids' as never }],
    ['keyHeaders', { keyHeaders: [] }],
    ['allowedOrderStatuses', { allowedOrderStatuses: [] }],
    ['now', { now: 5 as never }],
    ['logger', { logger: console.log as never }],
  ];
  it.each(bad)('a bad %s is an InvalidOptionError naming it', (option, patch) => {
    const make = () => parseRouterOptions({ adapter, svcKeys: [KEY], ...patch } as StoreRouterOptions);
    expect(make).toThrow(InvalidOptionError);
    expect(make).toThrow(`invalid option "${option}"`);
  });

  it('an error never repeats a key', () => {
    try {
      parseRouterOptions({ adapter, svcKeys: ['secret value with spaces'] });
      throw new Error('expected a throw');
    } catch (err) {
      expect((err as Error).message).not.toContain('secret');
    }
  });

  it('an unknown option is refused, with the closest known name (one policy with every factory)', () => {
    expect(() => parseRouterOptions({ adapter, svcKeys: [KEY], pageSzie: 50 } as StoreRouterOptions)).toThrow('invalid option "pageSzie": is not an option of createStoreRouter (did you mean "pageSize"?)');
    expect(() => parseRouterOptions({ adapter, svcKeys: [KEY], ratelimit: false } as StoreRouterOptions)).toThrow('(did you mean "rateLimit"?)');
    expect(() => parseRouterOptions({ adapter, svcKeys: [KEY], rateLimit: { failedAuth: { limt: 3 } } } as never)).toThrow('invalid option "rateLimit.failedAuth.limt"');
    expect(() => parseRouterOptions({ adapter, svcKeys: [KEY, { key: KEY, expires: '2030-01-01' }] } as never)).toThrow(
      'invalid option "svcKeys.1.expires": is not an option of createStoreRouter (did you mean "expiresAt"?)',
    );
  });

  it('undefined members count as absent (hosts pass their own optional settings through)', () => {
    expect(parseRouterOptions({ adapter, svcKeys: [KEY], pageSize: undefined, rateLimit: undefined, logger: undefined, listing: undefined })).toMatchObject({ pageSize: 20, listing: 'full', rateLimit: { limit: 1200 } });
  });

  it('defaults', () => {
    const c = parseRouterOptions({ adapter, svcKeys: [KEY] });
    expect(c).toMatchObject({ pageSize: 20, maxPageSize: 1000, maxPageBytes: 10_000_000, maxBodyBytes: 10_485_760, timeBudgetMs: 50_000, defaultPagination: 'offset' });
    expect([...c.allowedOrderStatuses!]).toEqual(['pending', 'paid', 'processing', 'shipped', 'delivered', 'cancelled', 'refunded']);
    expect(parseRouterOptions({ adapter, svcKeys: [KEY], allowedOrderStatuses: null }).allowedOrderStatuses).toBeNull();
  });
});
