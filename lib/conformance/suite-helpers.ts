/**
 * What the adapter conformance cases share: the resolved options, item makers, seeding, and the
 * page-by-page walk through the guard.
 */
import assert from 'node:assert/strict';
import type { SortKey, StoreAdapter, WriteOptions } from '../adapter';
import { compareKeys, keyOf } from '../adapter';
import { guardAdapter, type GuardedEntityStore } from '../adapter-guard';
import type { Order, Product } from '../contract/webhook';
import type { Entity, ItemOf } from '../contract/entities';
import type { SortOrder } from '../contract/messages';

export interface Config<A extends StoreAdapter> {
  readonly factory: () => A | Promise<A>;
  readonly teardown: (adapter: A) => void | Promise<void>;
  readonly propertyRuns: number;
  readonly largeDocumentChars: number;
  readonly concurrency: number;
}

/** One conformance test: its name and body (run on a fresh adapter). */
export type Case<A extends StoreAdapter> = readonly [name: string, run: (adapter: A, config: Config<A>) => Promise<void>];

/** fast-check, an optional peer of the package: needed by the property tests only. */
export function loadFastCheck(): typeof import('fast-check') {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('fast-check') as typeof import('fast-check');
  } catch {
    throw new Error('this test needs the "fast-check" package: npm install --save-dev fast-check');
  }
}

export const live = (): AbortSignal => new AbortController().signal;
export const keep = (): WriteOptions => ({ lastUpdated: 'keep', now: 0, signal: live() });
export const touch = (now: number): WriteOptions => ({ lastUpdated: 'touch', now, signal: live() });

export function product(_id: string, last_updated: number, extra: Partial<Product> = {}): Product {
  return { _id, last_updated, sku: `SKU-${_id}`, title: `Product ${_id}`, ...extra };
}
export function order(_id: string, last_updated: number, extra: Partial<Order> = {}): Order {
  return { _id, last_updated, status: 'paid', ...extra };
}
export function makeItem<E extends Entity>(entity: E, _id: string, last_updated: number): ItemOf<E> {
  return (entity === 'products' ? product(_id, last_updated) : order(_id, last_updated)) as ItemOf<E>;
}

export async function seed<E extends Entity>(adapter: StoreAdapter, entity: E, items: readonly ItemOf<E>[]): Promise<void> {
  const store = guardAdapter(adapter).entity(entity);
  for (const item of items) await store.upsert(item, keep());
}

export function sorted<T extends { _id: string; last_updated?: number }>(items: readonly T[], sortorder: SortOrder): string[] {
  const sign = sortorder === 'asc' ? 1 : -1;
  return [...items].sort((a, b) => sign * compareKeys(keyOf(a), keyOf(b))).map((x) => x._id);
}

/**
 * Reads a whole entity page by page through the guard (which checks order and shapes), and checks
 * that only the last page is short.
 */
export async function walk(store: GuardedEntityStore<Entity>, sortorder: SortOrder, mode: 'offset' | 'keyset', limit: number, total: number): Promise<string[]> {
  const ids: string[] = [];
  let after: SortKey | undefined;
  for (let round = 0; round <= total + 1; round++) {
    const page = await store.list({ sortorder, limit, signal: live(), ...(mode === 'offset' ? { offset: ids.length } : { after }) });
    if (page.length === 0) return ids;
    assert.ok(ids.length + page.length <= total, `${mode} ${sortorder}: more items listed than stored (${ids.length + page.length} > ${total})`);
    ids.push(...page.map((x) => x._id));
    if (page.length < limit) {
      assert.equal(ids.length, total, `${mode} ${sortorder}: a short page (${page.length} < ${limit}) before the end`);
      return ids;
    }
    after = { _id: page[page.length - 1]._id, last_updated: page[page.length - 1].last_updated };
  }
  assert.fail(`${mode} ${sortorder}: paging did not end`);
}
