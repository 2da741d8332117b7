/**
 * Conformance cases for `getMany` (the store's batched by-ID read): through the guard, items come
 * back aligned with the ids asked, in any order asked, whatever order the adapter answers in; ids
 * not found are `undefined`; an empty list asks nothing. An adapter with its own `getMany` is also
 * checked raw: only ids asked for, none twice, the items `get` answers. Without one, the guard's
 * fallback (`get` per id) is what runs.
 */
import assert from 'node:assert/strict';
import type { EntityStore, StoreAdapter } from '../adapter';
import { guardAdapter } from '../adapter-guard';
import { ENTITIES, type Entity, type ItemOf } from '../contract/entities';
import { MAX_BY_IDS } from '../contract/limits';
import { keep, live, makeItem, type Case } from './suite-helpers';

/** Stores `n` items of `entity` (`<entity>-0` …) in one call, with `last_updated` out of id order. */
async function stored<E extends Entity>(a: StoreAdapter, entity: E, n: number): Promise<ItemOf<E>[]> {
  const items = Array.from({ length: n }, (_, i) => makeItem(entity, `${entity}-${i}`, 1000 + ((i * 7) % n)));
  const results = await guardAdapter(a).entity(entity).upsertMany(items, keep());
  return results.map((r) => r.item);
}

const raw = <E extends Entity>(a: StoreAdapter, e: E) => (a as unknown as Record<Entity, EntityStore<ItemOf<E>>>)[e];

export function getManyCases<A extends StoreAdapter>(): Case<A>[] {
  return [
    [
      'getMany: items in the order asked, whatever the order of the table',
      async (a) => {
        const g = guardAdapter(a);
        for (const e of ENTITIES) {
          const items = await stored(a, e, 12);
          const asked = [7, 0, 11, 3, 5].map((i) => items[i]._id);
          assert.deepEqual(await g.entity(e).getMany(asked, { signal: live() }), [7, 0, 11, 3, 5].map((i) => items[i]), `${e}: aligned with the ids asked`);
          const reversed = [...items].reverse().map((x) => x._id);
          assert.deepEqual(await g.entity(e).getMany(reversed, { signal: live() }), [...items].reverse(), `${e}: all of them, in reverse`);
          // As many as one batched read asks for.
          const many = await stored(a, e, MAX_BY_IDS);
          const ids = many.map((x) => x._id).reverse();
          const found = await g.entity(e).getMany(ids, { signal: live() });
          assert.deepEqual(found.map((x) => x?._id), ids, `${e}: ${MAX_BY_IDS} ids in one call`);
        }
      },
    ],
    [
      'getMany: ids not found are left out; only ids asked for come back, each once',
      async (a) => {
        const g = guardAdapter(a);
        for (const e of ENTITIES) {
          const items = await stored(a, e, 5);
          const asked = ['nope-1', items[2]._id, 'nope-2', items[0]._id, 'nope-3'];
          assert.deepEqual(await g.entity(e).getMany(asked, { signal: live() }), [undefined, items[2], undefined, items[0], undefined], `${e}: guarded`);
          assert.deepEqual(await g.entity(e).getMany(['nope-1', 'nope-2'], { signal: live() }), [undefined, undefined], `${e}: none found`);
          // Ids that differ from stored ones only by case, padding or unicode form find nothing.
          const lookalikes = [items[1]._id.toUpperCase(), `${items[1]._id} `, `${items[1]._id}\u0301`];
          assert.deepEqual(await g.entity(e).getMany(lookalikes, { signal: live() }), [undefined, undefined, undefined], `${e}: exact ids only`);
          const store = raw(a, e);
          if (typeof store.getMany !== 'function') continue;
          const answer = await store.getMany(asked, { signal: live() });
          assert.ok(Array.isArray(answer), `${e}: raw getMany returns an array`);
          const ids = answer.map((x) => x._id);
          assert.deepEqual([...ids].sort(), [items[0]._id, items[2]._id].sort(), `${e}: raw getMany returns the items found, once each`);
          for (const x of answer) assert.deepEqual(x, await store.get(x._id, { signal: live() }), `${e}: raw getMany answers what get answers`);
        }
      },
    ],
    [
      'getMany: an empty list answers an empty list',
      async (a) => {
        const g = guardAdapter(a);
        for (const e of ENTITIES) {
          await stored(a, e, 3);
          assert.deepEqual(await g.entity(e).getMany([], { signal: live() }), [], `${e}: guarded`);
          const store = raw(a, e);
          if (typeof store.getMany === 'function') assert.deepEqual([...(await store.getMany([], { signal: live() }))], [], `${e}: raw`);
        }
      },
    ],
  ];
}
