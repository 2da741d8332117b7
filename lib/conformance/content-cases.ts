/**
 * Conformance cases for what is stored: returned shapes (raw and through the guard), large
 * documents, unicode ids and `productBySku`.
 */
import assert from 'node:assert/strict';
import type { StoreAdapter } from '../adapter';
import { isRawJson } from '../adapter';
import { guardAdapter } from '../adapter-guard';
import { ENTITIES, entityOf } from '../contract/entities';
import { keep, live, order, product, seed, touch, walk, type Case } from './suite-helpers';

export function contentCases<A extends StoreAdapter>(): Case<A>[] {
  const both = ENTITIES;
  return [
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
            const parsed = entityOf(e).schema.safeParse(doc);
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
  ];
}
