/**
 * Conformance cases for what names an item besides its `_id` (`uniqueKeyOf`): a product's `sku`
 * and an order's `orderid` name one item among the store's own writes, also under concurrent
 * creates (the database enforces it, not a read before the write); partial (`merge`) writes; and
 * the Idempotency-Key records of an adapter that keeps them.
 */
import assert from 'node:assert/strict';
import type { StoreAdapter, UpsertResult, WriteOptions } from '../adapter';
import { guardAdapter, type GuardedAdapter } from '../adapter-guard';
import type { Entity, ItemOf } from '../contract/entities';
import { keep, live, order, product, touch, type Case } from './suite-helpers';
import { ENTITIES, entityOf } from '../contract/entities';


/** An item of `entity` whose unique member is `key` (products carry a SKU of their own otherwise). */
function keyed<E extends Entity>(entity: E, _id: string, key: string | undefined): ItemOf<E> {
  const item = entity === 'products' ? product(_id, 0, { sku: key }) : order(_id, 0, { orderid: key });
  if (key === undefined) delete (item as Record<string, unknown>)[entityOf(entity).naturalKey];
  return item as ItemOf<E>;
}

/** The item a lookup by the unique member finds (`undefined` when the adapter has no such lookup). */
async function lookUp(g: GuardedAdapter, a: StoreAdapter, entity: Entity, key: string): Promise<string | undefined | null> {
  if (entity === 'products') return a.productBySku ? ((await g.productBySku(key, { signal: live() }))?._id ?? null) : undefined;
  return a.orderByOrderId ? ((await g.orderByOrderId(key, { signal: live() }))?._id ?? null) : undefined;
}

/** Asserts `err` is the kit's DuplicateKeyError for this key (the guard passes it unchanged). */
function assertDuplicate(err: unknown, entity: Entity, key: string, what: string): void {
  const e = err as { code?: unknown; field?: unknown; value?: unknown; message?: unknown };
  assert.equal(e?.code, 'DUPLICATE_KEY', `${what}: refused with DuplicateKeyError, not ${String(e?.message ?? err)}`);
  assert.equal(e.field, entityOf(entity).naturalKey, `${what}: the error names the member`);
  assert.equal(e.value, key, `${what}: the error names the value`);
}

function concurrentCreates(entity: Entity): Case<StoreAdapter>[1] {
  return async (a, config) => {
    const g = guardAdapter(a);
    const n = config.concurrency * 4;
    const outcomes = await Promise.allSettled(Array.from({ length: n }, (_, i) => g.entity(entity).upsert(keyed(entity, `race-${i}`, 'RACE'), touch(1000 + i))));
    const stored = outcomes.filter((o): o is PromiseFulfilledResult<UpsertResult<ItemOf<Entity>>> => o.status === 'fulfilled');
    assert.equal(stored.length, 1, `${n} concurrent creates of one ${entityOf(entity).naturalKey}: exactly one stored`);
    for (const o of outcomes) if (o.status === 'rejected') assertDuplicate(o.reason, entity, 'RACE', 'each other create');
    assert.equal(await g.entity(entity).count({ signal: live() }), 1, 'one item counted');
    assert.equal((await g.entity(entity).list({ sortorder: 'asc', limit: n, signal: live() })).length, 1, 'one item listed');
    const found = await lookUp(g, a, entity, 'RACE');
    if (found !== undefined) assert.equal(found, stored[0].value.item._id, `the lookup by ${entityOf(entity).naturalKey} finds the one stored`);
  };
}

/** The rule one write at a time, for `upsert` and `upsertMany` alike. */
async function keyRule(a: StoreAdapter, entity: Entity): Promise<void> {
  const g = guardAdapter(a);
  const s = g.entity(entity);
  const m = entityOf(entity).naturalKey;
  await s.upsert(keyed(entity, 'a', 'K1'), touch(10));
  await assert.rejects(s.upsert(keyed(entity, 'b', 'K1'), touch(11)), (err) => (assertDuplicate(err, entity, 'K1', `touch: another item's ${m}`), true));
  assert.equal(await s.get('b', { signal: live() }), undefined, 'a refused write stores nothing');
  await assert.rejects(s.upsertMany([keyed(entity, 'c', 'K2'), keyed(entity, 'd', 'K1')], touch(12)), (err) => (assertDuplicate(err, entity, 'K1', 'touch in upsertMany'), true));
  assert.equal(await s.get('d', { signal: live() }), undefined, 'the refused item of a batch is not stored');
  await s.upsert(keyed(entity, 'c', 'K2'), touch(12)); // whether the batch stored it or not (either is allowed)
  for (const [i, blank] of ['', ' ', ''].entries()) await s.upsert(keyed(entity, `blank-${i}`, blank), touch(13));
  await s.upsert(keyed(entity, 'a', 'K3'), touch(14));
  await s.upsert(keyed(entity, 'e', 'K1'), touch(15));
  assert.equal(await lookUp(g, a, entity, 'K1').then((x) => x === undefined ? 'e' : x), 'e', `a ${m} an item gave up is free for another`);
  const replica = await s.upsert({ ...keyed(entity, 'f', 'K3'), last_updated: 16 }, keep());
  assert.equal(replica.created, true, `keep: an item repeating another's ${m} is stored (replication)`);
  assert.equal(await lookUp(g, a, entity, 'K3').then((x) => x === undefined ? 'a' : x), 'a', `keep: the ${m} still names the item that held it`);
  const batch = await s.upsertMany([{ ...keyed(entity, 'g', 'K4'), last_updated: 17 }, { ...keyed(entity, 'h', 'K4'), last_updated: 17 }], keep());
  assert.deepEqual(batch.map((r) => r.created), [true, true], `keep: upsertMany stores a repeated ${m} too`);
  assert.equal(await lookUp(g, a, entity, 'K4').then((x) => x === undefined ? 'g' : x), 'g', `keep: the first of a batch holds the ${m}`);
  assert.equal(await s.count({ signal: live() }), 9, 'count');
}

/** Partial writes: kept members, removed members, and no lost member under concurrency. */
async function mergeRule(a: StoreAdapter, config: { concurrency: number }): Promise<void> {
  const g = guardAdapter(a);
  const merge = (remove: string[] = []): WriteOptions => ({ ...touch(100), merge: { remove } });
  await g.products.upsert(product('m', 0, { title: 'T', brand: 'B', mpn: 'M' }), touch(50));
  const r = await g.products.upsert({ _id: 'm', title: 'T2' }, merge(['mpn']));
  assert.deepEqual(r.item, { _id: 'm', sku: 'SKU-m', title: 'T2', brand: 'B', last_updated: 100 }, 'merge keeps what the item lacks, drops what `remove` names');
  assert.deepEqual(await g.products.get('m', { signal: live() }), r.item, 'and stores it');
  const same = await g.products.upsert({ _id: 'm', brand: 'B' }, merge());
  assert.equal(same.changed, false, 'a merge that changes nothing writes nothing');
  const created = await g.orders.upsert({ _id: 'new', status: 'paid' }, merge(['feedback']));
  assert.deepEqual(created.item, { _id: 'new', status: 'paid', last_updated: 100 }, 'a merge on a new item stores the item');
  // Concurrent partial writes of different members: each must see the one before it.
  const members = ['title', 'brand', 'mpn', 'model', 'description', 'url'] as const;
  const n = Math.min(members.length, Math.max(2, config.concurrency));
  await g.products.upsert(product('c', 0), touch(200));
  await Promise.all(members.slice(0, n).map((member) => g.products.upsert({ _id: 'c', [member]: `${member}!` }, { ...touch(300), merge: { remove: [] } })));
  const c = await g.products.get('c', { signal: live() });
  for (const member of members.slice(0, n)) assert.equal(c?.[member], `${member}!`, `concurrent merges: ${member} not lost`);
  assert.equal(c?.sku, 'SKU-c', 'concurrent merges: a member none of them carried is kept');
}

/** An adapter's Idempotency-Key records (when it keeps them). */
async function idempotencyRecords(a: StoreAdapter, config: { concurrency: number }): Promise<void> {
  const records = guardAdapter(a).idempotency;
  if (!records) return;
  const opts = (now: number) => ({ now, signal: live() });
  const key = 'k'.repeat(64);
  const first = { fingerprint: 'f1', expiresAt: 1000 };
  const claims = await Promise.all(Array.from({ length: config.concurrency }, () => records.claim(key, first, opts(500))));
  assert.equal(claims.filter((c) => c === undefined).length, 1, 'concurrent claims of one key: exactly one wins');
  for (const c of claims) if (c) assert.deepEqual(c, first, 'the others are answered the live record');
  await records.release(key, 'other', { signal: live() });
  assert.deepEqual(await records.claim(key, { fingerprint: 'f2', expiresAt: 2000 }, opts(600)), first, 'release with another fingerprint frees nothing');
  const done = { fingerprint: 'f1', expiresAt: 5000, outcome: { entity: 'orders' as const, id: 'o-1', warnings: ['w'] } };
  await records.settle(key, done, { signal: live() });
  await records.release(key, 'f1', { signal: live() });
  assert.deepEqual(await records.claim(key, { fingerprint: 'f3', expiresAt: 9000 }, opts(4999)), done, 'a settled record stays (release frees only an unfinished claim) until it expires');
  assert.equal(await records.claim(key, { fingerprint: 'f3', expiresAt: 9000 }, opts(5000)), undefined, 'an expired record is taken over');
  const other = 'o'.repeat(64);
  assert.equal(await records.claim(other, first, opts(5000)), undefined, 'keys are separate');
  await records.release(other, 'f1', { signal: live() });
  assert.equal(await records.claim(other, first, opts(5001)), undefined, 'a released claim frees its key');
}

export function keyCases<A extends StoreAdapter>(): Case<A>[] {
  return [
    ['concurrent creates of distinct products with one SKU store exactly one; the others are refused with DuplicateKeyError', concurrentCreates('products')],
    ['concurrent creates of distinct orders with one orderid store exactly one (the idempotent order create); the others are refused with DuplicateKeyError', concurrentCreates('orders')],
    ['a touch write never takes a sku or orderid another item holds; blanks never collide; a keep write stores the item and the key keeps its holder', async (a) => {
      for (const entity of ENTITIES) await keyRule(a, entity);
    }],
    ['merge writes keep the members the item lacks and drop the ones named; concurrent merges of different members lose none', mergeRule],
    ['Idempotency-Key records: one of concurrent claims wins, a live record is answered, release frees only an unfinished claim, an expired one is taken over', idempotencyRecords],
  ] as Case<A>[];
}
