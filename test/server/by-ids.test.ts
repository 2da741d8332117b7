/**
 * The batched by-ID read (`GET /products?ids=a,b,c`, an extension of this kit), on real servers on
 * loopback: items in the order asked, ids not found listed as missing, every malformed request a
 * 400 JSON `{error}` saying what is wrong, the same on every binding; stub list pages advertise it
 * (`Storebridge-By-Ids`), and a store without it (a deployed one) is never sent it by the caller.
 */
import fc from 'fast-check';
import { createMemoryAdapter } from '../../adapters/memory';
import { createStoreClient } from '../../lib/client';
import { StoreContractError } from '../../lib/client/client-errors';
import { BY_IDS_HEADER, MAX_BY_IDS, MAX_ID_LENGTH, type Product } from '../../lib/contract';
import { startFakeStore } from '../client/fake-store';
import { BINDINGS, KEY, get, startBinding, startStore } from './helpers';

const product = (_id: string, last_updated = 1): Product => ({ _id, last_updated, title: `P ${_id}` });
const idsQuery = (ids: readonly string[]) => `ids=${encodeURIComponent(ids.map((id) => encodeURIComponent(id)).join(','))}`;

function catalog() {
  return createMemoryAdapter({ products: ['p1', 'p2', 'p3', 'a,b', 'x y%', 'ü/é'].map((id, i) => product(id, i + 1)), orders: [{ _id: 'o1', last_updated: 1 }] });
}

describe.each(BINDINGS)('on %s', (binding) => {
  let store: Awaited<ReturnType<typeof startBinding>>;
  beforeAll(async () => {
    store = await startBinding(binding, { adapter: catalog(), listing: 'stubs' });
  });
  afterAll(() => store.close());

  test('answers the items found in the order asked, and the ids not found as missing', async () => {
    const r = await get(`${store.base}/products?${idsQuery(['p3', 'nope', 'p1', 'a,b', 'x y%', 'ü/é', 'gone'])}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.products.map((p: Product) => p._id)).toEqual(['p3', 'p1', 'a,b', 'x y%', 'ü/é']);
    expect(r.body.products[0]).toEqual(product('p3', 3));
    expect(r.body.missing).toEqual(['nope', 'gone']);
    const orders = await get(`${store.base}/orders?ids=o1,o2`);
    expect(orders.body).toEqual({ orders: [{ _id: 'o1', last_updated: 1 }], missing: ['o2'] });
  });

  test('a stub list page advertises the batch size', async () => {
    const r = await get(`${store.base}/products`);
    expect(r.status).toBe(200);
    expect(r.headers.get(BY_IDS_HEADER)).toBe(String(MAX_BY_IDS));
  });

  test.each([
    ['more than the limit', Array.from({ length: MAX_BY_IDS + 1 }, (_, i) => `p${i}`).join(','), /at most 100 ids, got 101/],
    ['an empty list', '', /ids must not be empty/],
    ['an empty id', 'p1,,p2', /empty id \(id 2 of 3\)/],
    ['a trailing comma', 'p1,', /empty id \(id 2 of 2\)/],
    ['a repeated id', 'p1,p2,p1', /must not repeat an id: "p1" is given twice/],
    ['an id too long', `p1,${'x'.repeat(MAX_ID_LENGTH + 1)}`, /id 2 \(.*\) must be at most 256 characters/],
    ['a control character', `p1,${encodeURIComponent('a\u0000b')}`, /id 2 .*must not contain control characters/],
    ['bad percent-encoding', 'p1,a%zz', /id 2 is not valid percent-encoding/],
  ])('refuses %s with 400 {error}', async (_what, value, message) => {
    const r = await get(`${store.base}/products?ids=${encodeURIComponent(value)}`);
    expect(r.status).toBe(400);
    expect(Object.keys(r.body)).toEqual(['error']);
    expect(r.body.error).toMatch(message);
    expect(r.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });

  test('refuses ids together with id, and ids given twice', async () => {
    const both = await get(`${store.base}/products?id=p1&ids=p2`);
    expect(both.status).toBe(400);
    expect(both.body.error).toMatch(/either id .* or ids/);
    const twice = await get(`${store.base}/products?ids=p1&ids=p2`);
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatch(/ids must be given once/);
  });

  test('exactly the limit is served', async () => {
    const ids = Array.from({ length: MAX_BY_IDS }, (_, i) => `p${i}`);
    const r = await get(`${store.base}/products?${idsQuery(ids)}`);
    expect(r.status).toBe(200);
    expect(r.body.products.map((p: Product) => p._id)).toEqual(['p1', 'p2', 'p3']);
    expect(r.body.missing).toHaveLength(MAX_BY_IDS - 3);
  });

  test('needs the key like every read', async () => {
    const r = await get(`${store.base}/products?ids=p1`, {});
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(/missing/);
  });
});

test('a full list page does not advertise it (the stub re-sync is what needs it), but the read is served', async () => {
  const store = await startStore({ adapter: catalog() });
  try {
    const page = await get(`${store.base}/products`);
    expect(page.headers.get(BY_IDS_HEADER)).toBeNull();
    const r = await get(`${store.base}/products?ids=p2`);
    expect(r.body).toEqual({ products: [product('p2', 2)], missing: [] });
  } finally {
    await store.close();
  }
});

test('any ids, asked in any order, come back in that order with the rest missing (property)', async () => {
  const adapter = createMemoryAdapter({ products: Array.from({ length: 30 }, (_, i) => product(`k${i}`, i)) });
  const store = await startStore({ adapter, listing: 'stubs' });
  const client = createStoreClient({ urls: { listProducts: `${store.base}/products` }, svcKey: KEY, retry: 0 });
  try {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 0, max: 59 }), { minLength: 1, maxLength: MAX_BY_IDS }), async (ns) => {
        const ids = ns.map((n) => `k${n}`);
        const read = await client.readByIds('products', ids);
        expect(read.items.map((p) => p._id)).toEqual(ids.filter((_, i) => ns[i] < 30));
        expect(read.missing).toEqual(ids.filter((_, i) => ns[i] >= 30));
        expect(read.unanswered).toEqual([]);
      }),
      { numRuns: 40 },
    );
  } finally {
    await store.close();
  }
});

test('an answer that would cross the page budget leaves items out of both lists; the caller reads those again', async () => {
  const big = (id: string): Product => ({ _id: id, last_updated: 1, title: 't'.repeat(400) });
  const store = await startStore({ adapter: createMemoryAdapter({ products: ['b1', 'b2', 'b3'].map(big) }), maxPageBytes: 1_000 });
  const client = createStoreClient({ baseUrl: store.base, svcKey: KEY, retry: 0 });
  try {
    const r = await get(`${store.base}/products?ids=b1,b2,b3,b4`);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(1_000);
    expect(r.body.products.map((p: Product) => p._id)).toEqual(['b1', 'b2']);
    expect(r.body.missing).toEqual(['b4']);
    const read = await client.readByIds('products', ['b1', 'b2', 'b3', 'b4']);
    expect(read.items.map((p) => p._id)).toEqual(['b1', 'b2']);
    expect(read.missing).toEqual(['b4']);
    expect(read.unanswered).toEqual(['b3']);
  } finally {
    await store.close();
  }
});

test('a store without the feature: no header on its pages, and a batched read it answers with a list page is refused by the caller', async () => {
  const store = await startFakeStore({ products: [product('p1'), product('p2')], key: KEY, listing: 'stubs' });
  const client = createStoreClient({ urls: { listProducts: `${store.url}/products` }, svcKey: KEY, retry: 0 });
  try {
    const page = await client.list('products', { sortorder: 'asc', jobid: 1 });
    expect(page.byIds).toBeUndefined();
    const err = await client.readByIds('products', ['p1', 'p2']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreContractError);
    expect((err as StoreContractError).message).toMatch(/answered a list page/);
  } finally {
    await store.close();
  }
});

test('the caller reads the advertised size from a kit store page, and refuses more ids than the limit before sending', async () => {
  const store = await startStore({ adapter: catalog(), listing: 'stubs' });
  const client = createStoreClient({ baseUrl: store.base, svcKey: KEY, retry: 0 });
  try {
    expect((await client.list('products', { sortorder: 'asc', jobid: 1 })).byIds).toBe(MAX_BY_IDS);
    const before = client.stats.requests;
    await expect(client.readByIds('products', Array.from({ length: MAX_BY_IDS + 1 }, (_, i) => `p${i}`))).rejects.toThrow(/at most 100 ids/);
    expect(client.stats.requests).toBe(before);
    expect(await client.readByIds('products', [])).toEqual({ items: [], missing: [], unanswered: [], normalisations: {} });
    expect(client.stats.requests).toBe(before);
  } finally {
    await store.close();
  }
});
