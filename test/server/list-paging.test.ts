/**
 * The list webhooks over loopback HTTP: every paging and parameter rule of the spec's webhook
 * section and the wire decisions of docs/wire-decisions.md.
 */
import { compareKeys, keyOf } from '../../lib/adapter';
import { OrderListResponseSchema, ProductListResponseSchema } from '../../lib/contract';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { CursorCodec } from '../../lib/server/cursor';
import { KEY, get, startStore } from './helpers';

const catalog = demoCatalog(137);
const ascIds = [...catalog.products].sort((a, b) => compareKeys(keyOf(a), keyOf(b))).map((p) => p._id);
const ascOrderIds = [...catalog.orders].sort((a, b) => compareKeys(keyOf(a), keyOf(b))).map((o) => o._id);

let store: Awaited<ReturnType<typeof startStore>>;
let cursorStore: Awaited<ReturnType<typeof startStore>>;
beforeAll(async () => {
  store = await startStore({ adapter: createMemoryAdapter(structuredClone(catalog)) });
  cursorStore = await startStore({ adapter: createMemoryAdapter(structuredClone(catalog)), defaultPagination: 'cursor' });
});
afterAll(async () => {
  await store.close();
  await cursorStore.close();
});

const products = (query: string) => get(`${store.base}/products?${query}`);

describe('offset paging', () => {
  it('with neither offset nor next starts at offset 0 and answers paging {pageSize, itemsTotal, offset, next}', async () => {
    const r = await products('sortorder=asc&jobid=1');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = ProductListResponseSchema.parse(r.body);
    expect(Object.keys(body.paging)).toEqual(['pageSize', 'itemsTotal', 'offset', 'next']);
    expect(body.paging).toMatchObject({ pageSize: 20, itemsTotal: 137, offset: 0 });
    expect(body.products.map((p) => p._id)).toEqual(ascIds.slice(0, 20));
  });

  it('returns the items from offset to offset + page size and echoes offset', async () => {
    const r = await products('sortorder=asc&jobid=1&offset=40');
    expect(r.body.paging).toMatchObject({ pageSize: 20, itemsTotal: 137, offset: 40 });
    expect(r.body.products.map((p: { _id: string }) => p._id)).toEqual(ascIds.slice(40, 60));
  });

  it('answers items in full webhook form, identical to what the adapter stores', async () => {
    const r = await products('sortorder=asc&jobid=1&offset=3&limit=1');
    const expected = catalog.products.find((p) => p._id === ascIds[3]);
    expect(r.body.products[0]).toEqual(expected);
  });

  it('leaves next out on the last page, and an offset past the end is an empty page', async () => {
    const last = await products('sortorder=asc&jobid=1&offset=120');
    expect(last.body.paging).toEqual({ pageSize: 17, itemsTotal: 137, offset: 120 });
    const past = await products('sortorder=asc&jobid=1&offset=500');
    expect(past.body).toEqual({ paging: { pageSize: 0, itemsTotal: 137, offset: 500 }, products: [] });
  });

  it('a page ending exactly at the last item has no next', async () => {
    const r = await products('sortorder=asc&jobid=1&offset=117');
    expect(r.body.paging).toEqual({ pageSize: 20, itemsTotal: 137, offset: 117 });
  });

  it('walking offset += pageSize visits every item once, in order, for both sort orders', async () => {
    for (const sortorder of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let offset = 0;
      for (;;) {
        const r = await products(`sortorder=${sortorder}&jobid=1&offset=${offset}`);
        seen.push(...r.body.products.map((p: { _id: string }) => p._id));
        if (!r.body.paging.next) break;
        offset += r.body.paging.pageSize;
      }
      expect(seen).toEqual(sortorder === 'asc' ? ascIds : [...ascIds].reverse());
    }
  });

  it('next of an offset page is a cursor: a caller may switch to cursor paging mid-walk', async () => {
    const first = await products('sortorder=asc&jobid=1&offset=20');
    const second = await products(`sortorder=asc&jobid=1&next=${first.body.paging.next}`);
    expect(second.body.products.map((p: { _id: string }) => p._id)).toEqual(ascIds.slice(40, 60));
    expect(second.body.paging.offset).toBeUndefined();
  });
});

describe('cursor paging', () => {
  it('answers paging {pageSize, itemsTotal, next} and following next visits every item once (asc and desc)', async () => {
    for (const sortorder of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let r = await products(`sortorder=${sortorder}&jobid=1`);
      seen.push(...r.body.products.map((p: { _id: string }) => p._id));
      while (r.body.paging.next) {
        r = await products(`sortorder=${sortorder}&jobid=1&next=${encodeURIComponent(r.body.paging.next)}`);
        expect(Object.keys(r.body.paging)).toEqual(r.body.paging.next ? ['pageSize', 'itemsTotal', 'next'] : ['pageSize', 'itemsTotal']);
        expect(r.body.paging.itemsTotal).toBe(137);
        seen.push(...r.body.products.map((p: { _id: string }) => p._id));
      }
      expect(seen).toEqual(sortorder === 'asc' ? ascIds : [...ascIds].reverse());
    }
  });

  it('cursors are URL-safe Base64 (no escaping needed)', async () => {
    const r = await products('sortorder=desc&jobid=1');
    expect(r.body.paging.next).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('orders page the same way', async () => {
    const seen: string[] = [];
    let r = await get(`${store.base}/orders?sortorder=asc&jobid=5`);
    OrderListResponseSchema.parse(r.body);
    seen.push(...r.body.orders.map((o: { _id: string }) => o._id));
    while (r.body.paging.next) {
      r = await get(`${store.base}/orders?sortorder=asc&jobid=5&next=${r.body.paging.next}`);
      seen.push(...r.body.orders.map((o: { _id: string }) => o._id));
    }
    expect(seen).toEqual(ascOrderIds);
  });

  it('defaultPagination "cursor" answers a first request without offset in paging', async () => {
    const r = await get(`${cursorStore.base}/products?sortorder=asc&jobid=1`);
    expect(Object.keys(r.body.paging)).toEqual(['pageSize', 'itemsTotal', 'next']);
    const byOffset = await get(`${cursorStore.base}/products?sortorder=asc&jobid=1&offset=0`);
    expect(byOffset.body.paging.offset).toBe(0);
  });

  it('replicas configured with the same keys accept each other\'s cursors', async () => {
    const first = await get(`${store.base}/products?sortorder=asc&jobid=1`);
    const other = await get(`${cursorStore.base}/products?sortorder=asc&jobid=1&next=${first.body.paging.next}`);
    expect(other.status).toBe(200);
    expect(other.body.products[0]._id).toBe(ascIds[20]);
  });
});

describe('limit (extension)', () => {
  it('sets the page size, capped by maxPageSize', async () => {
    expect((await products('sortorder=asc&jobid=1&limit=7')).body.paging.pageSize).toBe(7);
    const small = await startStore({ adapter: createMemoryAdapter(structuredClone(catalog)), maxPageSize: 50 });
    try {
      expect((await get(`${small.base}/products?sortorder=asc&jobid=1&limit=1000`)).body.paging.pageSize).toBe(50);
    } finally {
      await small.close();
    }
  });

  it.each(['0', '-1', 'x', '1.5', ''])('limit=%p is a 400', async (v) => {
    const r = await products(`sortorder=asc&jobid=1&limit=${v}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^limit must be a positive integer/);
  });
});

describe('parameter validation (400 with a message saying what is wrong)', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['sortorder wrong', 'sortorder=up&jobid=1', /^sortorder must be asc or desc, got "up"/],
    ['sortorder wrong case', 'sortorder=ASC&jobid=1', /^sortorder must be asc or desc/],
    ['jobid not an integer', 'sortorder=asc&jobid=abc', /^jobid must be an integer, got "abc"/],
    ['jobid fractional', 'sortorder=asc&jobid=1.5', /^jobid must be an integer/],
    ['jobid empty', 'sortorder=asc&jobid=', /^jobid must be an integer/],
    ['jobid beyond safe integers', 'sortorder=asc&jobid=99999999999999999', /^jobid must be an integer/],
    ['offset negative', 'sortorder=asc&jobid=1&offset=-1', /^offset must be a non-negative integer, got "-1"/],
    ['offset not a number', 'sortorder=asc&jobid=1&offset=ten', /^offset must be a non-negative integer/],
    ['offset empty', 'sortorder=asc&jobid=1&offset=', /^offset must be a non-negative integer/],
    ['offset and next together', 'sortorder=asc&jobid=1&offset=0&next=abc', /^give either offset .* or next .*, not both/],
    ['repeated sortorder', 'sortorder=asc&sortorder=asc&jobid=1', /^sortorder must be given once, got 2 values/],
    ['repeated jobid', 'sortorder=asc&jobid=1&jobid=2', /^jobid must be given once/],
    ['repeated offset', 'sortorder=asc&jobid=1&offset=0&offset=20', /^offset must be given once/],
    ['bracket syntax is not nesting', 'sortorder[a]=asc&sortorder=up&jobid=1', /^sortorder must be asc or desc, got "up"/],
    ['id empty', 'id=', /^id must not be empty/],
    ['id with a NUL', 'id=a%00b', /^id must not contain control characters/],
    ['id over 256 characters', `id=${'x'.repeat(257)}`, /^id must be at most 256 characters/],
    ['repeated id', 'id=a&id=b', /^id must be given once/],
    ['empty next', 'sortorder=asc&jobid=1&next=', /^next must not be empty/],
  ];
  it.each(cases)('%s', async (_name, query, message) => {
    const r = await products(query);
    expect(r.status).toBe(400);
    expect(Object.keys(r.body)).toEqual(['error']);
    expect(r.body.error).toMatch(message);
  });

  it('accepts a negative jobid (any integer) and ignores unknown parameters', async () => {
    expect((await products('sortorder=asc&jobid=-3')).status).toBe(200);
    expect((await products('sortorder=asc&jobid=1&foo=bar&foo=baz&utm_source=x')).status).toBe(200);
  });

  it('lenient as deployed callers need: no sortorder means asc, no jobid is served (untracked), no parameter at all is the first page', async () => {
    const asc = await products('sortorder=asc&jobid=1&limit=5');
    for (const query of ['jobid=1&limit=5', 'sortorder=asc&limit=5', 'limit=5', 'offset=0&limit=5']) {
      const r = await products(query);
      expect({ query, status: r.status }).toEqual({ query, status: 200 });
      expect(r.body.products).toEqual(asc.body.products);
      expect(r.body.paging).toMatchObject({ pageSize: 5, offset: 0 });
    }
    // A cursor walk without sortorder continues in asc (the cursor was issued for asc).
    const next = (await products('limit=5')).body.paging.next;
    const page2 = await products(`next=${encodeURIComponent(next)}&limit=5`);
    expect(page2.body.products).toEqual((await products('sortorder=asc&jobid=1&offset=5&limit=5')).body.products);
    expect((await products(`sortorder=desc&next=${encodeURIComponent(next)}`)).body.error).toMatch(/issued for sortorder=asc/);
  });
});

describe('cursor validation (400)', () => {
  const codec = new CursorCodec(Buffer.from('a different secret, not this store'));
  let good: string;
  beforeAll(async () => {
    good = (await products('sortorder=asc&jobid=1')).body.paging.next;
  });

  const expectCursor400 = async (query: string, message: RegExp) => {
    const r = await products(query);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^invalid next cursor: /);
    expect(r.body.error).toMatch(message);
  };

  it('malformed: not Base64url', () => expectCursor400('sortorder=asc&jobid=1&next=%21%21%21', /not URL-safe Base64/));
  it('malformed: too short', () => expectCursor400('sortorder=asc&jobid=1&next=abc', /not a cursor issued by this store/));
  it('tampered: one character changed', async () => {
    const i = good.length - 3;
    const flipped = good.slice(0, i) + (good[i] === 'A' ? 'B' : 'A') + good.slice(i + 1);
    await expectCursor400(`sortorder=asc&jobid=1&next=${flipped}`, /altered|issued by this store/);
  });
  it('tampered: payload re-encoded with another position but the old MAC', async () => {
    const raw = Buffer.from(good, 'base64url');
    const forged = Buffer.concat([raw.subarray(0, 16), Buffer.from(JSON.stringify([1, 'p', 'a', 0, 'prod-000001']))]).toString('base64url');
    await expectCursor400(`sortorder=asc&jobid=1&next=${forged}`, /altered/);
  });
  it('foreign: issued by another store (another secret)', () => {
    const foreign = codec.encode({ entity: 'products', sortorder: 'asc', after: { last_updated: 1, _id: 'prod-000001' } });
    return expectCursor400(`sortorder=asc&jobid=1&next=${foreign}`, /not a cursor issued by this store/);
  });
  it('wrong sort order', () => expectCursor400(`sortorder=desc&jobid=1&next=${good}`, /issued for sortorder=asc/));
  it('wrong entity', async () => {
    const r = await get(`${store.base}/orders?sortorder=asc&jobid=1&next=${good}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/issued by the products list/);
  });
  it('overlong', () => expectCursor400(`sortorder=asc&jobid=1&next=${'A'.repeat(2000)}`, /longer than 1024/));
  it('repeated next', async () => {
    const r = await products(`sortorder=asc&jobid=1&next=${good}&next=${good}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^next must be given once/);
  });
});

describe('by ID', () => {
  it('200 {product} / 200 {order}', async () => {
    const p = await get(`${store.base}/products/${ascIds[5]}`);
    expect(p.status).toBe(200);
    expect(p.body).toEqual({ product: catalog.products.find((x) => x._id === ascIds[5]) });
    const o = await get(`${store.base}/orders/${ascOrderIds[2]}`);
    expect(o.body).toEqual({ order: catalog.orders.find((x) => x._id === ascOrderIds[2]) });
  });

  it('unknown id is 404 {error}', async () => {
    const r = await get(`${store.base}/products/no-such-product`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'no product with _id "no-such-product"' });
    expect((await get(`${store.base}/orders/nope`)).status).toBe(404);
  });

  it('ids are URL-decoded; malformed percent-encoding is a 400', async () => {
    const memory = createMemoryAdapter({ products: [{ _id: 'a b/c', last_updated: 1 }] });
    const s = await startStore({ adapter: memory });
    try {
      expect((await get(`${s.base}/products/a%20b%2Fc`)).body.product._id).toBe('a b/c');
      const bad = await get(`${s.base}/products/%E0%A4%A`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/percent-encoding/);
    } finally {
      await s.close();
    }
  });

  it('an id longer than any stored _id can be is a 400', async () => {
    const r = await get(`${store.base}/products/${'x'.repeat(300)}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/at most 256 characters/);
  });
});

describe('routes', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/nope'],
    ['GET', '/products/a/b'],
  ])('%s %s under the router is 404 JSON', async (method, path) => {
    const res = await fetch(`${store.base}${path}`, { method, headers: { SvcKey: KEY } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toMatch(/^no route .* this store serves GET \/products/);
  });

  it.each([
    ['DELETE', '/products', 'GET, HEAD, POST'],
    ['PUT', '/orders/x', 'GET, HEAD'],
    ['POST', '/products/x', 'GET, HEAD'],
    ['PATCH', '/orders', 'GET, HEAD, POST'],
  ])('%s %s, a route served with other methods, is 405 JSON with Allow', async (method, path, allow) => {
    const res = await fetch(`${store.base}${path}`, { method, headers: { SvcKey: KEY } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(((await res.json()) as { error: string }).error).toMatch(new RegExp(`^${method} is not served at ${path}; use `));
  });

  it('HEAD on a list answers the headers only', async () => {
    const res = await fetch(`${store.base}/products?sortorder=asc&jobid=1`, { method: 'HEAD', headers: { SvcKey: KEY } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('Content-Length is the exact UTF-8 byte count, multibyte text included', async () => {
    const s = await startStore({ adapter: createMemoryAdapter({ products: [{ _id: 'é-1', title: 'Café ☕ 𠮷', last_updated: 5 }, { _id: '𠮷-2', title: 'ß', last_updated: 6 }] }) });
    try {
      for (const path of ['/products', '/products?id=%C3%A9-1', '/products/%F0%A0%AE%B7-2']) {
        const res = await fetch(`${s.base}${path}`, { headers: { SvcKey: KEY } });
        const bytes = Buffer.from(await res.arrayBuffer());
        expect({ path, length: Number(res.headers.get('content-length')) }).toEqual({ path, length: bytes.length });
        expect(JSON.parse(bytes.toString('utf8'))).toBeTruthy();
      }
    } finally {
      await s.close();
    }
  });

  it('responses are not cacheable and not sniffable', async () => {
    const r = await products('sortorder=asc&jobid=1');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
