/** The examples work: the custom adapter passes the conformance suite; the existing-tables mapping pages, counts and writes. */
import { sql } from 'kysely';
import { SortedArrayAdapter, storebridgeAdapter } from '../../examples/custom-adapter';
import { registerAdapterSpec } from '../../lib/adapter-registry';
import { openAdapter } from '../../lib/cli/adapter-spec';
import { openShopAdapter } from '../../examples/existing-tables';
import { runAdapterConformance } from '../../lib/conformance';
import { guardAdapter } from '../../lib/adapter-guard';

runAdapterConformance({ describe, test, name: 'examples/custom-adapter.ts conformance', factory: () => new SortedArrayAdapter() });

test('examples/custom-adapter.ts registers with the CLI: --adapter sorted-array opens it', async () => {
  await expect(openAdapter('sorted-array')).rejects.toThrow(/unknown adapter "sorted-array"/);
  registerAdapterSpec(storebridgeAdapter);
  expect(await openAdapter('sorted-array')).toBeInstanceOf(SortedArrayAdapter);
});

describe('examples/existing-tables.ts', () => {
  const live = () => new AbortController().signal;
  test("serves a shop's own table: keyset and offset pages, trigger-kept count, writes mapped back", async () => {
    const adapter = await openShopAdapter(':memory:');
    try {
      const db = adapter.db;
      const rows = Array.from({ length: 9 }, (_, i) => sql`(${`C-${i}`}, ${`Item ${i}`}, ${100 + i}, 'USD', ${i}, ${1000 + Math.floor(i / 3)})`);
      await sql`insert into shop_items values ${sql.join(rows)}`.execute(db);
      const g = guardAdapter(adapter, { validate: 'all' });
      expect(await g.products.count({ signal: live() })).toBe(9);
      const ids: string[] = [];
      let after;
      for (;;) {
        const page = await g.products.list({ sortorder: 'desc', limit: 4, after, signal: live() });
        if (page.length === 0) break;
        ids.push(...page.map((x) => x._id));
        after = page[page.length - 1];
      }
      expect(ids).toEqual(['C-8', 'C-7', 'C-6', 'C-5', 'C-4', 'C-3', 'C-2', 'C-1', 'C-0']);
      const offsetPage = await g.products.list({ sortorder: 'asc', limit: 2, offset: 3, signal: live() });
      expect(offsetPage.map((x) => x.doc)).toEqual([
        { _id: 'C-3', sku: 'C-3', last_updated: 1001, title: 'Item 3', variations: [{ availabilities: [{ tag: 'default', quantity: 3 }], prices: [{ tag: 'default', currency: 'USD', number: 1.03 }] }] },
        expect.objectContaining({ _id: 'C-4' }),
      ]);
      const r = await g.products.upsert({ _id: 'NEW-1', title: 'New', variations: [{ prices: [{ tag: 'default', currency: 'EUR', number: 5.5 }] }] }, { lastUpdated: 'touch', now: 9999, signal: live() });
      expect(r.created).toBe(true);
      expect(await g.products.count({ signal: live() })).toBe(10);
      expect((await g.productBySku('NEW-1', { signal: live() }))?.variations?.[0].prices?.[0]).toEqual({ tag: 'default', currency: 'EUR', number: 5.5 });
      await g.orders.upsert({ _id: 'o1', status: 'paid', orderItems: [{ id: 'NEW-1', quantity: 1 }] } as never, { lastUpdated: 'touch', now: 1, signal: live() });
      expect(await g.orders.count({ signal: live() })).toBe(1);
    } finally {
      await adapter.close();
    }
  });
});
