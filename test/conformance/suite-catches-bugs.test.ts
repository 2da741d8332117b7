/**
 * The conformance suite must fail on broken adapters: each mutant below breaks one rule, and the
 * named suite test must reject on it (while passing on the correct memory adapter).
 */
import { compareKeys, keyOf, rawJson, resolveWrite, type ListOptions, type StoreAdapter, type WriteOptions } from '../../lib/adapter';
import { createMemoryAdapter } from '../../adapters/memory';
import { ADAPTER_CONFORMANCE_TESTS, runAdapterConformance } from '../../lib/conformance';
import type { Order, Product } from '../../lib/contract/webhook';
import { DuplicateKeyError } from '../../lib/errors';

function collect(factory: () => StoreAdapter): Map<string, () => Promise<void>> {
  const tests = new Map<string, () => Promise<void>>();
  runAdapterConformance({ test: (name, fn) => tests.set(name, fn), factory, propertyRuns: 30 });
  return tests;
}

/** A Map-backed adapter whose behaviour a mutation flag bends. */
type Bug = 'inclusive-after' | 'lost-update' | 'ignores-abort' | 'count-off' | 'no-tiebreak' | 'utf16-order' | 'nul-driver-error' | 'check-then-insert' | 'replace-not-merge';

/** What PostgreSQL's driver did with a NUL before the SQL adapter kept them away from it. */
function pgNul(value: string | undefined): void {
  if (value?.includes('\u0000')) throw new Error('invalid byte sequence for encoding "UTF8": 0x00');
}

/** JavaScript's `<` on ids: UTF-16 code units, not code points. */
function utf16Keys(a: { last_updated: number; _id: string }, b: { last_updated: number; _id: string }): number {
  if (a.last_updated !== b.last_updated) return a.last_updated - b.last_updated;
  return a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
}

function mutant(bug: Bug): StoreAdapter {
  const store = <T extends { _id: string; last_updated?: number }>() => {
    const rows = new Map<string, T>();
    return {
      async list({ sortorder, limit, offset = 0, after, signal }: ListOptions) {
        if (bug !== 'ignores-abort') signal.throwIfAborted();
        const sign = sortorder === 'asc' ? 1 : -1;
        if (bug === 'nul-driver-error') pgNul(after?._id);
        const keys = bug === 'utf16-order' ? utf16Keys : compareKeys;
        const cmp = (a: T, b: T) => (bug === 'no-tiebreak' ? sign * ((a.last_updated ?? 0) - (b.last_updated ?? 0)) : sign * keys(keyOf(a), keyOf(b)));
        const all = [...rows.values()].sort(cmp);
        const start = after ? all.findIndex((x) => sign * keys(keyOf(x), after) >= (bug === 'inclusive-after' ? 0 : 1)) : offset;
        return (start < 0 ? [] : all.slice(start, start + limit)).map((x) => rawJson(x._id, x.last_updated ?? 0, JSON.stringify(x)));
      },
      async count({ signal }: { signal: AbortSignal }) {
        if (bug !== 'ignores-abort') signal.throwIfAborted();
        return rows.size + (bug === 'count-off' && rows.size > 3 ? 1 : 0);
      },
      async get(id: string, { signal }: { signal: AbortSignal }) {
        if (bug !== 'ignores-abort') signal.throwIfAborted();
        if (bug === 'nul-driver-error') pgNul(id);
        return rows.get(id);
      },
      async upsert(item: T, options: WriteOptions) {
        if (bug !== 'ignores-abort') options.signal.throwIfAborted();
        if (bug === 'nul-driver-error') pgNul(item._id);
        if (bug === 'check-then-insert') {
          // The SQL adapter's old SKU rule: a read before the write, which concurrent creates all pass.
          const holder = [...rows.values()].find((x) => x._id !== item._id && (x as { sku?: string }).sku === (item as { sku?: string }).sku);
          if (holder && options.lastUpdated === 'touch') throw new DuplicateKeyError('products', 'sku', String((item as { sku?: string }).sku), holder._id);
          await new Promise((r) => setImmediate(r));
        }
        const existing = rows.get(item._id);
        if (bug === 'lost-update') await new Promise((r) => setImmediate(r));
        const result = resolveWrite(existing, item, bug === 'replace-not-merge' ? { ...options, merge: undefined } : options);
        if (result.changed) rows.set(item._id, result.item);
        return result;
      },
    };
  };
  const products = store<Product>();
  return {
    products,
    orders: store<Order>(),
    async productBySku(sku, { signal }) {
      if (bug !== 'ignores-abort') signal.throwIfAborted();
      const page = await products.list({ sortorder: 'asc', limit: 1e6, signal: new AbortController().signal });
      return page.map((x) => JSON.parse(x.json) as Product).find((p) => p.sku === sku);
    },
  };
}

const CASES: Array<[Bug, string]> = [
  ['inclusive-after', '`after` is strictly after, also for keys that are not stored'],
  ['inclusive-after', 'every item exactly once over random catalogs with many ties (property)'],
  ['no-tiebreak', 'ties on last_updated are broken by _id'],
  ['lost-update', 'concurrent upserts of one _id lose no update and create one row'],
  ['ignores-abort', 'an aborted signal rejects every call, and an aborted upsert stores nothing'],
  ['count-off', 'count is exact after creates and updates'],
  ['utf16-order', 'ids from every Unicode range with one last_updated list in UTF-8 byte order, both ways, none skipped or repeated (property)'],
  ['utf16-order', 'astral ids and ids in U+E000–U+FFFF with one last_updated list in code-point order (not UTF-16 order)'],
  ['nul-driver-error', 'a NUL in a looked-up id, SKU or keyset position finds nothing and fails no call'],
  ['nul-driver-error', 'a NUL in a written _id or sku is refused with UnstorableValueError or stored exactly; in other fields it is stored exactly'],
  ['check-then-insert', 'concurrent creates of distinct products with one SKU store exactly one; the others are refused with DuplicateKeyError'],
  ['replace-not-merge', 'merge writes keep the members the item lacks and drop the ones named; concurrent merges of different members lose none'],
];

describe('the adapter conformance suite catches broken adapters', () => {
  test('every case names a suite test', () => {
    for (const [, name] of CASES) expect(ADAPTER_CONFORMANCE_TESTS).toContain(name);
  });
  test.each(CASES)('%s fails "%s"', async (bug, name) => {
    await expect(collect(() => mutant(bug)).get(name)!()).rejects.toThrow();
    await expect(collect(() => createMemoryAdapter()).get(name)!()).resolves.toBeUndefined();
  });
  test('unknown names in skip are refused', () => {
    expect(() => runAdapterConformance({ test: () => undefined, factory: () => createMemoryAdapter(), skip: ['nope'] })).toThrow(/no test is named "nope"/);
  });
});
