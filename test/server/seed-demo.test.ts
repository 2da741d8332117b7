/**
 * `seedDemo` (what `serve --demo N` and `demo` run): the demo catalog, in batches, on any adapter;
 * re-run on a store that already holds it (a persistent `sqlite:FILE`, a database), it adds what
 * is missing and never overwrites an item, so an edit survives and `last_updated` never goes back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreAdapter } from '../../lib/adapter';
import { createMemoryAdapter } from '../../adapters/memory';
import { openSqlAdapter } from '../../adapters/sql';
import { demoCatalog } from '../../lib/demo';
import { seedDemo } from '../../lib/demo';

const signal = new AbortController().signal;

async function allOf(adapter: StoreAdapter, entity: 'products' | 'orders') {
  return adapter[entity].list({ sortorder: 'asc', limit: 1_000_000, offset: 0, signal });
}

type Fixture = { adapter: StoreAdapter; done(): Promise<void> };

const fixtures: Array<[string, () => Promise<Fixture>]> = [
  ['memory', async () => ({ adapter: createMemoryAdapter(), done: async () => undefined })],
  [
    'sqlite file',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sb-seed-'));
      const adapter = await openSqlAdapter(`sqlite:${join(dir, 'store.db')}`);
      return {
        adapter,
        done: async () => {
          await adapter.close?.();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];

describe.each(fixtures)('seedDemo on %s', (_name, make) => {
  it('seeds the demo catalog; a re-run keeps edited items and adds the missing ones', async () => {
    const { adapter, done } = await make();
    try {
      expect(await seedDemo(adapter, 30)).toEqual({ products: 30, orders: 8 });
      const catalog = demoCatalog(30);
      expect(await adapter.products.count({ signal })).toBe(30);
      expect(await adapter.orders.get('ord-000003', { signal })).toEqual(catalog.orders[2]);

      // The store's own write (as the demo tour makes): a new status and a later last_updated.
      const edited = { ...catalog.orders[2], status: catalog.orders[2].status === 'shipped' ? 'delivered' : 'shipped' };
      const { item: stored } = await adapter.orders.upsert(edited, { lastUpdated: 'touch', now: Date.now(), signal });
      expect(stored.last_updated).toBeGreaterThan(catalog.orders[2].last_updated!);

      // A larger re-run: the 10 new products and their orders are added; nothing is overwritten.
      expect(await seedDemo(adapter, 40)).toEqual({ products: 40, orders: 10 });
      expect(await adapter.orders.get('ord-000003', { signal })).toEqual(stored);
      expect(await adapter.products.count({ signal })).toBe(40);
      expect(await adapter.orders.count({ signal })).toBe(10);
      const bigger = demoCatalog(40);
      expect((await adapter.products.get('prod-000040', { signal }))).toEqual(bigger.products[39]);
      expect((await allOf(adapter, 'products')).length).toBe(40);
    } finally {
      await done();
    }
  });

  it('stops between batches when its signal aborts', async () => {
    const { adapter, done } = await make();
    try {
      const stop = new AbortController();
      stop.abort(new Error('stop'));
      await expect(seedDemo(adapter, 5000, stop.signal)).rejects.toThrow('stop');
      expect(await adapter.products.count({ signal })).toBe(0);
    } finally {
      await done();
    }
  });
});
