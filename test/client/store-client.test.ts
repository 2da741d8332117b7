import fc from 'fast-check';
import { createStoreClient, type StoreClientOptions } from '../../lib/client';
import {
  StoreAuthError,
  StoreBadRequestError,
  StoreNetworkError,
  StoreNotFoundError,
  StorePagingError,
  StoreResponseTooLargeError,
  StoreServerError,
  StoreTimeoutError,
  StoreContractError,
} from '../../lib/client/client-errors';
import { demoOrder, demoProduct } from '../../lib/demo';
import { compareKeys, keyOf } from '../../lib/adapter';
import type { Product } from '../../lib/contract/webhook';
import { encodeCursor, startFakeStore, type FakeStore, type FakeStoreOptions } from './fake-store';

const KEY = 'sk_test_5f1d2c-secret';
const products = Array.from({ length: 95 }, (_, i) => demoProduct(i));
const sortedIds = [...products].sort((a, b) => compareKeys(keyOf(a), keyOf(b))).map((p) => p._id);

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

let store: FakeStore | undefined;
afterEach(async () => {
  if (store) {
    expect(await store.openSockets()).toBe(0);
    await store.close();
    store = undefined;
  }
});

async function setup(opts: FakeStoreOptions = {}, client: Partial<StoreClientOptions> = {}) {
  store = await startFakeStore({ products, key: KEY, ...opts });
  return createStoreClient({ baseUrl: store.url, svcKey: KEY, retry: { limit: 3, delay: () => 1 }, ...client });
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('whole-catalog walk', () => {
  test('offset store: every item once, in order, ending on the short last page', async () => {
    const client = await setup();
    const walk = client.walk('products', { jobid: 1 });
    const items = await collect(walk);
    expect(items.map((p) => p._id)).toEqual(sortedIds);
    expect(walk.summary).toMatchObject({ pages: 5, items: 95, duplicates: 0, anomalies: [], complete: true, itemsTotal: 95 });
    expect(client.stats).toEqual({ requests: 5, retries: 0 });
    expect(store!.requests.map((u) => u.searchParams.get('offset'))).toEqual(['0', '20', '40', '60', '80']);
    expect(store!.requests.every((u) => u.searchParams.get('jobid') === '1' && !u.searchParams.has('limit'))).toBe(true);
  });

  test('a full last page at itemsTotal is confirmed by one more request', async () => {
    const client = await setup({ products: products.slice(0, 40) });
    const items = await collect(client.walk('products', { jobid: 1, strategy: 'offset' }));
    expect(items).toHaveLength(40);
    expect(store!.requests.map((u) => u.searchParams.get('offset'))).toEqual(['0', '20', '40']);
  });

  test('cursor store: auto follows next; desc is the reverse of asc', async () => {
    const client = await setup({ pagination: 'cursor' });
    const asc = await collect(client.walk('products', { jobid: 2 }));
    const desc = await collect(client.walk('products', { jobid: 2, sortorder: 'desc' }));
    expect(asc.map((p) => p._id)).toEqual(sortedIds);
    expect(desc.map((p) => p._id)).toEqual([...sortedIds].reverse());
    expect(store!.requests.filter((u) => u.searchParams.has('next'))).toHaveLength(8);
  });

  test('pageSize is sent as limit; parallel offset mode yields the same items', async () => {
    const client = await setup({}, { pageSize: 10 });
    const walk = client.walk('products', { jobid: 3, strategy: 'offset', concurrency: 4 });
    const items = await collect(walk);
    expect(items.map((p) => p._id)).toEqual(sortedIds);
    expect(store!.requests.every((u) => u.searchParams.get('limit') === '10')).toBe(true);
    expect(walk.summary.anomalies).toEqual([]);
  });

  test('a short non-final page skips nothing (serial and parallel)', async () => {
    const transform: FakeStoreOptions['transform'] = (body, ctx) => {
      if (ctx.url.searchParams.get('offset') === '20') {
        const list = body.products as Product[];
        return { ...body, paging: { ...body.paging, pageSize: 7 }, products: list.slice(0, 7) };
      }
      return body;
    };
    for (const concurrency of [1, 3]) {
      const client = await setup({ transform });
      const walk = client.walk('products', { jobid: 1, strategy: 'offset', concurrency });
      expect((await collect(walk)).map((p) => p._id)).toEqual(sortedIds);
      expect(walk.summary.anomalies).toEqual([]);
      await store!.close();
      store = undefined;
    }
  });

  test('property: any page sizes and short pages, each item exactly once in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 25 }),
        fc.array(fc.integer({ min: 0, max: 24 }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        async (count, pageSize, cuts, concurrency) => {
          const data = products.slice(0, count);
          const ids = [...data].sort((a, b) => compareKeys(keyOf(a), keyOf(b))).map((p) => p._id);
          let page = 0;
          const s = await startFakeStore({
            products: data,
            key: KEY,
            pageSize,
            transform: (body) => {
              const cut = cuts[page++ % Math.max(1, cuts.length)];
              const list = body.products as Product[];
              // Shorten some non-empty pages (never to zero: an empty page means the end).
              return cuts.length && list.length > 1 && cut ? { ...body, products: list.slice(0, Math.max(1, list.length - cut)) } : body;
            },
          });
          try {
            const client = createStoreClient({ baseUrl: s.url, svcKey: KEY, retry: 0 });
            const walk = client.walk('products', { jobid: 1, strategy: 'offset', concurrency });
            const got = (await collect(walk)).map((p) => p._id);
            expect(got).toEqual(ids);
            expect(walk.summary.duplicates).toBe(0);
          } finally {
            await s.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  test('duplicates across pages are dropped and reported', async () => {
    const client = await setup({
      pagination: 'cursor',
      // Each next cursor points one item back: the last item of a page comes again first.
      transform: (body) => (body.paging.next ? { ...body, paging: { ...body.paging, next: encodeCursor(JSON.parse(Buffer.from(String(body.paging.next), 'base64url').toString()).p - 1) } } : body),
    });
    const walk = client.walk('products', { jobid: 1 });
    expect((await collect(walk)).map((p) => p._id)).toEqual(sortedIds);
    expect(walk.summary.duplicates).toBe(walk.summary.pages - 1);
    expect(walk.summary.anomalies.filter((a) => a.kind === 'duplicate')).toHaveLength(walk.summary.pages - 1);
  });

  test('wrong sort order is reported', async () => {
    const client = await setup({ transform: (body) => ({ ...body, products: [...(body.products as Product[])].reverse() }) });
    const walk = client.walk('products', { jobid: 1 });
    await collect(walk);
    expect(walk.summary.anomalies.some((a) => a.kind === 'sort-order')).toBe(true);
  });

  test('itemsTotal that lies high, low, or changes is reported; no item is lost', async () => {
    for (const lie of [10, -30]) {
      const client = await setup({ transform: (body) => ({ ...body, paging: { ...body.paging, itemsTotal: 95 + lie } }) });
      const walk = client.walk('products', { jobid: 1 });
      expect(await collect(walk)).toHaveLength(95);
      expect(walk.summary.anomalies).toContainEqual({ kind: 'items-total-mismatch', itemsTotal: 95 + lie, received: 95 });
      await store!.close();
      store = undefined;
    }
    const client = await setup({ transform: (body, ctx) => ({ ...body, paging: { ...body.paging, itemsTotal: ctx.n === 2 ? 96 : 95 } }) });
    const walk = client.walk('products', { jobid: 1 });
    await collect(walk);
    expect(walk.summary.anomalies).toContainEqual({ kind: 'items-total-changed', from: 95, to: 96 });
  });

  test('a repeating cursor stops the walk with StorePagingError', async () => {
    const client = await setup({ pagination: 'cursor', transform: (body) => ({ ...body, paging: { ...body.paging, next: encodeCursor(20) } }) });
    const walk = client.walk('products', { jobid: 1 });
    await expect(collect(walk)).rejects.toBeInstanceOf(StorePagingError);
    expect(store!.requests).toHaveLength(2);
    expect(walk.summary.anomalies).toContainEqual({ kind: 'cursor-loop', next: encodeCursor(20) });
  });

  test('wrong types are quarantined, not yielded', async () => {
    const client = await setup({
      transform: (body, ctx) =>
        ctx.n === 1 ? { ...body, products: (body.products as Product[]).map((p, i) => (i === 3 ? { ...p, title: { text: 'not a string' } } : i === 4 ? { ...p, _id: undefined, sku: undefined } : p)) } : body,
    });
    const invalid: string[] = [];
    const walk = client.walk('products', { jobid: 1 });
    for await (const page of walk.pages()) for (const x of page.invalid) invalid.push(`${x._id}:${x.error}`);
    expect(walk.summary.items).toBe(93);
    expect(walk.summary.invalid).toBe(2);
    expect(invalid[0]).toMatch(new RegExp(`^${sortedIds[3]}:title`));
    expect(invalid[1]).toMatch(/^undefined:_id/);
  });

  test('a page over 10 MB is cut off while streaming, not retried', async () => {
    const big = { ...products[0], description: 'x'.repeat(10_100_000) };
    let served = 0;
    const client = await setup({
      products: [big],
      // Chunked (no content-length): the cap must hold while reading.
      intercept: ({ res, entity, req }) => {
        if (!entity || req.method !== 'GET') return;
        served++;
        res.writeHead(200, { 'content-type': 'application/json' });
        const body = JSON.stringify({ paging: { pageSize: 1, itemsTotal: 1, offset: 0 }, products: [big] });
        for (let i = 0; i < body.length; i += 1_000_000) res.write(body.slice(i, i + 1_000_000));
        res.end();
        return true;
      },
    });
    const err = await collect(client.walk('products', { jobid: 1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreResponseTooLargeError);
    expect((err as StoreResponseTooLargeError).attempts).toBe(1);
    expect(served).toBe(1);
  });
});

describe('retries, limits and errors', () => {
  test('dropped connections are retried: exact attempts', async () => {
    const client = await setup({ intercept: ({ n, req }) => (n <= 2 ? (req.socket.destroy(), true) : false) });
    const page = await client.listProducts({ sortorder: 'asc', jobid: 1 });
    expect(page.items).toHaveLength(20);
    expect(client.stats).toEqual({ requests: 3, retries: 2 });
  });

  test('dropped connections beyond the limit give StoreNetworkError', async () => {
    const client = await setup({ intercept: ({ req }) => (req.socket.destroy(), true) }, { retry: { limit: 2, delay: () => 1 } });
    const err = await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreNetworkError);
    expect((err as StoreNetworkError).attempts).toBe(3);
  });

  test('500 every third request: a full walk survives with exact counts', async () => {
    const client = await setup({ intercept: ({ n, res }) => (n % 3 === 0 ? (res.writeHead(500, { 'content-type': 'application/json' }), res.end('{"error":"boom"}'), true) : false) });
    const items = await collect(client.walk('products', { jobid: 1 }));
    expect(items).toHaveLength(95);
    // 5 pages; requests 3 and 6 fail: 7 requests, 2 retries.
    expect(client.stats).toEqual({ requests: 7, retries: 2 });
  });

  test('429 with Retry-After: 1 waits as told', async () => {
    const delays: number[] = [];
    const client = await setup(
      { intercept: ({ n, res }) => (n === 1 ? (res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }), res.end('{"error":"slow down"}'), true) : false) },
      { hooks: { beforeRetry: [(i) => delays.push(i.delayMs)] } },
    );
    const page = await client.listProducts({ sortorder: 'asc', jobid: 1 });
    expect(page.items).toHaveLength(20);
    expect(delays).toEqual([1000]);
    expect(client.stats).toEqual({ requests: 2, retries: 1 });
  });

  test('no retry on 400, 401 and 404', async () => {
    const client = await setup();
    await expect(client.listProducts({ sortorder: 'sideways' as 'asc', jobid: 1 })).rejects.toBeInstanceOf(StoreBadRequestError);
    await expect(client.getProduct('nope')).rejects.toBeInstanceOf(StoreNotFoundError);
    const wrong = createStoreClient({ baseUrl: store!.url, svcKey: 'wrong', retry: 5 });
    await expect(wrong.listProducts({ sortorder: 'asc', jobid: 1 })).rejects.toBeInstanceOf(StoreAuthError);
    expect(store!.requests).toHaveLength(3);
  });

  test('a store that never answers: timeout per attempt, retried, then StoreTimeoutError', async () => {
    const client = await setup({ intercept: () => true }, { timeoutMs: 150, retry: { limit: 1, delay: () => 1 } });
    const err = await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreTimeoutError);
    expect(err).toMatchObject({ limit: 'request', attempts: 2 });
  });

  test('a store that trickles bytes hits the per-request timeout', async () => {
    const timers: NodeJS.Timeout[] = [];
    const client = await setup(
      {
        intercept: ({ res }) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          const t = setInterval(() => res.write(' '), 20);
          timers.push(t);
          res.on('close', () => clearInterval(t));
          return true;
        },
      },
      { timeoutMs: 200, retry: 0 },
    );
    const err = await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreTimeoutError);
    timers.forEach(clearInterval);
  });

  test('totalBudgetMs bounds a call and its retries', async () => {
    const client = await setup({ intercept: () => true }, { timeoutMs: 10_000, totalBudgetMs: 200, retry: 5 });
    const err = await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreTimeoutError);
    expect(err).toMatchObject({ limit: 'budget', attempts: 1 });
  });

  test('a body that is not the interface is a StoreContractError', async () => {
    const client = await setup({ transform: () => ({ items: [] }) });
    await expect(client.listProducts({ sortorder: 'asc', jobid: 1 })).rejects.toBeInstanceOf(StoreContractError);
  });

  test('the key never appears in errors or hook payloads, even when the store echoes it', async () => {
    const seen: string[] = [];
    const hook = (x: unknown) => seen.push(JSON.stringify(x));
    const client = await setup(
      { intercept: ({ res, req }) => (res.writeHead(500, { 'content-type': 'application/json' }), res.end(JSON.stringify({ error: `bad key ${String(req.headers.svckey)}` })), true) },
      { retry: { limit: 1, delay: () => 1 }, hooks: { beforeRequest: [hook], afterResponse: [hook], beforeRetry: [hook] } },
    );
    const err = (await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e)) as StoreServerError;
    expect(err).toBeInstanceOf(StoreServerError);
    expect(err.storeError).toBe('bad key ***');
    const everything = [err.message, err.url, JSON.stringify(err), String(err.stack), ...seen, JSON.stringify(client.config)].join('\n');
    expect(everything).not.toContain(KEY);
    expect(seen.length).toBeGreaterThan(0);
  });

  test('options are checked once, naming the bad option', () => {
    expect(() => createStoreClient({ baseUrl: 'ftp://x', svcKey: 'k' })).toThrow(/baseUrl/);
    expect(() => createStoreClient({ baseUrl: 'http://u:p@x', svcKey: 'k' })).toThrow(/credentials/);
    expect(() => createStoreClient({ baseUrl: 'http://x', svcKey: '' })).toThrow(/svcKey/);
    expect(() => createStoreClient({ baseUrl: 'http://x', svcKey: 'k', retry: { limit: -1 } })).toThrow(/retry\.limit/);
    expect(() => createStoreClient({ baseUrl: 'http://x/?k=abcdef', svcKey: 'abcdef' })).toThrow(/key/);
    expect(() => createStoreClient({ baseUrl: 'http://x', svcKey: 'k', retry: { statusCode: [503] } } as never)).toThrow(
      'invalid option "retry.statusCode": is not an option of createStoreClient (did you mean "statusCodes"?)',
    );
  });

  test("a walk's own per-call options are read with the same readers, naming the member", () => {
    const client = createStoreClient({ baseUrl: 'http://x', svcKey: 'k' });
    expect(() => client.walk('products', { jobid: -1 })).toThrow('invalid option "jobid": must be an integer ≥ 0');
    expect(() => client.walk('products', { jobid: 1, concurrency: 65 })).toThrow('invalid option "concurrency": must be an integer from 1 to 64');
    expect(() => client.walk('products', { jobid: 1, stubPageSize: 1.5 })).toThrow('invalid option "stubPageSize": must be an integer ≥ 0');
    expect(() => client.walk('products', { jobid: 1, concurrency: 4, stubPageSize: 0 })).not.toThrow();
  });
});

describe('by-ID reads and writes', () => {
  test('by-ID read, order write success, failure structure as a result, write retried on 500', async () => {
    const order = demoOrder(0, 95);
    const client = await setup({ intercept: ({ n, res }) => (n === 2 ? (res.writeHead(503), res.end(), true) : false) });
    expect(await client.getProduct(products[5]._id)).toEqual(products[5]);
    const ok = await client.writeOrder(order, { jobid: 7 });
    expect(ok).toMatchObject({ ok: true, item: { _id: order._id } });
    expect(client.stats.retries).toBe(1);
    expect(store!.requests[2].searchParams.get('jobid')).toBe('7');
    expect(store!.requests[2].searchParams.get('id')).toBe(order._id);
    const bad = await client.writeOrder({ ...order, _id: 'bad-1', orderItems: [{ id: '', quantity: 0 }] }, { jobid: 8 });
    expect(bad).toEqual({ ok: false, error: 'order rejected', reasons: [{ msg: 'blank SKU' }, { msg: 'zero quantity' }], warnings: [], status: 400, normalisations: {} });
    expect(store!.data.orders.has('bad-1')).toBe(false);
  });
});

describe('transport seams', () => {
  test('an injected fetch gets the key in the SvcKey and C2SKey headers only, redirects off', async () => {
    const calls: Array<{ url: string; init: RequestInit }> = [];
    const client = createStoreClient({
      baseUrl: 'http://store.invalid/hooks',
      svcKey: KEY,
      fetch: async (url, init) => {
        calls.push({ url, init });
        return new Response(JSON.stringify({ paging: { pageSize: 1, itemsTotal: 1, offset: 0 }, products: [products[0]] }), { status: 200 });
      },
    });
    const page = await client.listProducts({ sortorder: 'desc', jobid: 4, offset: 0 });
    expect(page.items).toEqual([products[0]]);
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe('http://store.invalid/hooks/products?sortorder=desc&jobid=4&offset=0');
    expect(calls[0].init).toMatchObject({ method: 'GET', redirect: 'manual', headers: { SvcKey: KEY, C2SKey: KEY } });
    expect(Object.values(calls[0].init.headers as Record<string, string>).filter((v) => v === KEY)).toHaveLength(2);
  });

  test('keyHeaders names the headers the key goes in', async () => {
    const calls: RequestInit[] = [];
    const client = createStoreClient({
      baseUrl: 'http://store.invalid',
      svcKey: KEY,
      keyHeaders: ['C2SKey'],
      fetch: async (_url, init) => (calls.push(init), new Response('{"paging":{"pageSize":0,"itemsTotal":0},"orders":[]}')),
    });
    await client.listOrders({ sortorder: 'asc', jobid: 1 });
    expect(calls[0].headers).toEqual({ accept: 'application/json', C2SKey: KEY });
    for (const bad of [[], ['Svc Key'], ['SvcKey', 'svckey'], 'SvcKey']) {
      expect(() => createStoreClient({ baseUrl: 'http://x', svcKey: KEY, keyHeaders: bad as string[] })).toThrow(/keyHeaders/);
    }
  });

  test('a redirect is not followed (the key would travel to another host)', async () => {
    const other = await startFakeStore({ products, key: KEY });
    try {
      const client = await setup({ intercept: ({ res }) => (res.writeHead(302, { location: `${other.url}/products` }), res.end(), true) });
      const err = await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'StoreHttpError', status: 302, attempts: 1 });
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});
