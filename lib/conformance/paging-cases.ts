/**
 * Conformance cases for listing: offset and keyset paging in both sort orders, ties broken by
 * `_id`, `after` as strictly after, and every item exactly once over random catalogs (a fast-check
 * property).
 */
import assert from 'node:assert/strict';
import type { StoreAdapter, SortKey } from '../adapter';
import { guardAdapter } from '../adapter-guard';
import type { Entity } from '../contract/entities';
import type { SortOrder } from '../contract/messages';
import { live, loadFastCheck, makeItem, order, product, seed, sorted, walk, type Case } from './suite-helpers';
import { ENTITIES } from '../contract/entities';

export function pagingCases<A extends StoreAdapter>(): Case<A>[] {
  const both = ENTITIES;
  return [
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
      'listKeys (when the adapter has it) answers the keys of the page list answers',
      async (a) => {
        const items = Array.from({ length: 17 }, (_, i) => product(`k${String(i).padStart(2, '0')}`, 500 + Math.floor(i / 4)));
        await seed(a, 'products', items.slice().reverse());
        // Array.from, not xs.map: a native driver's array belongs to another realm under test VMs.
        const keys = (xs: ReadonlyArray<{ _id: string; last_updated: number }>) => Array.from(xs, (x) => ({ _id: x._id, last_updated: x.last_updated }));
        // Through the guard (which checks order and limit), and from the adapter itself when it has the method.
        const g = guardAdapter(a).products;
        const own = a.products.listKeys?.bind(a.products);
        for (const sortorder of ['asc', 'desc'] as const) {
          for (const page of [{ limit: 5 }, { limit: 5, offset: 6 }, { limit: 50, offset: 16 }, { limit: 4, after: { last_updated: 501, _id: 'k05' } }, { limit: 3, after: { last_updated: 502, _id: '' } }]) {
            const opts = { sortorder, ...page, signal: live() };
            const expected = keys(await g.list(opts));
            assert.deepEqual(keys(await g.listKeys(opts)), expected, `guarded ${sortorder} ${JSON.stringify(page)}`);
            if (own) assert.deepEqual(keys(await own(opts)), expected, `listKeys ${sortorder} ${JSON.stringify(page)}`);
          }
        }
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
          fc.asyncProperty(catalog, fc.integer({ min: 1, max: 9 }), fc.constantFrom<Entity>(...ENTITIES), async (rows, limit, entity) => {
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
  ];
}
