/**
 * The tolerant reader of store replies: what real-world stores send is read, each normalisation is
 * counted, an item is kept only when valid afterwards, and nothing valid is lost (property, through
 * a whole sync into a sink).
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NORMALISATION_KINDS } from '../../lib/contract/item-reader';
import { isStubShape, readListReply, readStoreItem, REPLY_NORMALISATION_KINDS } from '../../lib/client/store-reply';
import { createStoreClient, type FetchLike } from '../../lib/client';
import { StoreAuthError, StoreContractError } from '../../lib/client/client-errors';
import { createMemoryAdapter } from '../../adapters/memory';
import { MemoryCheckpointStore, runSync } from '../../lib/sync';
import { demoCatalog } from '../../lib/demo';
import { OrderSchema, ProductSchema, type Order, type Product } from '../../lib/contract/webhook';
import type { Entity } from '../../lib/contract/entities';
import { isRawJson } from '../../lib/adapter';

const KEY = 'tolerant-key-123456';

/** A client whose store is a function of the request URL (no network). */
function clientOf(answer: (url: URL) => { status?: number; type?: string; body: unknown }, extra: object = {}) {
  const fetch: FetchLike = async (url) => {
    const a = answer(new URL(url));
    const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
    return new Response(text, { status: a.status ?? 200, headers: { 'content-type': a.type ?? 'application/json' } });
  };
  return createStoreClient({ baseUrl: 'http://store.invalid', svcKey: KEY, retry: 0, fetch, ...extra });
}

const [p0, p1, p2] = demoCatalog(3).products;

describe('list replies', () => {
  test('HTTP 200 with a text body refusing the key is an auth failure with a clear message; other text is a contract error quoting it', async () => {
    for (const text of ['401 Unauthorized', '401 Unauthorized in this example', 'Unauthorized']) {
      const err = await clientOf(() => ({ body: text, type: 'text/html' })).listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreAuthError);
      expect((err as Error).message).toContain(`it answered with the text "${text}" instead of JSON`);
    }
    const other = await clientOf(() => ({ body: 'not supported', type: 'text/html' })).listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(StoreContractError);
    expect((other as Error).message).toContain('the body is not JSON: "not supported"');
    const said = await clientOf(() => ({ body: { msg: 'could not query collections' } })).listProducts({ sortorder: 'asc', jobid: 1 }).catch((e: unknown) => e);
    expect((said as Error).message).toContain('the store said "could not query collections"');
  });

  test('string offsets and totals, pageSize 0, next "" and text/html are read and counted', async () => {
    const client = clientOf(() => ({ type: 'text/html; charset=UTF-8', body: { paging: { pageSize: '0', itemsTotal: '3', offset: '0', next: '' }, products: [p0, p1, p2] } }));
    const page = await client.listProducts({ sortorder: 'asc', jobid: 1 });
    expect(page.paging).toEqual({ pageSize: 0, itemsTotal: 3, offset: 0 });
    expect(page.totalKnown).toBe(true);
    expect(page.items).toEqual([p0, p1, p2]);
    expect(page.normalisations).toEqual({ 'page-size-from-string': 1, 'items-total-from-string': 1, 'offset-from-string': 1, 'next-empty': 1, 'content-type-not-json': 1 });
  });

  test('a row array for itemsTotal (php-mysql) is unusable, not fatal: the walk ends on an empty page', async () => {
    const all = demoCatalog(25).products;
    const client = clientOf((url) => {
      const offset = Number(url.searchParams.get('offset') ?? 0);
      return { body: { paging: { pageSize: 10, itemsTotal: ['0', '25'], offset: String(offset) }, products: all.slice(offset, offset + 10) } };
    });
    const walk = client.walk('products', { jobid: 1 });
    const ids: string[] = [];
    for await (const p of walk) ids.push(p._id);
    expect(ids).toHaveLength(25);
    expect(walk.summary).toMatchObject({ pages: 4, complete: true, anomalies: [] });
    expect(walk.summary.normalisations).toMatchObject({ 'items-total-unusable': 4, 'offset-from-string': 4 });
  });

  test('a placeholder total never ends a walk early (a short middle page) nor makes it loop (an offset-blind store)', async () => {
    const all = demoCatalog(30).products;
    // Pages of 10, the second one cut short (budget): the walk must go on past it.
    const sizes = new Map([[0, 10], [10, 4]]);
    const client = clientOf((url) => {
      const offset = Number(url.searchParams.get('offset') ?? 0);
      return { body: { paging: { pageSize: 10, itemsTotal: 999, offset }, products: all.slice(offset, offset + (sizes.get(offset) ?? 10)) } };
    });
    const walk = client.walk('products', { jobid: 1 });
    let n = 0;
    for await (const _ of walk) n++;
    expect(n).toBe(30);
    expect(walk.summary.normalisations['items-total-placeholder']).toBe(1);
    expect(walk.summary.anomalies).toEqual([]);

    const blind = clientOf(() => ({ body: { paging: { pageSize: 10, itemsTotal: 9999 }, products: all.slice(0, 10) } }));
    const loop = blind.walk('products', { jobid: 1 });
    await expect((async () => { for await (const _ of loop); })()).rejects.toThrow(/3 pages in a row brought only items already received/);
    expect(blind.stats.requests).toBe(4);
  });

  test('stubs are told from items by their members, never passed on as items', async () => {
    const client = clientOf(() => ({ body: { paging: { pageSize: 3, itemsTotal: 3 }, orders: [{ _id: 7, orderid: 7, last_updated: '1517360038797' }, { orderid: 'o-8', last_updated: 5 }, { _id: 'o-9', status: 'paid', last_updated: 6 }] } }));
    const page = await client.listOrders({ sortorder: 'asc', jobid: 1 });
    expect(page.stubs).toEqual([{ _id: '7', last_updated: 1517360038797, index: 0 }, { _id: 'o-8', last_updated: 5, index: 1 }]);
    expect(page.items).toEqual([{ _id: 'o-9', status: 'paid', last_updated: 6 }]);
    expect(page.normalisations).toEqual({ 'string-from-number': 2, 'number-from-string': 1, 'id-from-natural-key': 1 });
  });
});

test('every normalisation the reader can count has its row in docs/client.md "The tolerant reader"', () => {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'client.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## The tolerant reader'), doc.indexOf('## Whole-catalog walks'));
  const rows = table.split('\n').filter((l) => l.startsWith('|'));
  const missing = [...NORMALISATION_KINDS, ...REPLY_NORMALISATION_KINDS].filter((kind) => !rows.some((r) => r.includes(`\`${kind}\``)));
  expect(missing).toEqual([]);
});

describe('by-ID answers', () => {
  const answerWith = (body: unknown) => clientOf(() => ({ body }), { urls: { listProducts: 'http://store.invalid/c2s.php?entity=products', listOrders: 'http://store.invalid/c2s.php?entity=orders' } });

  test.each([
    ['a bare item', p1, {}],
    ['{product}', { product: p1 }, {}],
    ['a one-item list', [p1], { 'by-id-from-list': 1 }],
    ['a one-item page', { paging: { pageSize: 1, itemsTotal: 1 }, products: [p1] }, { 'by-id-from-list': 1 }],
  ])('%s is read', async (_label, body, counts) => {
    const read = await answerWith(body).readById('products', p1._id);
    expect(read).toEqual({ item: p1, normalisations: counts });
  });

  test.each([
    ['a list of several', [p1, p2], /a list of 2/],
    ['another item', p2, /asked for "[^"]+", got/],
    ['a stub', { _id: p1._id, last_updated: 1 }, /is a stub/],
    ['an invalid item', { ...p1, title: { x: 1 } }, /title/],
  ])('%s is a contract error', async (_label, body, message) => {
    await expect(answerWith(body).getProduct(p1._id)).rejects.toThrow(message);
  });
});

describe('write answers', () => {
  test('{success:true} alone and a create answer with only the new _id are successful writes', async () => {
    const alone = await clientOf(() => ({ type: 'text/html', body: { success: true } })).writeProduct(p0, { jobid: 1 });
    expect(alone).toEqual({ ok: true, item: p0, warnings: [], normalisations: { 'write-success-without-item': 1 } });
    const created = await clientOf(() => ({ body: { success: true, product: { _id: 'MG-123456' } } })).writeProduct(p0, { jobid: 1 });
    expect(created.ok && created.item._id).toBe('MG-123456');
  });

  test('the deployed failure forms (HTTP 200, code 403, reasons with message, swapped members) are failures', async () => {
    const mg = await clientOf(() => ({ body: { success: false, code: 403, error: 'Could not update product', reasons: [{ message: 'SKU locked', code: 400 }] } })).writeProduct(p0, { jobid: 1 });
    expect(mg).toEqual({ ok: false, error: 'Could not update product', reasons: [{ msg: 'SKU locked' }], warnings: [], status: 200, normalisations: { 'write-failure-deployed-form': 1 } });
    const cs = await clientOf(() => ({ body: { success: false, error: 403, message: 'Could not create product', reasons: [] } })).writeProduct(p0, { jobid: 1 });
    expect(cs).toMatchObject({ ok: false, error: 'Could not create product', reasons: [] });
  });
});

/** A valid item as a deployed store might write it; `canonical` is what a sink must hold. */
function encode(entity: Entity, item: Product | Order, bits: readonly boolean[]): Record<string, any> {
  const copy = JSON.parse(JSON.stringify(item)) as Record<string, any>;
  let i = 0;
  const pick = () => bits[i++ % bits.length];
  const str = (o: Record<string, any> | undefined, k: string) => {
    if (o && typeof o[k] === 'number' && pick()) o[k] = String(o[k]);
  };
  for (const v of copy.variations ?? []) {
    for (const a of v.availabilities ?? []) str(a, 'quantity');
    for (const p of v.prices ?? []) str(p, 'number');
  }
  for (const it of copy.orderItems ?? []) (str(it, 'quantity'), str(it, 'unitPrice'));
  str(copy.total, 'amount');
  if (entity === 'orders' && copy.dateClosed === '' && pick()) copy.dateClosed = 0;
  if (pick()) copy.tags = [];
  if (copy.model === undefined && pick()) copy.model = null;
  return copy;
}

describe('properties', () => {
  const catalog = demoCatalog(40);

  test('a sync through the tolerant reader never stores an invalid item and never loses a valid one', async () => {
    const junk = fc.oneof(
      fc.jsonValue(),
      fc.record({ _id: fc.oneof(fc.constant(''), fc.constant('a\u0000b'), fc.integer({ min: 0 })), title: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) }, { requiredKeys: [] }),
      fc.record({ _id: fc.string({ minLength: 1, maxLength: 8 }), variations: fc.constant([{ prices: [{ tag: 'd', currency: 'X', number: '0.10000000000000000001' }] }]) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Entity>('products', 'orders'),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }),
        fc.array(fc.tuple(fc.nat(40), junk), { maxLength: 8 }),
        fc.integer({ min: 1, max: 15 }),
        async (entity, bits, junkAt, pageSize) => {
          const valid = (entity === 'products' ? catalog.products : catalog.orders) as Array<Product | Order>;
          const listed: unknown[] = valid.map((x) => encode(entity, x, bits));
          for (const [at, j] of junkAt) listed.splice(at % (listed.length + 1), 0, j);
          const client = clientOf((url) => {
            const offset = Number(url.searchParams.get('offset') ?? 0);
            return { body: { paging: { pageSize, itemsTotal: 999, offset }, [entity]: listed.slice(offset, offset + pageSize) } };
          });
          const sink = createMemoryAdapter();
          const report = await runSync({ connectionId: 'p', client, sink, checkpoints: new MemoryCheckpointStore(), entities: [entity] });
          expect(report.error).toBeUndefined();
          const stored = (await sink[entity].list({ sortorder: 'asc', limit: 10_000, signal: new AbortController().signal })).map((x) => (isRawJson(x) ? JSON.parse(x.json) : x));
          const schema = entity === 'products' ? ProductSchema : OrderSchema;
          for (const x of stored) expect(schema.safeParse(x).success).toBe(true);
          const byId = new Map(stored.map((x: { _id: string }) => [x._id, x]));
          // Every valid item is there, exactly (junk that happens to share an id may be stored under it too: ids are the store's).
          const junkIds = new Set(junkAt.map(([, j]) => (j && typeof j === 'object' && !Array.isArray(j) ? String((j as { _id?: unknown })._id) : '')));
          for (const x of valid) if (!junkIds.has(x._id)) expect(byId.get(x._id)).toEqual(x);
          expect(report[entity].seen + report[entity].invalid + report[entity].duplicates).toBe(listed.length);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('stubs read without the schema', () => {
  // `readListReply` reads a stub of the kit's exact form without zod; the result must be what the
  // schema and the tolerant reader make of it, whatever the values.
  const reference = (x: unknown) => {
    const counts = {};
    const read = readStoreItem('products', x, '', counts);
    if (!read.ok) return { invalid: true };
    return isStubShape('products', x) ? { stub: { _id: read.item._id, last_updated: read.item.last_updated } } : { item: read.item };
  };
  test('the same stubs, items and refusals as the schema path (property)', () => {
    const id = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('', 'x'.repeat(256), 'x'.repeat(257), 'a\u0000b', '\ud800', '😀'), fc.integer());
    const lu = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 1.5, -0, 1764300000000), fc.constant('12'), fc.constant(null));
    const entry = fc.oneof(
      fc.record({ _id: id, last_updated: lu }, { requiredKeys: [] }),
      fc.record({ _id: id, last_updated: lu, title: fc.string({ maxLength: 4 }) }, { requiredKeys: ['_id'] }),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), (raw) => {
        const page = readListReply('products', { paging: { pageSize: raw.length, itemsTotal: raw.length }, products: raw }, { operation: 'listProducts', method: 'GET', url: 'http://x/', status: 200, attempts: 1 }, {});
        raw.forEach((x, index) => {
          const want = reference(x);
          const stub = page.stubs.find((s) => s.index === index);
          const bad = page.invalid.find((s) => s.index === index);
          if (want.stub) expect(stub && { _id: stub._id, last_updated: stub.last_updated }).toEqual(want.stub);
          else expect(stub).toBeUndefined();
          expect(bad !== undefined).toBe(want.invalid === true);
        });
      }),
      { numRuns: 300 },
    );
  });
});
