/**
 * Conformance cases for single items: creating, reading, `touch` and `keep` writes, exact counts,
 * and products kept apart from orders.
 */
import assert from 'node:assert/strict';
import type { StoreAdapter } from '../adapter';
import { guardAdapter } from '../adapter-guard';
import type { Product } from '../contract/webhook';
import { keep, live, makeItem, order, product, touch, type Case } from './suite-helpers';
import { ENTITIES } from '../contract/entities';

export function itemCases<A extends StoreAdapter>(): Case<A>[] {
  const both = ENTITIES;
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
  ];
}
