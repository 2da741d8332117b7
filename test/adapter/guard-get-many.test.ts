/**
 * `getMany` through the guard: the adapter's own `getMany` (one call, distinct ids) or, without
 * one, `get` per id; the answer aligned with the ids asked; what the adapter returns is checked
 * (valid items, only ids asked for, none twice) and its failures become `AdapterError`.
 */
import fc from 'fast-check';
import { type EntityStore, type StoreAdapter } from '../../lib/adapter';
import { guardAdapter } from '../../lib/adapter-guard';
import { AdapterContractError, AdapterError } from '../../lib/errors';
import { createMemoryAdapter } from '../../adapters/memory';
import type { Product } from '../../lib/contract/webhook';

const signal = () => new AbortController().signal;
const product = (_id: string, last_updated = 1): Product => ({ _id, last_updated, title: `P ${_id}` });

function memoryWith(ids: readonly string[]) {
  return createMemoryAdapter({ products: ids.map((id, i) => product(id, i)) });
}

/** The memory adapter's products without `getMany`, counting `get` calls and the most in flight at once. */
function withoutGetMany(ids: readonly string[]) {
  const real = memoryWith(ids);
  const stats = { gets: [] as string[], inFlight: 0, max: 0 };
  const products: EntityStore<Product> = {
    list: (o) => real.products.list(o),
    count: (o) => real.products.count(o),
    get: async (id, o) => {
      stats.gets.push(id);
      stats.max = Math.max(stats.max, ++stats.inFlight);
      await new Promise((r) => setImmediate(r));
      stats.inFlight--;
      return real.products.get(id, o);
    },
    upsert: (item, o) => real.products.upsert(item, o),
  };
  const adapter: StoreAdapter = { products, orders: real.orders };
  return { adapter, stats };
}

/** An adapter whose products' `getMany` answers `answer(ids)` as is. */
function lying(answer: (ids: readonly string[]) => unknown): StoreAdapter {
  const real = memoryWith(['a', 'b', 'c']);
  const p = real.products;
  return {
    products: { list: (o) => p.list(o), count: (o) => p.count(o), get: (id, o) => p.get(id, o), upsert: (i, o) => p.upsert(i, o), getMany: async (ids) => answer(ids) as Product[] },
    orders: real.orders,
  };
}

describe('getMany through the guard', () => {
  test('without getMany: get per id, a few at a time, the answer aligned with the ids', async () => {
    const { adapter, stats } = withoutGetMany(Array.from({ length: 40 }, (_, i) => `p${i}`));
    const ids = ['p3', 'zz', 'p0', ...Array.from({ length: 30 }, (_, i) => `p${10 + i}`)];
    const found = await guardAdapter(adapter).products.getMany(ids, { signal: signal() });
    expect(found.map((x) => x?._id)).toEqual(ids.map((id) => (id === 'zz' ? undefined : id)));
    expect([...stats.gets].sort()).toEqual([...ids].sort());
    expect(stats.max).toBeGreaterThan(1);
    expect(stats.max).toBeLessThanOrEqual(8);
  });

  test('an id repeated in the call is read once and answered at each of its positions', async () => {
    const { adapter, stats } = withoutGetMany(['a', 'b']);
    const found = await guardAdapter(adapter).products.getMany(['a', 'x', 'a', 'b'], { signal: signal() });
    expect(found.map((x) => x?._id)).toEqual(['a', undefined, 'a', 'b']);
    expect(stats.gets.filter((id) => id === 'a')).toHaveLength(1);
    const asked: (readonly string[])[] = [];
    const real = memoryWith(['a', 'b']);
    const spying: StoreAdapter = { products: Object.assign(Object.create(real.products), { getMany: (ids: readonly string[], o: { signal: AbortSignal }) => (asked.push([...ids]), real.products.getMany(ids, o)) }), orders: real.orders };
    await guardAdapter(spying).products.getMany(['b', 'a', 'b'], { signal: signal() });
    expect(asked).toEqual([['b', 'a']]);
  });

  test('with getMany: one call; the adapter may answer in any order', async () => {
    const answer = await guardAdapter(lying((ids) => [...ids].reverse().filter((id) => id !== 'q').map((id) => product(id)))).products.getMany(['a', 'q', 'b', 'c'], { signal: signal() });
    expect(answer).toEqual([product('a'), undefined, product('b'), product('c')]);
  });

  test('an empty list asks the adapter nothing', async () => {
    let calls = 0;
    expect(await guardAdapter(lying(() => (calls++, []))).products.getMany([], { signal: signal() })).toEqual([]);
    expect(calls).toBe(0);
  });

  test.each([
    ['an item not asked for', () => [product('a'), product('z')], /item 1 \("z"\) was not asked for/],
    ['an item twice', () => [product('a'), product('a')], /item 1 \("a"\) is returned twice/],
    ['an invalid item', () => [{ _id: 'a', last_updated: 'yesterday' }], /item 0: .*last_updated/],
    ['not an array', () => ({ a: product('a') }), /did not return an array/],
  ])('refuses %s with AdapterContractError', async (_what, answer, message) => {
    const err = await guardAdapter(lying(answer)).products.getMany(['a', 'b'], { signal: signal() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdapterContractError);
    expect((err as Error).message).toMatch(message);
  });

  test('a failure of the adapter becomes AdapterError, the cause kept', async () => {
    const boom = new Error('connection lost');
    const err = await guardAdapter(lying(() => Promise.reject(boom))).products.getMany(['a'], { signal: signal() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdapterError);
    expect((err as AdapterError).cause).toBe(boom);
  });

  test('a getMany that is not a function is refused when the adapter is guarded', () => {
    const real = memoryWith([]);
    expect(() => guardAdapter({ products: Object.assign(Object.create(real.products), { getMany: 'yes' }), orders: real.orders })).toThrow(/adapter\.products\.getMany must be a function when present/);
  });

  test('with or without getMany, the answer is what get answers for each id (property)', async () => {
    const stored = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const memory = memoryWith(stored);
    const { adapter: fallback } = withoutGetMany(stored);
    const guarded = [guardAdapter(memory), guardAdapter(fallback)];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 29 }), { maxLength: 40 }), async (ns) => {
        const ids = ns.map((n) => `k${n}`);
        const expected = await Promise.all(ids.map((id) => memory.products.get(id)));
        for (const g of guarded) expect(await g.products.getMany(ids, { signal: signal() })).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});
