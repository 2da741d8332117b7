import fc from 'fast-check';
import { BaseEntityStore, BaseStoreAdapter, type ListOptions, type StoreAdapter, type UpsertResult, type WriteOptions } from '../../lib/adapter';
import { guardAdapter } from '../../lib/adapter-guard';
import { AdapterContractError, AdapterError } from '../../lib/errors';
import { createMemoryAdapter } from '../../adapters/memory';
import type { Order, Product } from '../../lib/contract/webhook';

const keep = (): WriteOptions => ({ lastUpdated: 'keep', now: 0, signal: new AbortController().signal });
const product = (_id: string, last_updated: number, title = `P ${_id}`): Product => ({ _id, last_updated, title });

/** Only the four required members: the guard must fall back to `upsert` per item. */
class MapStore<T extends { _id: string; last_updated?: number }> extends BaseEntityStore<T> {
  readonly rows = new Map<string, T>();
  puts = 0;
  async list(_o: ListOptions) {
    return [...this.rows.values()];
  }
  async count() {
    return this.rows.size;
  }
  async get(id: string) {
    return this.rows.get(id);
  }
  protected async put(item: T) {
    this.puts++;
    this.rows.set(item._id, item);
  }
}
class MapAdapter extends BaseStoreAdapter {
  readonly products = new MapStore<Product>();
  readonly orders = new MapStore<Order>();
}

/** An adapter whose products' `upsertMany` returns `results(items)` as is. */
function lying(results: (items: readonly Product[]) => unknown): StoreAdapter {
  const real = createMemoryAdapter();
  return { products: { ...bind(real.products), upsertMany: async (items: readonly Product[]) => results(items) as UpsertResult<Product>[] }, orders: real.orders };
}
function bind(s: ReturnType<typeof createMemoryAdapter>['products']) {
  return { list: s.list.bind(s), count: s.count.bind(s), get: s.get.bind(s), upsert: s.upsert.bind(s) };
}

describe('upsertMany through the guard', () => {
  test('an adapter without upsertMany (plain object): upsert per item, in order', async () => {
    const real = createMemoryAdapter();
    const calls: string[] = [];
    const plain: StoreAdapter = {
      products: { ...bind(real.products), upsert: (item, o) => (calls.push(item._id), real.products.upsert(item, o)) },
      orders: real.orders,
    };
    const r = await guardAdapter(plain).products.upsertMany([product('b', 2), product('a', 1), product('b', 3)], keep());
    expect(calls).toEqual(['b', 'a', 'b']);
    expect(r.map((x) => [x.item._id, x.created, x.changed])).toEqual([['b', true, true], ['a', true, true], ['b', false, true]]);
    expect(await real.products.count()).toBe(2);
  });

  test('BaseEntityStore default and the memory adapter give the same results as upserts one by one (property)', async () => {
    const items = fc.array(fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd'), lu: fc.integer({ min: 0, max: 3 }), title: fc.constantFrom('x', 'y') }), { maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(fc.array(items, { maxLength: 4 }), fc.boolean(), async (batches, touch) => {
        const options = (): WriteOptions => (touch ? { lastUpdated: 'touch', now: 100, signal: new AbortController().signal } : keep());
        const one = createMemoryAdapter();
        const many = [createMemoryAdapter(), new MapAdapter()];
        for (const batch of batches) {
          const docs = batch.map(({ id, lu, title }) => product(id, lu, title));
          const expected: UpsertResult<Product>[] = [];
          for (const d of docs) expected.push(await one.products.upsert(d, options()));
          for (const a of many) expect(await a.products.upsertMany(docs, options())).toEqual(expected);
        }
        for (const id of ['a', 'b', 'c', 'd']) {
          for (const a of many) expect(await a.products.get(id, { signal: new AbortController().signal })).toEqual(await one.products.get(id));
        }
      }),
      { numRuns: 60 },
    );
  });

  test('results are checked: count, order (_id per position), shape', async () => {
    const items = [product('a', 1), product('b', 2)];
    const ok = (x: Product): UpsertResult<Product> => ({ item: x, changed: true, created: true });
    await expect(guardAdapter(lying((xs) => xs.slice(1).map(ok))).products.upsertMany(items, keep())).rejects.toThrow(/returned 1 results for 2 items/);
    await expect(guardAdapter(lying((xs) => [...xs].reverse().map(ok))).products.upsertMany(items, keep())).rejects.toThrow(/wrote "a", returned "b"/);
    await expect(guardAdapter(lying(() => 'nope')).products.upsertMany(items, keep())).rejects.toBeInstanceOf(AdapterContractError);
    await expect(guardAdapter(lying((xs) => xs.map(() => null))).products.upsertMany(items, keep())).rejects.toThrow(/not an upsert result/);
    // Invalid items: the full check (default) catches a schema violation; `keys` only key problems.
    const badTitle = (xs: readonly Product[]) => xs.map((x) => ok({ ...x, title: 42 as unknown as string }));
    await expect(guardAdapter(lying(badTitle)).products.upsertMany(items, keep())).rejects.toBeInstanceOf(AdapterContractError);
    await expect(guardAdapter(lying(badTitle), { validateWrites: 'keys' }).products.upsertMany(items, keep())).resolves.toHaveLength(2);
    const noStamp = (xs: readonly Product[]) => xs.map((x) => ok({ ...x, last_updated: -1 }));
    await expect(guardAdapter(lying(noStamp), { validateWrites: 'keys' }).products.upsertMany(items, keep())).rejects.toThrow(/no valid last_updated/);
    await expect(guardAdapter(lying((xs) => xs.map(() => ok('x' as unknown as Product))), { validateWrites: 'keys' }).products.upsertMany(items, keep())).rejects.toThrow(/not an object/);
  });

  test('a throwing upsertMany becomes AdapterError; an aborted signal rejects and stores nothing', async () => {
    const failing = lying(() => {
      throw new Error('disk full');
    });
    await expect(guardAdapter(failing).products.upsertMany([product('a', 1)], keep())).rejects.toBeInstanceOf(AdapterError);
    const base = new MapAdapter();
    const aborted: WriteOptions = { lastUpdated: 'keep', now: 0, signal: AbortSignal.abort() };
    await expect(guardAdapter(base).products.upsertMany([product('a', 1)], aborted)).rejects.toBeTruthy();
    await expect(guardAdapter(createMemoryAdapter()).products.upsertMany([product('a', 1)], aborted)).rejects.toBeTruthy();
    expect(base.products.puts).toBe(0);
  });

  test('upsertMany that is not a function is refused when the adapter is wrapped', () => {
    const real = createMemoryAdapter();
    expect(() => guardAdapter({ products: { ...bind(real.products), upsertMany: 5 as never }, orders: real.orders })).toThrow(/upsertMany must be a function/);
  });
});
