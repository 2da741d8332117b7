/**
 * The three bindings (Express 5 and 4, node:http, Fetch) answer alike: the same scenario runs
 * through each, on real loopback servers, and every answer must be the same status and body.
 * Rate limits are on by default in every one of them.
 */
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createStoreFetchHandler } from '../../lib/server';
import { BINDINGS, KEY, get, post, spyAdapter, startBinding, type BindingKind } from './helpers';

const catalog = demoCatalog(30);

/** One request of the scenario: what it sends and what it must answer. */
interface Step {
  readonly name: string;
  readonly method?: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Uint8Array;
}

const json = { SvcKey: KEY, 'content-type': 'application/json' };
let nested: unknown = {};
for (let i = 0; i < 100; i++) nested = { x: nested };
const p0 = catalog.products[0];
const o0 = catalog.orders[0];

const SCENARIO: Step[] = [
  { name: 'list products', path: '/products?sortorder=asc&jobid=1&limit=3' },
  { name: 'list orders, no sortorder, no jobid (deployed)', path: '/orders?limit=2' },
  { name: 'list with C2SKey', path: '/products?offset=3&limit=2', headers: { C2SKey: KEY } },
  { name: 'read one on the list URL (bare)', path: `/products?id=${p0._id}` },
  { name: 'read one order on the list URL (bare)', path: `/orders?id=${o0._id}`, headers: { C2SKey: KEY } },
  { name: 'read one on the list URL, unknown', path: '/products?id=nope' },
  { name: 'by id', path: `/products/${p0._id}` },
  { name: 'by id, unknown', path: '/orders/nope' },
  { name: 'by id with a NUL', path: '/products/a%00b' },
  { name: 'by id, malformed percent-encoding', path: '/products/%E0%A4%A' },
  { name: 'bad sortorder', path: '/products?sortorder=up' },
  { name: 'offset and next', path: '/products?offset=0&next=abc' },
  { name: 'no key', path: '/products', headers: {} },
  { name: 'two different keys', path: '/products', headers: { SvcKey: KEY, C2SKey: 'other' } },
  { name: 'key in Authorization', path: '/products', headers: { Authorization: `Bearer ${KEY}` } },
  { name: 'unknown route', path: '/elsewhere' },
  { name: 'wrong method', method: 'DELETE', path: '/products' },
  { name: 'update', method: 'POST', path: `/products?jobid=2&id=${p0._id}`, headers: json, body: JSON.stringify({ ...p0, title: 'Renamed', last_updated: undefined }) },
  { name: 'update without jobid, id from the body', method: 'POST', path: '/orders', headers: json, body: JSON.stringify({ ...o0, status: 'shipped' }) },
  { name: 'refused write', method: 'POST', path: '/orders?id=o-x', headers: json, body: JSON.stringify({ orderItems: [{ id: '', quantity: 0 }] }) },
  { name: 'not JSON', method: 'POST', path: '/products?id=x', headers: json, body: '{"_id":' },
  { name: 'nested 100 deep', method: 'POST', path: '/products?id=x', headers: json, body: JSON.stringify({ title: 't', deep: nested }) },
  { name: 'not declared JSON', method: 'POST', path: '/products?id=x', headers: { SvcKey: KEY, 'content-type': 'text/plain' }, body: '{}' },
  { name: 'over the body limit', method: 'POST', path: '/products?id=x', headers: json, body: JSON.stringify({ title: 'x'.repeat(5000) }) },
];

async function run(base: string, step: Step) {
  const res = await fetch(base + step.path, { method: step.method ?? 'GET', headers: step.headers ?? { SvcKey: KEY }, body: step.body });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as unknown, type: res.headers.get('content-type'), allow: res.headers.get('allow'), close: res.headers.get('connection') };
}

describe('every binding answers the same scenario the same way', () => {
  const answers = new Map<BindingKind, unknown[]>();

  it.each(BINDINGS)('%s', async (kind) => {
    const s = await startBinding(kind, { adapter: createMemoryAdapter(structuredClone(catalog)), maxBodyBytes: 4000, now: () => 1_900_000_000_000 });
    try {
      const out = [];
      for (const step of SCENARIO) {
        const r = await run(s.base, step);
        expect(r.type).toBe('application/json; charset=utf-8');
        out.push({ step: step.name, ...r, close: r.status === 413 || r.status === 415 ? r.close : null });
      }
      answers.set(kind, out);
    } finally {
      await s.close();
    }
  });

  it('the answers are identical, and what the scenario expects', () => {
    const first = answers.get('node:http') as Array<{ step: string; status: number; body: any; allow: string | null; close: string | null }>;
    for (const kind of BINDINGS) expect({ kind, answers: answers.get(kind) }).toEqual({ kind, answers: first });
    const by = Object.fromEntries(first.map((a) => [a.step, a]));
    expect(by['list products'].body.products).toHaveLength(3);
    expect(by['list orders, no sortorder, no jobid (deployed)'].body.paging).toMatchObject({ pageSize: 2, offset: 0 });
    expect(by['read one on the list URL (bare)'].body).toEqual(p0);
    expect(by['read one order on the list URL (bare)'].body).toEqual(o0);
    expect(by['read one on the list URL, unknown']).toMatchObject({ status: 404, body: { error: 'no product with _id "nope"' } });
    expect(by['by id'].body).toEqual({ product: p0 });
    expect(by['by id with a NUL']).toMatchObject({ status: 400, body: { error: 'the product id in the path must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)' } });
    expect(by['by id, malformed percent-encoding'].status).toBe(400);
    expect(by['bad sortorder'].status).toBe(400);
    expect(by['offset and next'].status).toBe(400);
    expect(by['no key'].status).toBe(401);
    expect(by['two different keys']).toMatchObject({ status: 401, body: { error: expect.stringMatching(/different keys/) } });
    expect(by['key in Authorization'].body.error).toMatch(/Authorization header is not accepted/);
    expect(by['unknown route'].status).toBe(404);
    expect(by['wrong method']).toMatchObject({ status: 405, allow: 'GET, HEAD, POST' });
    expect(by.update.body).toMatchObject({ success: true, code: 200, product: { title: 'Renamed', last_updated: 1_900_000_000_000 } });
    expect(by['update without jobid, id from the body'].body).toMatchObject({ success: true, order: { _id: o0._id, status: 'shipped' } });
    expect(by['refused write'].body).toMatchObject({ success: false, code: 400, reasons: [{ msg: 'orderItems.0.id: SKU is blank', message: 'orderItems.0.id: SKU is blank', code: 400 }, { code: 400 }] });
    expect(by['not JSON'].body).toMatchObject({ success: false, reasons: [{ msg: expect.stringMatching(/^the body is not valid JSON/) }] });
    expect(by['nested 100 deep']).toMatchObject({ status: 400, body: { success: false, reasons: [{ msg: 'the body is nested more than 64 levels deep' }] } });
    expect(by['not declared JSON']).toMatchObject({ status: 415, close: 'close' });
    expect(by['over the body limit']).toMatchObject({ status: 413, body: { error: 'request body is larger than 4000 bytes' }, close: 'close' });
  });
});

describe('rate limits are on by default in every binding', () => {
  it.each(BINDINGS)('%s: the per-key limit and its headers; the failed-key limit never refuses a good key', async (kind) => {
    const s = await startBinding(kind, { adapter: createMemoryAdapter(), rateLimit: undefined });
    try {
      const r = await get(`${s.base}/products`);
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-policy')).toBe('1200;w=60');
      expect(r.headers.get('ratelimit')).toMatch(/^limit=1200, remaining=1199, reset=\d+$/);
    } finally {
      await s.close();
    }
    const small = await startBinding(kind, { adapter: createMemoryAdapter(), rateLimit: { limit: 2, failedAuth: { limit: 1 } } });
    try {
      expect((await get(`${small.base}/products`, { SvcKey: 'bad' })).status).toBe(401);
      expect((await get(`${small.base}/products`, { SvcKey: 'bad' })).status).toBe(429);
      expect((await get(`${small.base}/products`)).status).toBe(200);
      expect((await get(`${small.base}/products`, { C2SKey: KEY })).status).toBe(200);
      const over = await get(`${small.base}/products`);
      expect(over.status).toBe(429);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });
});

describe('the Fetch binding in process (no server): Request in, Response out', () => {
  it('routes under basePath, reads a streamed body, answers HEAD without a body', async () => {
    const spy = spyAdapter(createMemoryAdapter(structuredClone(catalog)));
    const handler = createStoreFetchHandler({ adapter: spy, svcKeys: [KEY], rateLimit: false }, { basePath: '/api/store/' });
    const list = await handler(new Request('https://shop.example/api/store/products?limit=2', { headers: { C2SKey: KEY } }));
    expect(list.status).toBe(200);
    expect(((await list.json()) as { products: unknown[] }).products).toHaveLength(2);
    const head = await handler(new Request('https://shop.example/api/store/products', { method: 'HEAD', headers: { SvcKey: KEY } }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const outside = await handler(new Request('https://shop.example/products', { headers: { SvcKey: KEY } }));
    expect(outside.status).toBe(404);
    const created = await handler(
      new Request('https://shop.example/api/store/products', {
        method: 'POST',
        headers: { C2SKey: KEY, 'content-type': 'application/json' },
        body: new Blob([JSON.stringify({ title: 'Streamed', sku: 'STREAM-1' })]).stream(),
        duplex: 'half',
      } as RequestInit),
    );
    const body = (await created.json()) as { success: boolean; product: { _id: string; title: string } };
    expect(body).toMatchObject({ success: true, product: { title: 'Streamed' } });
    expect(body.product._id).toMatch(/^product-[0-9a-f-]{36}$/);
    const read = await handler(new Request(`https://shop.example/api/store/products?id=${body.product._id}`, { headers: { SvcKey: KEY } }));
    expect(await read.json()).toMatchObject({ _id: body.product._id, title: 'Streamed' });
    // A NUL never reaches the adapter.
    spy.calls.splice(0);
    expect((await handler(new Request('https://shop.example/api/store/orders/x%00', { headers: { SvcKey: KEY } }))).status).toBe(400);
    expect((await handler(new Request('https://shop.example/api/store/orders?id=x%00', { headers: { SvcKey: KEY } }))).status).toBe(400);
    expect(spy.calls).toEqual([]);
  });

  it('the same write through post(): a created order names real products', async () => {
    const s = await startBinding('fetch', { adapter: createMemoryAdapter(structuredClone(catalog)) });
    try {
      const r = await post(`${s.base}/orders`, { status: 'paid', orderItems: [{ id: catalog.products[1].sku, quantity: 1 }] }, { C2SKey: KEY, 'content-type': 'application/json' });
      expect(r.body).toMatchObject({ success: true, order: { _id: expect.stringMatching(/^order-/), status: 'paid' } });
    } finally {
      await s.close();
    }
  });
});
