/**
 * The adapter conformance suite (after abstract-level's `test/index.js`): everything the kit relies
 * on from a `StoreAdapter`, as tests registered with the test functions you pass in, so it runs
 * under jest, node:test or vitest. Every test gets a fresh adapter from your factory.
 *
 * It checks paging in both sort orders and both modes (offset and keyset), every item exactly once
 * over random catalogs with many `last_updated` ties (a fast-check property), tie-breaking by `_id`,
 * `after` as strictly after, exact counts, get/upsert, the `resolveWrite` rules (`touch`, `keep`),
 * concurrent upserts of one `_id`, `upsertMany` (when the adapter has one: the same results as
 * upserts one by one, input order, repeated `_id`s, atomic per item), aborted signals, returned shapes (raw and through
 * `guardAdapter`), large documents, unicode ids and `productBySku`.
 *
 * @example jest (node:test and vitest: pass their `test` and `describe` the same way)
 * ```ts
 * import { runAdapterConformance } from 'storebridge/conformance';
 * import { MyAdapter } from '../src/my-adapter';
 *
 * runAdapterConformance({
 *   describe,
 *   test,
 *   factory: async () => new MyAdapter(await freshDatabase()),
 *   teardown: async (adapter) => adapter.close(),
 * });
 * ```
 */
import assert from 'node:assert/strict';
import type { StoreAdapter, SortKey, UpsertResult, WriteOptions } from '../adapter';
import { isRawJson } from '../adapter';
import { guardAdapter } from '../adapter-guard';
import { ITEM_SCHEMAS, type Entity, type Product, type Order } from '../contract/webhook';
import type { SortOrder } from '../contract/messages';
import { InvalidOptionError } from '../errors';
import { idCases } from './id-cases';
import { keep, live, loadFastCheck, makeItem, order, product, seed, sorted, touch, walk, type Case, type Config } from './suite-helpers';

/** A test-registering function: jest's / vitest's `test`, or node:test's `test`. Called as `test(name, fn)`. */
export type TestFunction = (name: string, fn: () => Promise<void>) => unknown;
/** A grouping function: `describe` of jest, vitest or node:test. */
export type DescribeFunction = (name: string, fn: () => void) => unknown;

export interface AdapterConformanceOptions<A extends StoreAdapter = StoreAdapter> {
  /** Registers one test. */
  readonly test: TestFunction;
  /** Groups the tests (optional). */
  readonly describe?: DescribeFunction;
  /** Name of the group (default `adapter conformance`). */
  readonly name?: string;
  /** A fresh, empty adapter. Called once per test (and once per property run). */
  readonly factory: () => A | Promise<A>;
  /** Disposes of an adapter made by `factory` (default: `adapter.close()`). */
  readonly teardown?: (adapter: A) => void | Promise<void>;
  /** Runs of the exactly-once property (default 25; each run makes a fresh adapter). */
  readonly propertyRuns?: number;
  /** Size of the large-document test's product, in characters (default 2,000,000). */
  readonly largeDocumentChars?: number;
  /** Parallel upserts in the concurrency tests (default 16). */
  readonly concurrency?: number;
  /** Names of tests to leave out (say why in your test file). */
  readonly skip?: readonly string[];
}

function parseOptions<A extends StoreAdapter>(options: AdapterConformanceOptions<A>): Config<A> {
  if (typeof options?.test !== 'function') throw new InvalidOptionError('test', 'pass your test runner\'s test function');
  if (typeof options.factory !== 'function') throw new InvalidOptionError('factory', 'must be a function returning a fresh adapter');
  if (options.describe !== undefined && typeof options.describe !== 'function') throw new InvalidOptionError('describe', 'must be a function');
  const positive = (name: string, v: number | undefined, d: number) => {
    const n = v ?? d;
    if (!Number.isSafeInteger(n) || n < 1) throw new InvalidOptionError(name, 'must be a positive integer');
    return n;
  };
  return {
    factory: options.factory,
    teardown: options.teardown ?? ((a) => a.close?.()),
    propertyRuns: positive('propertyRuns', options.propertyRuns, 25),
    largeDocumentChars: positive('largeDocumentChars', options.largeDocumentChars, 2_000_000),
    concurrency: positive('concurrency', options.concurrency, 16),
  };
}

function cases<A extends StoreAdapter>(): Case<A>[] {
  const both = ['products', 'orders'] as const;
  return [
    [
      'a fresh adapter is empty',
      async (a) => {
        const g = guardAdapter(a);
        for (const e of both) {
          assert.equal(await g.entity(e).count({ signal: live() }), 0, `${e}: count`);
          for (const sortorder of ['asc', 'desc'] as const) {
            assert.deepEqual(await g.entity(e).list({ sortorder, limit: 10, signal: live() }), [], `${e} ${sortorder}: list`);
          }
          assert.equal(await g.entity(e).get('missing', { signal: live() }), undefined, `${e}: get of an unknown id`);
        }
      },
    ],
    [
      'upsert creates; get returns the stored item; the result is what was stored',
      async (a) => {
        const g = guardAdapter(a);
        for (const e of both) {
          const item = makeItem(e, 'item-1', 1000);
          const r = await g.entity(e).upsert(item, touch(5000));
          assert.equal(r.created, true, `${e}: created`);
          assert.equal(r.changed, true, `${e}: changed`);
          assert.deepEqual(r.item, { ...item, last_updated: 5000 }, `${e}: touch sets last_updated to now`);
          assert.deepEqual(await g.entity(e).get('item-1', { signal: live() }), r.item, `${e}: get returns the stored item`);
          assert.equal(await g.entity(e).count({ signal: live() }), 1, `${e}: count`);
        }
      },
    ],
    [
      'products and orders are separate',
      async (a) => {
        const g = guardAdapter(a);
        await g.products.upsert(product('same', 1), keep());
        assert.equal(await g.orders.get('same', { signal: live() }), undefined);
        assert.equal(await g.orders.count({ signal: live() }), 0);
        await g.orders.upsert(order('same', 2), keep());
        assert.equal((await g.products.get('same', { signal: live() }))?.last_updated, 1);
        assert.equal((await g.orders.get('same', { signal: live() }))?.last_updated, 2);
      },
    ],
    [
      'touch: a change sets last_updated to now; an unchanged repeat writes nothing',
      async (a) => {
        const g = guardAdapter(a);
        const first = await g.products.upsert(product('p', 0, { title: 'A' }), touch(1000));
        const same = await g.products.upsert(product('p', 12345, { title: 'A' }), touch(2000));
        assert.equal(same.changed, false, 'same content (only last_updated differs) is not a change');
        assert.equal(same.created, false);
        assert.equal(same.item.last_updated, first.item.last_updated, 'an unchanged write keeps last_updated');
        assert.equal((await g.products.get('p', { signal: live() }))?.last_updated, 1000);
        const changed = await g.products.upsert(product('p', 0, { title: 'B' }), touch(3000));
        assert.equal(changed.changed, true);
        assert.equal(changed.item.last_updated, 3000);
        assert.equal((await g.products.get('p', { signal: live() }))?.title, 'B');
        assert.equal(await g.products.count({ signal: live() }), 1);
      },
    ],
    [
      'touch: last_updated is monotonic per item when the clock goes back',
      async (a) => {
        const g = guardAdapter(a);
        await g.orders.upsert(order('o', 0, { status: 'pending' }), touch(10_000));
        const r = await g.orders.upsert(order('o', 0, { status: 'paid' }), touch(5_000));
        assert.equal(r.item.last_updated, 10_001, 'max(now, previous + 1)');
        const r2 = await g.orders.upsert(order('o', 0, { status: 'shipped' }), touch(10_001));
        assert.equal(r2.item.last_updated, 10_002);
        assert.equal((await g.orders.get('o', { signal: live() }))?.last_updated, 10_002);
      },
    ],
    [
      'keep: last_updated is stored as given; an identical repeat is unchanged',
      async (a) => {
        const g = guardAdapter(a);
        const r = await g.products.upsert(product('k', 777), keep());
        assert.equal(r.item.last_updated, 777);
        const again = await g.products.upsert(product('k', 777), keep());
        assert.equal(again.changed, false);
        const older = await g.products.upsert(product('k', 5), keep());
        assert.equal(older.changed, true, 'keep replicates, even backwards');
        assert.equal((await g.products.get('k', { signal: live() }))?.last_updated, 5);
        const { last_updated: _drop, ...noStamp } = product('n', 0);
        const zero = await g.products.upsert(noStamp as Product, keep());
        assert.equal(zero.item.last_updated, 0, 'missing last_updated counts as 0');
        assert.equal(await g.products.count({ signal: live() }), 2);
      },
    ],
    [
      'count is exact after creates and updates',
      async (a) => {
        const g = guardAdapter(a);
        for (let i = 0; i < 12; i++) await g.orders.upsert(order(`o${i}`, i), keep());
        for (let i = 0; i < 12; i += 2) await g.orders.upsert(order(`o${i}`, 100 + i, { status: 'shipped' }), keep());
        assert.equal(await g.orders.count({ signal: live() }), 12);
        assert.equal(await g.products.count({ signal: live() }), 0);
      },
    ],
    [
      'offset and keyset paging in both sort orders list every item once, in order',
      async (a) => {
        const g = guardAdapter(a, { validate: 'all' });
        const items = Array.from({ length: 23 }, (_, i) => product(`p${String(i).padStart(2, '0')}`, 1000 + Math.floor(i / 3)));
        await seed(a, 'products', items.slice().reverse());
        for (const sortorder of ['asc', 'desc'] as const) {
          for (const mode of ['offset', 'keyset'] as const) {
            for (const limit of [1, 4, 23, 50]) {
              assert.deepEqual(await walk(g.products, sortorder, mode, limit, items.length), sorted(items, sortorder), `${mode} ${sortorder} limit ${limit}`);
            }
          }
        }
      },
    ],
    [
      'ties on last_updated are broken by _id',
      async (a) => {
        const g = guardAdapter(a);
        const ids = ['b', 'a', 'c', 'ab', 'B', 'a-1', '10', '9'];
        await seed(a, 'orders', ids.map((id) => order(id, 42)));
        const asc = [...ids].sort();
        const page = await g.orders.list({ sortorder: 'asc', limit: 100, signal: live() });
        assert.deepEqual(page.map((x) => x._id), asc);
        const desc = await g.orders.list({ sortorder: 'desc', limit: 100, signal: live() });
        assert.deepEqual(desc.map((x) => x._id), [...asc].reverse());
        const mid = await g.orders.list({ sortorder: 'asc', limit: 2, after: { last_updated: 42, _id: 'a' }, signal: live() });
        assert.deepEqual(mid.map((x) => x._id), asc.slice(asc.indexOf('a') + 1, asc.indexOf('a') + 3));
      },
    ],
    [
      '`after` is strictly after, also for keys that are not stored',
      async (a) => {
        const g = guardAdapter(a);
        await seed(a, 'products', [product('a', 10), product('b', 10), product('c', 20), product('d', 30)]);
        const ids = async (sortorder: SortOrder, after: SortKey) => (await g.products.list({ sortorder, limit: 10, after, signal: live() })).map((x) => x._id);
        assert.deepEqual(await ids('asc', { last_updated: 10, _id: 'a' }), ['b', 'c', 'd']);
        assert.deepEqual(await ids('asc', { last_updated: 10, _id: 'aa' }), ['b', 'c', 'd']);
        assert.deepEqual(await ids('asc', { last_updated: 15, _id: '' }), ['c', 'd']);
        assert.deepEqual(await ids('asc', { last_updated: 20, _id: 'c' }), ['d']);
        assert.deepEqual(await ids('asc', { last_updated: 30, _id: 'd' }), []);
        assert.deepEqual(await ids('desc', { last_updated: 20, _id: 'c' }), ['b', 'a']);
        assert.deepEqual(await ids('desc', { last_updated: 10, _id: 'b' }), ['a']);
        assert.deepEqual(await ids('desc', { last_updated: 10, _id: 'a' }), []);
        assert.deepEqual(await ids('desc', { last_updated: 99, _id: 'z' }), ['d', 'c', 'b', 'a']);
        const past = await g.products.list({ sortorder: 'asc', limit: 10, offset: 4, signal: live() });
        assert.deepEqual(past, [], 'an offset at the end gives an empty page');
        const far = await g.products.list({ sortorder: 'desc', limit: 10, offset: 1000, signal: live() });
        assert.deepEqual(far, [], 'an offset past the end gives an empty page');
        const tail = await g.products.list({ sortorder: 'desc', limit: 10, offset: 3, signal: live() });
        assert.deepEqual(tail.map((x) => x._id), ['a']);
      },
    ],
    [
      'every item exactly once over random catalogs with many ties (property)',
      async (_unused, config) => {
        const fc = loadFastCheck();
        const catalog = fc.uniqueArray(
          fc.record({ _id: fc.stringMatching(/^[a-d0-9_-]{1,4}$/), last_updated: fc.integer({ min: 0, max: 4 }) }),
          { selector: (x) => x._id, maxLength: 40 },
        );
        await fc.assert(
          fc.asyncProperty(catalog, fc.integer({ min: 1, max: 9 }), fc.constantFrom<Entity>('products', 'orders'), async (rows, limit, entity) => {
            const adapter = await config.factory();
            try {
              const items = rows.map((r) => makeItem(entity, r._id, r.last_updated));
              await seed(adapter, entity, items);
              const store = guardAdapter(adapter, { validate: 'all' }).entity(entity);
              assert.equal(await store.count({ signal: live() }), items.length);
              for (const sortorder of ['asc', 'desc'] as const) {
                const expected = sorted(items, sortorder);
                for (const mode of ['offset', 'keyset'] as const) {
                  assert.deepEqual(await walk(store, sortorder, mode, limit, items.length), expected, `${mode} ${sortorder} limit ${limit}`);
                }
              }
            } finally {
              await config.teardown(adapter);
            }
          }),
          { numRuns: config.propertyRuns },
        );
      },
    ],
    [
      'concurrent upserts of one _id lose no update and create one row',
      async (a, config) => {
        const g = guardAdapter(a);
        const n = config.concurrency;
        const results: UpsertResult<Order>[] = await Promise.all(
          Array.from({ length: n }, (_, i) => g.orders.upsert(order('hot', 0, { feedback: `writer ${i}` }), touch(1_000_000))),
        );
        assert.equal(results.filter((r) => r.created).length, 1, 'exactly one upsert created the row');
        assert.ok(results.every((r) => r.changed), 'every write changed the content');
        const stamps = results.map((r) => r.item.last_updated!).sort((x, y) => x - y);
        assert.deepEqual(stamps, Array.from({ length: n }, (_, i) => 1_000_000 + i), 'each write saw the one before it (monotonic, none lost)');
        const last = results.find((r) => r.item.last_updated === 1_000_000 + n - 1)!;
        assert.deepEqual(await g.orders.get('hot', { signal: live() }), last.item, 'the stored item is the last write');
        assert.equal(await g.orders.count({ signal: live() }), 1);
        const page = await g.orders.list({ sortorder: 'asc', limit: 10, signal: live() });
        assert.equal(page.length, 1, 'one row');
      },
    ],
    [
      'concurrent creates of distinct ids are all stored and counted',
      async (a, config) => {
        const g = guardAdapter(a);
        const n = config.concurrency * 2;
        await Promise.all(Array.from({ length: n }, (_, i) => g.products.upsert(product(`c${i}`, 0), touch(50 + (i % 3)))));
        assert.equal(await g.products.count({ signal: live() }), n);
        assert.equal((await g.products.list({ sortorder: 'asc', limit: n + 1, signal: live() })).length, n);
      },
    ],
    [
      'upsertMany gives the same results and rows as upserts one by one, in input order',
      async (a) => {
        const g = guardAdapter(a);
        // The same writes on two id spaces: `one-*` one upsert at a time, `many-*` in batches.
        const steps: Array<{ options: () => WriteOptions; items: Array<[id: string, last_updated: number, title: string]> }> = [
          { options: keep, items: [['c', 30, 'C'], ['a', 10, 'A'], ['b', 10, 'B']] },
          // Existing (changed, unchanged, older stamp), new, and out of sort order.
          { options: keep, items: [['b', 10, 'B'], ['d', 5, 'D'], ['a', 11, 'A2'], ['c', 1, 'C']] },
          { options: () => touch(5000), items: [['a', 0, 'A2'], ['e', 0, 'E'], ['b', 0, 'B3']] },
          { options: () => touch(4000), items: [['b', 0, 'B4'], ['f', 0, 'F']] },
        ];
        const strip = (r: UpsertResult<Product>, prefix: string) => ({ ...r, item: { ...r.item, _id: r.item._id.slice(prefix.length), sku: undefined } });
        for (const [n, step] of steps.entries()) {
          const one: UpsertResult<Product>[] = [];
          for (const [id, lu, title] of step.items) one.push(await g.products.upsert(product(`one-${id}`, lu, { title }), step.options()));
          const batch = step.items.map(([id, lu, title]) => product(`many-${id}`, lu, { title }));
          const many = await g.products.upsertMany(batch, step.options());
          assert.deepEqual(many.map((r) => r.item._id), batch.map((x) => x._id), `step ${n}: results in input order`);
          assert.deepEqual(many.map((r) => strip(r, 'many-')), one.map((r) => strip(r, 'one-')), `step ${n}: same results as one by one`);
          if (a.products.upsertMany) {
            const raw = await a.products.upsertMany(batch, step.options());
            assert.deepEqual(raw.map((r) => r.item._id), batch.map((x) => x._id), `step ${n}: the adapter's own results in input order`);
            assert.ok(raw.every((r) => !r.created), `step ${n}: writing the batch again creates nothing`);
          }
        }
        for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) {
          const x = await g.products.get(`one-${id}`, { signal: live() });
          const y = await g.products.get(`many-${id}`, { signal: live() });
          assert.deepEqual({ ...y, _id: id, sku: undefined }, { ...x, _id: id, sku: undefined }, `stored "${id}" is the same`);
        }
        assert.equal(await g.products.count({ signal: live() }), 12);
        assert.deepEqual(await g.orders.upsertMany([], keep()), [], 'an empty batch writes nothing');
        assert.equal(await g.orders.count({ signal: live() }), 0);
      },
    ],
    [
      'upsertMany applies a repeated _id in input order, each seeing the one before',
      async (a) => {
        const g = guardAdapter(a);
        const r = await g.orders.upsertMany(
          [order('r', 0, { status: 'pending' }), order('s', 0), order('r', 0, { status: 'paid' }), order('r', 0, { status: 'paid' })],
          touch(100),
        );
        assert.deepEqual(r.map((x) => [x.item._id, x.created, x.changed, x.item.last_updated]), [
          ['r', true, true, 100],
          ['s', true, true, 100],
          ['r', false, true, 101],
          ['r', false, false, 101],
        ]);
        assert.equal((await g.orders.get('r', { signal: live() }))?.status, 'paid');
        assert.equal(await g.orders.count({ signal: live() }), 2);
      },
    ],
    [
      'concurrent upsertMany and upsert calls are atomic per item and lose no update',
      async (a, config) => {
        const g = guardAdapter(a);
        const n = Math.max(2, Math.floor(config.concurrency / 2));
        const ids = ['h1', 'h2', 'h3'];
        const writes = Array.from({ length: n }, (_, i) =>
          i % 4 === 3
            ? Promise.all(ids.map((id) => g.orders.upsert(order(id, 0, { feedback: `writer ${i}` }), touch(1_000_000))))
            : g.orders.upsertMany(ids.map((id) => order(id, 0, { feedback: `writer ${i}` })), touch(1_000_000)),
        );
        const results = (await Promise.all(writes)).flat();
        for (const id of ids) {
          const mine = results.filter((r) => r.item._id === id);
          assert.equal(mine.filter((r) => r.created).length, 1, `${id}: exactly one write created it`);
          const stamps = mine.map((r) => r.item.last_updated!).sort((x, y) => x - y);
          assert.deepEqual(stamps, Array.from({ length: n }, (_, i) => 1_000_000 + i), `${id}: each write saw the one before it`);
          const last = mine.find((r) => r.item.last_updated === 1_000_000 + n - 1)!;
          assert.deepEqual(await g.orders.get(id, { signal: live() }), last.item, `${id}: the stored item is the last write`);
        }
        assert.equal(await g.orders.count({ signal: live() }), ids.length);
      },
    ],
    [
      'an aborted signal rejects every call, and an aborted upsert stores nothing',
      async (a) => {
        await seed(a, 'products', [product('p', 1)]);
        const aborted = AbortSignal.abort();
        const raw = a;
        await assert.rejects(Promise.resolve().then(() => raw.products.list({ sortorder: 'asc', limit: 5, signal: aborted })), 'list');
        await assert.rejects(Promise.resolve().then(() => raw.orders.list({ sortorder: 'desc', limit: 5, after: { last_updated: 1, _id: 'x' }, signal: aborted })), 'keyset list');
        await assert.rejects(Promise.resolve().then(() => raw.products.count({ signal: aborted })), 'count');
        await assert.rejects(Promise.resolve().then(() => raw.products.get('p', { signal: aborted })), 'get');
        await assert.rejects(Promise.resolve().then(() => raw.products.upsert(product('q', 2), { lastUpdated: 'keep', now: 0, signal: aborted })), 'upsert');
        if (raw.products.upsertMany) {
          await assert.rejects(Promise.resolve().then(() => raw.products.upsertMany!([product('q', 2)], { lastUpdated: 'keep', now: 0, signal: aborted })), 'upsertMany');
        }
        await assert.rejects(guardAdapter(a).products.upsertMany([product('q', 2)], { lastUpdated: 'keep', now: 0, signal: aborted }), 'guarded upsertMany');
        if (raw.productBySku) await assert.rejects(Promise.resolve().then(() => raw.productBySku!('SKU-p', { signal: aborted })), 'productBySku');
        const g = guardAdapter(a);
        await assert.rejects(g.products.list({ sortorder: 'asc', limit: 5, signal: aborted }), 'guarded list');
        assert.equal(await g.products.get('q', { signal: live() }), undefined, 'the aborted upsert stored nothing');
        assert.equal(await g.products.count({ signal: live() }), 1);
      },
    ],
    [
      'returned shapes are valid, raw and through the guard',
      async (a) => {
        const items = [product('s1', 1, { variations: [{ size: 'M', prices: [{ tag: 'default', currency: 'USD', number: 19.99 }] }] }), product('s2', 2)];
        await seed(a, 'products', items);
        await seed(a, 'orders', [order('o1', 3, { total: { amount: 10.5, currency: 'EUR' } })]);
        for (const e of both) {
          const raw = await a[e].list({ sortorder: 'asc', limit: 10, signal: live() });
          assert.ok(Array.isArray(raw), `${e}: list returns an array`);
          for (const x of raw) {
            const doc = isRawJson(x) ? JSON.parse(x.json) : x;
            const parsed = ITEM_SCHEMAS[e].safeParse(doc);
            assert.ok(parsed.success, `${e}: a listed item is a valid webhook-form item`);
            if (isRawJson(x)) {
              assert.equal(x._id, doc._id, `${e}: raw JSON _id matches its key`);
              assert.equal(x.last_updated, doc.last_updated, `${e}: raw JSON last_updated matches its key`);
            }
            assert.deepEqual(doc, await a[e].get(doc._id, { signal: live() }), `${e}: listed item equals get`);
          }
          const n = await a[e].count({ signal: live() });
          assert.ok(Number.isSafeInteger(n) && n === raw.length, `${e}: count is an exact integer`);
          const guarded = await guardAdapter(a, { validate: 'all' }).entity(e).list({ sortorder: 'desc', limit: 10, signal: live() });
          assert.equal(guarded.length, raw.length);
        }
        assert.deepEqual((await a.products.get('s1', { signal: live() }))?.variations?.[0]?.prices?.[0]?.number, 19.99, 'decimal money survives');
      },
    ],
    [
      'large documents are stored and listed whole',
      async (a, config) => {
        const g = guardAdapter(a, { validate: 'all' });
        const chars = config.largeDocumentChars;
        const description = 'Größe ✓ 日本 '.repeat(Math.ceil(chars / 11)).slice(0, chars);
        const big = product('big', 7, { description, variations: Array.from({ length: 200 }, (_, i) => ({ variationid: `v${i}`, size: 'XL', availabilities: [{ tag: 'default', quantity: i }] })) });
        await g.products.upsert(big, keep());
        assert.deepEqual(await g.products.get('big', { signal: live() }), big);
        const [listed] = await g.products.list({ sortorder: 'asc', limit: 1, signal: live() });
        assert.equal(listed._id, 'big');
        assert.deepEqual(listed.doc, big);
        assert.ok(listed.json.length >= chars, 'the listed JSON holds the whole document');
      },
    ],
    [
      'unicode ids are stored, found and ordered by _id',
      async (a) => {
        const g = guardAdapter(a);
        // These ids order the same in UTF-16 and code-point order; the id-order cases cover where they part.
        const ids = ['café', 'cafe', 'naïve-ü', '日本語-商品', '🙂-emoji', 'Ωmega', 'a b', 'ASCII', 'ß', 'x'.repeat(200) + 'é'];
        await seed(a, 'orders', ids.map((id) => order(id, 5)));
        for (const id of ids) assert.equal((await g.orders.get(id, { signal: live() }))?._id, id, `get ${id}`);
        const expected = [...ids].sort();
        assert.deepEqual(await walk(g.orders, 'asc', 'keyset', 3, ids.length), expected);
        assert.deepEqual(await walk(g.orders, 'desc', 'keyset', 4, ids.length), [...expected].reverse());
        assert.deepEqual(await walk(g.orders, 'asc', 'offset', 5, ids.length), expected);
      },
    ],
    [
      'productBySku finds the product with that SKU',
      async (a) => {
        const g = guardAdapter(a);
        assert.ok(g.hasSkuLookup, 'the adapter has productBySku (BaseStoreAdapter provides one)');
        await seed(a, 'products', [product('p1', 1, { sku: 'MUG-1' }), product('p2', 2, { sku: 'Ünï-2' }), product('p3', 3, { sku: undefined })]);
        assert.equal((await g.productBySku('MUG-1', { signal: live() }))?._id, 'p1');
        assert.equal((await g.productBySku('Ünï-2', { signal: live() }))?._id, 'p2');
        assert.equal(await g.productBySku('mug-1', { signal: live() }), undefined, 'SKUs are case-sensitive');
        assert.equal(await g.productBySku('MUG-1 ', { signal: live() }), undefined, 'SKUs match exactly');
        assert.equal(await g.productBySku('nope', { signal: live() }), undefined);
        await g.products.upsert(product('p1', 0, { sku: 'MUG-1B' }), touch(100));
        assert.equal(await g.productBySku('MUG-1', { signal: live() }), undefined, 'a changed SKU no longer finds the product');
        assert.equal((await g.productBySku('MUG-1B', { signal: live() }))?._id, 'p1');
      },
    ],
    ...idCases<A>(),
  ];
}

/** Names of the tests `runAdapterConformance` registers (for `skip`). */
export const ADAPTER_CONFORMANCE_TESTS: readonly string[] = cases().map(([name]) => name);

/**
 * Registers the adapter conformance tests with your test runner.
 *
 * @example node:test
 * ```ts
 * import { describe, test } from 'node:test';
 * import { runAdapterConformance } from 'storebridge/conformance';
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 * runAdapterConformance({ describe, test, factory: () => createMemoryAdapter() });
 * ```
 */
export function runAdapterConformance<A extends StoreAdapter>(options: AdapterConformanceOptions<A>): void {
  const config = parseOptions(options);
  const skip = new Set(options.skip ?? []);
  for (const name of skip) {
    if (!ADAPTER_CONFORMANCE_TESTS.includes(name)) throw new InvalidOptionError('skip', `no test is named "${name}"`);
  }
  const register = () => {
    for (const [name, run] of cases<A>()) {
      if (skip.has(name)) continue;
      options.test(name, async () => {
        const adapter = await config.factory();
        try {
          await run(adapter, config);
        } finally {
          await config.teardown(adapter);
        }
      });
    }
  };
  if (options.describe) options.describe(options.name ?? 'adapter conformance', register);
  else register();
}
