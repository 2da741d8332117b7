/**
 * The endpoint checker, in-process: passes this kit's router and an honest hand-written store,
 * and fails each deliberately broken store with the failing check named.
 */
import { checkEndpoints, type CheckReport } from '../../lib/conformance/endpoint-checker';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { startStoreServer } from '../../lib/host';
import type { Product } from '../../lib/contract/webhook';
import { encodeCursor, startFakeStore, type FakeStoreOptions } from '../client/fake-store';

const KEY = 'check-test-key-abcdef';
const catalog = demoCatalog(45);

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

const failing = (r: CheckReport) => r.checks.filter((c) => !c.ok).map((c) => c.name);
const failingAt = (r: CheckReport, level: 'must' | 'should') => r.checks.filter((c) => !c.ok && c.level === level).map((c) => c.name);

/** The `should` checks of deployed-peer compatibility (`C2SKey`, optional `sortorder`/`jobid`, `?id=`). */
const DEPLOYED = ['auth-c2skey', 'params-default-sortorder', 'params-default-jobid', 'by-id-query'].flatMap((n) => [`products.${n}`, `orders.${n}`]);

test.each(['offset', 'cursor'] as const)('this kit\'s router passes every check, must and should, writes included (%s)', async (pagination) => {
  const server = await startStoreServer({ adapter: createMemoryAdapter(catalog), key: KEY, port: 0, pagination, rateLimit: false });
  try {
    const report = await checkEndpoints({ baseUrl: server.url, svcKey: KEY, writes: true, pageSize: 10 });
    expect(failing(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.checks).toHaveLength(46);
    expect(report.checks.every((c) => c.level === 'must' || c.level === 'should')).toBe(true);
    expect(JSON.stringify(report)).not.toContain(KEY);
  } finally {
    await server.close();
  }
});

test('this kit\'s router with an ids-only listing: every stub is read whole by ?id=; only "whole items" warns', async () => {
  const server = await startStoreServer({ adapter: createMemoryAdapter(catalog), key: KEY, port: 0, listing: 'stubs', rateLimit: false });
  try {
    const report = await checkEndpoints({ baseUrl: server.url, svcKey: KEY, pageSize: 10 });
    expect(failing(report)).toEqual(['products.whole-items', 'orders.whole-items']);
    expect(report.checks.find((c) => c.name === 'products.by-id-query')).toMatchObject({ ok: true, level: 'must' });
    expect(report.checks.find((c) => c.name === 'orders.desc-reverses-asc')?.detail).toBe(`${catalog.orders.length} items`);
    expect(report.ok).toBe(true);
  } finally {
    await server.close();
  }
});

test('an honest hand-written store that speaks the deployed protocol passes every check, must and should', async () => {
  const store = await startFakeStore({ products: catalog.products, orders: catalog.orders, key: KEY, pageSize: 7 });
  try {
    const report = await checkEndpoints({ baseUrl: store.url, svcKey: KEY, writes: true, strict: true });
    expect(failing(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(await store.openSockets()).toBe(0);
  } finally {
    await store.close();
  }
});

test('a store that follows only the interface\'s text passes with warnings (deployed-peer compatibility); strict fails it', async () => {
  const store = await startFakeStore({ products: catalog.products, orders: catalog.orders, key: KEY, pageSize: 7, seedOnly: true });
  try {
    const report = await checkEndpoints({ baseUrl: store.url, svcKey: KEY, writes: true });
    expect(failingAt(report, 'must')).toEqual([]);
    expect(failingAt(report, 'should').sort()).toEqual([...DEPLOYED].sort());
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.name === 'products.auth-c2skey')!.detail).toMatch(/expected HTTP 200 with a list \(the key in C2SKey alone, as the deployed service sends it\), got HTTP 401/);
    const strict = await checkEndpoints({ baseUrl: store.url, svcKey: KEY, strict: true });
    expect(strict.ok).toBe(false);
  } finally {
    await store.close();
  }
});

test('the same store configured per entity (one URL per entity) passes too: its by-ID read is then ?id=, a should', async () => {
  const store = await startFakeStore({ products: catalog.products, orders: catalog.orders, key: KEY, pageSize: 7, seedOnly: true });
  try {
    const report = await checkEndpoints({ urls: { listProducts: `${store.url}/products`, listOrders: `${store.url}/orders` }, svcKey: KEY });
    expect(failingAt(report, 'must')).toEqual([]);
    expect(report.ok).toBe(true);
    // One request, one grade: the configured by-ID read is the deployed ?id= read.
    for (const entity of ['products', 'orders']) {
      expect(report.checks.find((c) => c.name === `${entity}.by-id`)).toMatchObject({ ok: false, level: 'should' });
      expect(report.checks.find((c) => c.name === `${entity}.by-id-query`)).toMatchObject({ ok: false, level: 'should' });
    }
  } finally {
    await store.close();
  }
});

test('a first page for offset=abc is a should failure (hardening), not a must', async () => {
  const store = await startFakeStore({
    products: catalog.products,
    orders: catalog.orders,
    key: KEY,
    intercept: (ctx) => void (ctx.url.searchParams.get('offset') === 'abc' && ctx.url.searchParams.delete('offset')),
  });
  try {
    const report = await checkEndpoints({ baseUrl: store.url, svcKey: KEY });
    expect(failing(report)).toEqual(['products.params-invalid-offset', 'orders.params-invalid-offset']);
    expect(report.checks.find((c) => c.name === 'products.params-invalid-offset')).toMatchObject({ level: 'should', detail: 'expected HTTP 400 with a JSON {error} body, got HTTP 200 without {error} for sortorder=asc&jobid=1&offset=abc' });
    expect(report.ok).toBe(true);
  } finally {
    await store.close();
  }
});

const isList = (ctx: { entity?: string; req: { method?: string }; url: URL }) => ctx.entity && ctx.req.method === 'GET' && ctx.url.pathname.split('/').length === 2 && ctx.url.searchParams.get('jobid') === '1';
const products = (body: Record<string, unknown>) => body.products as Product[];

const broken: Array<[string, FakeStoreOptions, string[], { timeoutMs?: number; writes?: boolean }?]> = [
  [
    'duplicates across pages',
    { pagination: 'cursor', transform: (b) => (b.paging.next ? { ...b, paging: { ...b.paging, next: encodeCursor(JSON.parse(Buffer.from(String(b.paging.next), 'base64url').toString()).p - 1) } } : b) },
    ['products.paging-asc', 'products.paging-desc'],
  ],
  ['wrong sort order', { transform: (b, ctx) => (ctx.entity === 'products' ? { ...b, products: [...products(b)].reverse() } : b) }, ['products.sort-order', 'products.desc-reverses-asc']],
  ['itemsTotal that lies', { transform: (b, ctx) => (ctx.entity === 'orders' ? { ...b, paging: { ...b.paging, itemsTotal: 99 } } : b) }, ['orders.paging-asc', 'orders.paging-desc']],
  ['a page over 10 MB', { transform: (b, ctx) => (ctx.entity === 'products' && ctx.url.searchParams.get('sortorder') === 'desc' ? { ...b, products: products(b).map((p, i) => (i ? p : { ...p, description: 'x'.repeat(10_000_001) })) } : b) }, ['products.paging-desc', 'products.page-limits']],
  ['wrong types', { transform: (b, ctx) => (ctx.entity === 'products' ? { ...b, products: products(b).map((p, i) => (i === 2 ? { ...p, variations: [{ prices: [{ tag: 'default', currency: 'USD', number: '9.99' }] }] } : p)) } : b) }, ['products.types']],
  ['items without _id', { transform: (b, ctx) => (ctx.entity === 'orders' ? { ...b, orders: (b.orders as object[]).map((o, i) => (i === 0 ? { ...o, _id: '' } : o)) } : b) }, ['orders.ids']],
  ['a cursor that repeats', { pagination: 'cursor', transform: (b, ctx) => (ctx.entity === 'products' && b.paging.next ? { ...b, paging: { ...b.paging, next: encodeCursor(20) } } : b) }, ['products.paging-asc', 'products.paging-desc']],
  ['dropped connections', { intercept: (ctx) => (isList(ctx) && ctx.entity === 'orders' && ctx.url.searchParams.get('sortorder') === 'desc' ? (ctx.req.socket.destroy(), true) : false) }, ['orders.paging-desc']],
  ['500 every third request', { intercept: ({ n, res }) => (n % 3 === 0 ? (res.writeHead(500, { 'content-type': 'application/json' }), res.end('{"error":"boom"}'), true) : false) }, ['products.paging-asc']],
  ['429 with Retry-After: 1', { intercept: (ctx) => (isList(ctx) && ctx.url.searchParams.get('sortorder') === 'desc' ? (ctx.res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }), ctx.res.end('{"error":"slow down"}'), true) : false) }, ['products.paging-desc']],
  ['never answers', { intercept: (ctx) => Boolean(isList(ctx) && ctx.entity === 'orders' && ctx.url.searchParams.get('sortorder') === 'desc') }, ['orders.paging-desc', 'orders.page-limits'], { timeoutMs: 300 }],
  [
    'trickles bytes',
    {
      intercept: (ctx) => {
        if (!(isList(ctx) && ctx.entity === 'products' && ctx.url.searchParams.get('sortorder') === 'desc')) return false;
        ctx.res.writeHead(200, { 'content-type': 'application/json' });
        const t = setInterval(() => ctx.res.write(' '), 20);
        ctx.res.on('close', () => clearInterval(t));
        return true;
      },
    },
    ['products.paging-desc', 'products.page-limits'],
    { timeoutMs: 300 },
  ],
  ['accepts any key', { intercept: (ctx) => (ctx.req.headers.svckey !== undefined && ctx.req.headers.svckey !== KEY ? ((ctx.req.headers.svckey = KEY), (ctx.req.headers.c2skey = KEY), false) : false) }, ['products.auth-wrong-key', 'orders.auth-wrong-key']],
  ['ignores a bad sortorder', { intercept: (ctx) => void (ctx.url.searchParams.get('sortorder') === 'sideways' && ctx.url.searchParams.set('sortorder', 'asc')) }, ['products.params-invalid-sortorder', 'orders.params-invalid-sortorder']],
  ['by-ID read differs from the list', { intercept: (ctx) => (ctx.entity === 'products' && ctx.url.pathname.split('/').length === 3 ? (ctx.res.writeHead(200, { 'content-type': 'application/json' }), ctx.res.end(JSON.stringify({ product: { _id: decodeURIComponent(ctx.url.pathname.split('/')[2]), title: 'other' } })), true) : false) }, ['products.by-id']],
  ['reads that are not stable', { transform: (b, ctx) => (ctx.entity === 'orders' ? { ...b, orders: (b.orders as object[]).map((o) => ({ ...o, feedback: `read ${ctx.n}` })) } : b) }, ['orders.stable-reads']],
  ['accepts bad orders', { intercept: (ctx) => (ctx.req.method === 'POST' && ctx.url.searchParams.get('id')?.endsWith('-bad') ? (ctx.res.writeHead(200, { 'content-type': 'application/json' }), ctx.res.end(JSON.stringify({ success: true, code: 200, warnings: [], order: { _id: ctx.url.searchParams.get('id') } })), true) : false) }, ['orders.write-rejects-bad-order'], { writes: true }],
];

test.each(broken)('a store with %s fails the named checks', async (_label, opts, expected, extra = {}) => {
  const store = await startFakeStore({ products: catalog.products, orders: catalog.orders, key: KEY, ...opts });
  try {
    const report = await checkEndpoints({ baseUrl: store.url, svcKey: KEY, ...extra });
    const names = failing(report);
    for (const name of expected) expect(names).toContain(name);
    // Only must failures fail the run: a store whose only faults are should-level passes with warnings.
    expect(report.ok).toBe(failingAt(report, 'must').length === 0);
    if (expected.some((n) => report.checks.find((c) => c.name === n)?.level === 'must')) expect(report.ok).toBe(false);
    expect(await store.openSockets()).toBe(0);
  } finally {
    await store.close();
  }
});

test('--writes on a store whose product list fails says so (not "lists no product"); page-limits names its unit', async () => {
  const store = await startFakeStore({
    products: catalog.products,
    orders: catalog.orders,
    key: KEY,
    intercept: (ctx) => (ctx.entity === 'products' && isList(ctx) ? (ctx.res.writeHead(500, { 'content-type': 'application/json' }), ctx.res.end('{"error":"database down"}'), true) : false),
  });
  try {
    const report = await checkEndpoints({ baseUrl: store.url, svcKey: KEY, writes: true });
    const write = report.checks.find((c) => c.name === 'orders.write-round-trip')!;
    expect(write.ok).toBe(false);
    expect(write.detail).toMatch(/^could not be checked: the product list could not be read \(.*HTTP 500.*database down/);
    expect(report.checks.find((c) => c.name === 'orders.page-limits')!.detail).toMatch(/slowest \d+ ms \(limit 60,000 ms\)$/);
  } finally {
    await store.close();
  }
});

test('an item quarantined in both walks is counted once; a products-only connection checks products only', async () => {
  const store = await startFakeStore({
    products: catalog.products,
    orders: catalog.orders,
    key: KEY,
    transform: (b, ctx) => (ctx.entity === 'products' ? { ...b, products: products(b).map((p) => (p._id === catalog.products[2]._id ? { ...p, variations: [{ availabilities: [{ tag: 'default', quantity: 'many' }] }] } : p)) } : b),
  });
  try {
    const report = await checkEndpoints({ urls: { listProducts: `${store.url}/products` }, svcKey: KEY });
    expect(report.checks.every((c) => c.name.startsWith('products.'))).toBe(true);
    // The desc walk quarantines the same item as the asc walk: one item, not two.
    expect(report.checks.find((c) => c.name === 'products.types')!.detail).toMatch(/^1 item with wrong types, first "[^"]+": variations\.0\.availabilities\.0\.quantity/);
    await expect(checkEndpoints({ urls: { listProducts: `${store.url}/products` }, svcKey: KEY, writes: true })).rejects.toThrow(/"writes": probes order writes: the connection needs an orders URL/);
  } finally {
    await store.close();
  }
});
