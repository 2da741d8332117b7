/**
 * Conformance cases for ids: their order and exact matching across the whole of Unicode, and NUL
 * (U+0000) in looked-up and written values.
 *
 * Ids compare in code-point order, which is the order of their UTF-8 bytes (`compareIds`): the
 * order of SQLite's BINARY collation, PostgreSQL's `COLLATE "C"` and MariaDB's binary columns.
 * JavaScript's `<` compares UTF-16 code units instead, and the two disagree between astral
 * characters (surrogate pairs: emoji, 𠮷) and U+E000–U+FFFF (private use, halfwidth and fullwidth
 * forms). A database column with a linguistic collation (MariaDB's default `utf8mb4_general_ci`
 * makes `a` = `A` and every astral character equal) fails these cases.
 */
import assert from 'node:assert/strict';
import type { EntityStore, SortKey, StoreAdapter } from '../adapter';
import { guardAdapter } from '../adapter-guard';
import type { Entity, ItemOf } from '../contract/entities';
import type { SortOrder } from '../contract/messages';
import { keep, live, loadFastCheck, makeItem, order, product, walk, type Case, type Config } from './suite-helpers';
import { ENTITIES } from '../contract/entities';

/** The databases' order: UTF-8 bytes. Written out here so the suite does not trust `compareIds`. */
const byUtf8 = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

function inOrder(ids: readonly string[], sortorder: SortOrder): string[] {
  const asc = [...ids].sort(byUtf8);
  return sortorder === 'asc' ? asc : asc.reverse();
}

/** Ids strictly after `probe` in `sortorder` (all ids share one `last_updated`). */
function after(ids: readonly string[], probe: string, sortorder: SortOrder): string[] {
  const sign = sortorder === 'asc' ? 1 : -1;
  return inOrder(ids, sortorder).filter((id) => sign * byUtf8(id, probe) > 0);
}

/**
 * Characters of ids: a fixed set shared between ids (so they share prefixes and tie long), and any
 * code point of each range where orders or collations part, control characters (U+0000–U+001F)
 * aside: the contract refuses those in ids.
 */
function idArbitrary(fc: typeof import('fast-check')) {
  const codePoint = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCodePoint(c));
  const unit = fc.oneof(
    fc.constantFrom('a', 'A', 'b', ' ', '~', '\u007f', 'é', 'ß', '\u0800', '\uD7FF', '\uE000', 'ｱ', '\uFFFD', '\uFFFF', '😀', '𠮷', '\u{10FFFF}'),
    codePoint(0x20, 0x7f),
    codePoint(0x80, 0xd7ff),
    codePoint(0xe000, 0xffff),
    codePoint(0x10000, 0x10ffff),
  );
  return fc.array(unit, { minLength: 1, maxLength: 6 }).map((units) => units.join(''));
}

async function seedMany<E extends Entity>(adapter: StoreAdapter, entity: E, items: readonly ItemOf<E>[]): Promise<void> {
  await guardAdapter(adapter).entity(entity).upsertMany(items, keep());
}

/** Lists everything strictly after `key` in one page (through the guard, which checks the order). */
async function listAfter(adapter: StoreAdapter, entity: Entity, sortorder: SortOrder, key: SortKey, limit: number): Promise<string[]> {
  const page = await guardAdapter(adapter).entity(entity).list({ sortorder, limit, after: key, signal: live() });
  return page.map((x) => x._id);
}

/** Ids from every range, one `last_updated`: byte order both ways, exact `get` (a fast-check property). */
async function idOrderProperty<A extends StoreAdapter>(_unused: A, config: Config<A>): Promise<void> {
    const fc = loadFastCheck();
    const ids = fc.uniqueArray(idArbitrary(fc), { minLength: 1, maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(ids, fc.array(idArbitrary(fc), { maxLength: 4 }), fc.integer({ min: 1, max: 7 }), fc.constantFrom<Entity>(...ENTITIES), fc.nat(2 ** 40), async (stored, probes, limit, entity, stamp) => {
        const adapter = await config.factory();
        try {
          await seedMany(adapter, entity, stored.map((id) => makeItem(entity, id, stamp)));
          const store = guardAdapter(adapter, { validate: 'all' }).entity(entity);
          assert.equal(await store.count({ signal: live() }), stored.length, 'count');
          for (const sortorder of ['asc', 'desc'] as const) {
            for (const mode of ['offset', 'keyset'] as const) {
              assert.deepEqual(await walk(store, sortorder, mode, limit, stored.length), inOrder(stored, sortorder), `${mode} ${sortorder} limit ${limit}`);
            }
            // Keyset positions that are not stored ids: the database compares its column with a parameter.
            for (const probe of probes) {
              const got = await listAfter(adapter, entity, sortorder, { last_updated: stamp, _id: probe }, stored.length + 1);
              assert.deepEqual(got, after(stored, probe, sortorder), `${sortorder} after ${JSON.stringify(probe)}`);
            }
          }
          // Exact matching: no case folding, no trailing-space padding, no "all astral characters are equal".
          for (const id of [...stored, ...probes]) {
            const found = await store.get(id, { signal: live() });
            assert.equal(found?._id, stored.includes(id) ? id : undefined, `get ${JSON.stringify(id)}`);
          }
        } finally {
          await config.teardown(adapter);
        }
      }),
      { numRuns: config.propertyRuns },
    );
}

/** Issue 14's D4: astral ids against U+E000–U+FFFF on one page. */
async function astralAgainstPrivateUse(a: StoreAdapter): Promise<void> {
    // The reproduction of issue 14's D4: two such items on one page made every page holding both a 500.
    await seedMany(a, 'products', ['😀-1', 'ｱ-1', '𠮷', '\uE000-x', 'z', '\uFFFF'].map((id) => product(id, 1_700_000_000_000)));
    const expected = ['z', '\uE000-x', 'ｱ-1', '\uFFFF', '😀-1', '𠮷'];
    const g = guardAdapter(a, { validate: 'all' });
    const page = await g.products.list({ sortorder: 'asc', limit: 10, signal: live() });
    assert.deepEqual(page.map((x) => x._id), expected, 'one ascending page');
    const desc = await g.products.list({ sortorder: 'desc', limit: 10, signal: live() });
    assert.deepEqual(desc.map((x) => x._id), [...expected].reverse(), 'one descending page');
    for (const sortorder of ['asc', 'desc'] as const) {
      for (const mode of ['offset', 'keyset'] as const) {
        const want = sortorder === 'asc' ? expected : [...expected].reverse();
        assert.deepEqual(await walk(g.products, sortorder, mode, 1, expected.length), want, `${mode} ${sortorder}, one item a page`);
      }
    }
    assert.deepEqual(await listAfter(a, 'products', 'asc', { last_updated: 1_700_000_000_000, _id: 'ｱ-1' }, 10), ['\uFFFF', '😀-1', '𠮷']);
    assert.deepEqual(await listAfter(a, 'products', 'desc', { last_updated: 1_700_000_000_000, _id: '😀-1' }, 10), ['\uFFFF', 'ｱ-1', '\uE000-x', 'z']);
}

/** A NUL in a looked-up value: not found, and no call fails. */
async function nulLookups(a: StoreAdapter): Promise<void> {
    await seedMany(a, 'products', [product('a', 10, { sku: 'S' }), product('b', 10, { sku: 'T' })]);
    await seedMany(a, 'orders', [order('a', 10), order('b', 10)]);
    const g = guardAdapter(a);
    for (const e of ENTITIES) {
      for (const id of ['a\u0000', 'a\u0000b', '\u0000', 'b\u0000\u0000']) {
        assert.equal(await a[e].get(id, { signal: live() }), undefined, `${e}: raw get ${JSON.stringify(id)}`);
        assert.equal(await g.entity(e).get(id, { signal: live() }), undefined, `${e}: guarded get ${JSON.stringify(id)}`);
      }
      // In byte order "a" < "a\0…" < "b": strictly after it ascending is "b", descending "a".
      assert.deepEqual(await listAfter(a, e, 'asc', { last_updated: 10, _id: 'a\u0000b' }, 10), ['b'], `${e}: asc after "a\\0b"`);
      assert.deepEqual(await listAfter(a, e, 'desc', { last_updated: 10, _id: 'a\u0000b' }, 10), ['a'], `${e}: desc after "a\\0b"`);
      assert.deepEqual(await listAfter(a, e, 'asc', { last_updated: 10, _id: '\u0000' }, 10), ['a', 'b'], `${e}: asc after "\\0"`);
      assert.deepEqual(await listAfter(a, e, 'desc', { last_updated: 10, _id: '\u0000' }, 10), [], `${e}: desc after "\\0"`);
      assert.deepEqual(await listAfter(a, e, 'desc', { last_updated: 10, _id: 'b\u0000' }, 10), ['b', 'a'], `${e}: desc after "b\\0"`);
    }
    assert.equal(await g.productBySku('S\u0000', { signal: live() }), undefined, 'productBySku with a NUL');
    assert.equal((await g.productBySku('S', { signal: live() }))?._id, 'a');
}

/** A NUL in a written key: refused with `UnstorableValueError` or stored exactly; in text, stored exactly. */
async function nulWrites(a: StoreAdapter): Promise<void> {
    // The raw adapter: the guard checks returned items against the contract, which refuses
    // control characters in ids and SKUs, so it would reject what an adapter stored exactly.
    const writes: Array<{ entity: Entity; item: ItemOf<Entity> }> = [
      { entity: 'products', item: product('n\u0000ul', 5) },
      { entity: 'products', item: product('sku-nul', 5, { sku: 'S\u0000KU' }) },
      { entity: 'orders', item: order('o\u0000', 5) },
    ];
    const stored = { products: 0, orders: 0 };
    for (const { entity, item } of writes) {
      const store = a[entity] as unknown as EntityStore<ItemOf<Entity>>;
      const what = `${entity} ${JSON.stringify(item._id)}`;
      const outcome = await store.upsert(item, keep()).then(
        (r) => r,
        (err: unknown) => err as Error,
      );
      if (!(outcome instanceof Error)) {
        stored[entity]++;
        assert.deepEqual(outcome.item, item, `${what}: the result is the item`);
        assert.deepEqual(await store.get(item._id, { signal: live() }), item, `${what}: stored exactly`);
      } else {
        assert.equal((outcome as { code?: unknown }).code, 'UNSTORABLE_VALUE', `${what}: refused with UnstorableValueError, not "${outcome.message}"`);
        assert.equal(await store.get(item._id, { signal: live() }), undefined, `${what}: a refused write stores nothing`);
      }
    }
    assert.equal(await a.products.count({ signal: live() }), stored.products, 'products count');
    assert.equal(await a.orders.count({ signal: live() }), stored.orders, 'orders count');
    if (stored.products > 0 && a.productBySku) {
      const bySku = await a.productBySku('S\u0000KU', { signal: live() });
      assert.equal(bySku?._id, 'sku-nul', 'a stored SKU with a NUL is found by it');
    }
    const g = guardAdapter(a);
    const text = product('text-nul', 6, { title: 'a\u0000b', description: '\u0000' });
    await g.products.upsert(text, keep());
    assert.deepEqual(await g.products.get('text-nul', { signal: live() }), text, 'a NUL in a text field is kept');
    const [page] = await guardAdapter(a, { validate: 'all' }).products.list({ sortorder: 'desc', limit: 1, signal: live() });
    assert.deepEqual(page.doc, text, 'and listed exactly');
}

export function idCases<A extends StoreAdapter>(): Case<A>[] {
  return [
    ['ids from every Unicode range with one last_updated list in UTF-8 byte order, both ways, none skipped or repeated (property)', idOrderProperty],
    ['astral ids and ids in U+E000–U+FFFF with one last_updated list in code-point order (not UTF-16 order)', astralAgainstPrivateUse],
    ['a NUL in a looked-up id, SKU or keyset position finds nothing and fails no call', nulLookups],
    ['a NUL in a written _id or sku is refused with UnstorableValueError or stored exactly; in other fields it is stored exactly', nulWrites],
  ];
}
