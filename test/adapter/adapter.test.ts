import fc from 'fast-check';
import {
  BaseEntityStore,
  BaseStoreAdapter,
  KeyedMutex,
  compareKeys,
  jsonEqual,
  keyOf,
  rawJson,
  resolveWrite,
  type ListOptions,
} from '../../lib/adapter-kit';
import type { Order, Product } from '../../lib';
import { AdapterContractError, AdapterError } from '../../lib/errors';
import { guardAdapter } from '../../lib/adapter-guard';
import { createMemoryAdapter } from '../../adapters/memory';

const signal = new AbortController().signal;

describe('resolveWrite: the last_updated rule', () => {
  it('touch: a change sets last_updated to now; an identical repeat writes nothing', () => {
    const first = resolveWrite<Product>(undefined, { _id: 'a', title: 'x' }, { lastUpdated: 'touch', now: 1000 });
    expect(first).toEqual({ item: { _id: 'a', title: 'x', last_updated: 1000 }, changed: true, created: true });
    const repeat = resolveWrite<Product>(first.item, { _id: 'a', title: 'x', last_updated: 5 }, { lastUpdated: 'touch', now: 2000 });
    expect(repeat).toEqual({ item: first.item, changed: false, created: false });
  });

  it('touch: monotonic per item even when the clock goes backwards', () => {
    const r = resolveWrite<Product>({ _id: 'a', title: 'x', last_updated: 5000 }, { _id: 'a', title: 'y' }, { lastUpdated: 'touch', now: 10 });
    expect(r.item.last_updated).toBe(5001);
  });

  it('keep: stores the given last_updated; unchanged only when everything is equal', () => {
    const r = resolveWrite({ _id: 'a', last_updated: 7 }, { _id: 'a', last_updated: 9 }, { lastUpdated: 'keep', now: 0 });
    expect(r).toEqual({ item: { _id: 'a', last_updated: 9 }, changed: true, created: false });
    expect(resolveWrite({ _id: 'a', last_updated: 9 }, { _id: 'a', last_updated: 9 }, { lastUpdated: 'keep', now: 0 }).changed).toBe(false);
  });

  it('jsonEqual ignores key order and undefined members', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1, d: undefined })).toBe(true);
    expect(jsonEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(jsonEqual({ a: {} }, { a: [] })).toBe(false);
  });

  it('compareKeys orders by last_updated, then _id (property: a total order)', () => {
    const key = fc.record({ last_updated: fc.integer({ min: 0, max: 5 }), _id: fc.string({ maxLength: 3 }) });
    fc.assert(
      fc.property(key, key, (a, b) => {
        expect(Math.sign(compareKeys(a, b)) + Math.sign(compareKeys(b, a))).toBe(0);
        if (compareKeys(a, b) === 0) expect(a).toEqual(b);
      }),
    );
  });
});

describe('KeyedMutex', () => {
  it('runs work for one key one at a time, other keys in parallel, and survives a failing task', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const task = (k: string, name: string, fail = false) =>
      m.run(k, async () => {
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, 5));
        log.push(`end ${name}`);
        if (fail) throw new Error('boom');
        return name;
      });
    const results = await Promise.allSettled([task('a', 'a1', true), task('a', 'a2'), task('b', 'b1')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(log.indexOf('end a1')).toBeLessThan(log.indexOf('start a2'));
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
  });
});

/** A deliberately minimal adapter on BaseEntityStore, as an adapter author would write it. */
class ArrayStore<T extends { _id: string; last_updated?: number }> extends BaseEntityStore<T> {
  rows: T[] = [];
  async list({ sortorder, limit, offset = 0, after }: ListOptions) {
    const sign = sortorder === 'asc' ? 1 : -1;
    const sorted = [...this.rows].sort((a, b) => sign * compareKeys(keyOf(a), keyOf(b)));
    const start = after ? sorted.findIndex((x) => sign * compareKeys(keyOf(x), after) > 0) : offset;
    return start < 0 ? [] : sorted.slice(start, start + limit);
  }
  async count() {
    return this.rows.length;
  }
  async get(id: string) {
    return this.rows.find((r) => r._id === id);
  }
  protected async put(item: T) {
    await new Promise((r) => setTimeout(r, 1));
    this.rows = [...this.rows.filter((r) => r._id !== item._id), item];
  }
}
class ArrayAdapter extends BaseStoreAdapter {
  readonly products = new ArrayStore<Product>();
  readonly orders = new ArrayStore<Order>();
}

describe('BaseEntityStore / BaseStoreAdapter defaults', () => {
  it('serializes concurrent upserts of one _id: one row, last_updated strictly increasing', async () => {
    const a = new ArrayAdapter();
    const writes = Array.from({ length: 20 }, (_, i) => a.products.upsert({ _id: 'p', title: `t${i}` }, { lastUpdated: 'touch', now: 100, signal }));
    const results = await Promise.all(writes);
    expect(a.products.rows).toHaveLength(1);
    const stamps = results.map((r) => r.item.last_updated!);
    expect(new Set(stamps).size).toBe(20);
    expect(a.products.rows[0].last_updated).toBe(Math.max(...stamps));
  });

  it('productBySku default walks the catalog', async () => {
    const a = new ArrayAdapter();
    for (let i = 0; i < 1200; i++) a.products.rows.push({ _id: `p${i}`, sku: `S${i}`, last_updated: i });
    expect((await a.productBySku('S1100', { signal }))?._id).toBe('p1100');
    expect(await a.productBySku('nope', { signal })).toBeUndefined();
    expect(await a.checkOrder({ _id: 'o' }, { signal })).toEqual([]);
  });
});

describe('guardAdapter', () => {
  const list = { sortorder: 'asc' as const, limit: 10, signal };

  it('passes a correct adapter through and serializes object items once, lazily', async () => {
    const g = guardAdapter(createMemoryAdapter({ products: [{ _id: 'b', last_updated: 1 }, { _id: 'a', last_updated: 1 }] }));
    const page = await g.products.list(list);
    expect(page.map((x) => x._id)).toEqual(['a', 'b']);
    expect(JSON.parse(page[0].json)).toEqual({ _id: 'a', last_updated: 1 });
    expect(guardAdapter(g)).toBe(g);
  });

  function broken(list: (o: ListOptions) => Promise<unknown>, extra: Partial<Record<'count' | 'get', unknown>> = {}) {
    const base = createMemoryAdapter();
    const products = Object.assign(Object.create(base.products), { list, ...extra });
    return guardAdapter({ products, orders: base.orders });
  }

  it('rejects out-of-order, over-limit, invalid and key-less pages with AdapterContractError', async () => {
    await expect(broken(async () => [{ _id: 'b', last_updated: 1 }, { _id: 'a', last_updated: 1 }]).products.list(list)).rejects.toThrow(/out of asc order/);
    await expect(broken(async () => Array.from({ length: 11 }, (_, i) => ({ _id: `x${i}`, last_updated: i }))).products.list(list)).rejects.toThrow(/11 items for a limit of 10/);
    await expect(broken(async () => [{ _id: 'a', last_updated: 1, title: 5 }]).products.list(list)).rejects.toThrow(AdapterContractError);
    await expect(broken(async () => [rawJson('', 1, '{}')]).products.list(list)).rejects.toThrow(/no _id/);
    await expect(broken(async () => 'nope').products.list(list)).rejects.toThrow(/not return an array/);
    await expect(
      broken(async () => [{ _id: 'a', last_updated: 1 }]).products.list({ ...list, after: { last_updated: 1, _id: 'a' } }),
    ).rejects.toThrow(/out of asc order/);
  });

  it('checks counts and by-id answers', async () => {
    await expect(broken(async () => [], { count: async () => -1 }).products.count({ signal })).rejects.toThrow(/not a count/);
    await expect(broken(async () => [], { get: async () => ({ _id: 'other' }) }).products.get('p', { signal })).rejects.toThrow(/asked for "p", got "other"/);
  });

  it('wraps thrown errors in AdapterError, keeping the cause for logs only', async () => {
    const cause = new Error('connection refused at 10.0.0.5 with password hunter2');
    const err = await broken(async () => {
      throw cause;
    })
      .products.list(list)
      .catch((e) => e);
    expect(err).toBeInstanceOf(AdapterError);
    expect(err.message).toBe('the data adapter failed in products.list');
    expect(err.cause).toBe(cause);
  });

  it('refuses something that is not an adapter', () => {
    expect(() => guardAdapter({} as never)).toThrow(/products/);
  });
});
