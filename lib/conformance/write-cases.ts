/**
 * Conformance cases for concurrent and batched writes: parallel upserts of one `_id` and of
 * distinct ids, `upsertMany` against upserts one by one, and aborted signals.
 */
import assert from 'node:assert/strict';
import type { StoreAdapter, UpsertResult, WriteOptions } from '../adapter';
import { guardAdapter } from '../adapter-guard';
import type { Product, Order } from '../contract/webhook';
import { keep, live, order, product, seed, touch, type Case } from './suite-helpers';

export function writeCases<A extends StoreAdapter>(): Case<A>[] {
  return [
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
  ];
}
