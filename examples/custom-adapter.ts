/**
 * A complete custom adapter, and the adapter conformance suite run on it.
 *
 * `SortedArrayAdapter` keeps each entity in an array sorted by the sort key `(last_updated, _id)`
 * and stores each item's JSON text once, so pages are served as `rawJson` items. It extends
 * `BaseEntityStore` (which gives `upsert` with the `resolveWrite` rule under a per-`_id` lock) and
 * `BaseStoreAdapter` (defaults for `checkOrder`, `checkProduct`, `close`), keeps `sku` / `orderid`
 * unique (`uniqueKeyOf`) and overrides `productBySku` / `orderByOrderId` with that index.
 *
 * Run the conformance suite on it with node:test, from the repository root:
 *   npx tsc -p examples --outDir /tmp/sb-examples
 *   NODE_PATH=$PWD/node_modules node --test /tmp/sb-examples/examples/custom-adapter.js
 * (30 tests pass; `test/adapters/examples.test.ts` runs the same suite on it under jest.)
 * In a project of your own, import from 'storebridge/adapter' and 'storebridge/conformance' instead of
 * the relative paths below, and put the `runAdapterConformance` call in a test file (jest/vitest:
 * pass their `test` and `describe`).
 *
 * `storebridgeAdapter` at the end registers it with the CLI: published (or installed) as the
 * package `storebridge-adapter-sorted-array` with this module as its main, it makes
 * `storebridge serve --adapter sorted-array` work (docs/adapter-authors.md "Using it from the CLI").
 */
import {
  BaseEntityStore,
  BaseStoreAdapter,
  compareKeys,
  keyOf,
  rawJson,
  uniqueKeyOf,
  UNIQUE_MEMBERS,
  type ListOptions,
  type RawJsonItem,
  type SignalOptions,
  type SortKey,
  type WriteOptions,
} from '../lib/adapter';
import type { AdapterRegistration } from '../lib/adapter-registry';
import type { Order, Product } from '../lib/contract/webhook';
import type { Entity } from '../lib/contract/entities';
import { DuplicateKeyError } from '../lib/errors';
import { runAdapterConformance } from '../lib/conformance';

interface Row<T> {
  readonly key: SortKey;
  readonly doc: T;
  readonly json: string;
}

/** One entity: rows sorted ascending by `(last_updated, _id)`, an `_id` index, and its `sku` / `orderid` index. */
export class SortedArrayStore<T extends { _id: string; last_updated?: number }> extends BaseEntityStore<T> {
  private readonly rows: Row<T>[] = [];
  private readonly byId = new Map<string, Row<T>>();
  private readonly byKey = new Map<string, T>();

  constructor(private readonly entity: Entity) {
    super();
  }

  /** First index whose key is greater than `key` (`orEqual`: not less than `key`). */
  private bound(key: SortKey, orEqual: boolean): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareKeys(this.rows[mid].key, key);
      if (c < 0 || (c === 0 && !orEqual)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  async list({ sortorder, limit, offset = 0, after, signal }: ListOptions): Promise<RawJsonItem[]> {
    signal.throwIfAborted();
    const out: RawJsonItem[] = [];
    const n = this.rows.length;
    if (sortorder === 'asc') {
      for (let i = after ? this.bound(after, false) : offset; i < n && out.length < limit; i++) out.push(this.toRaw(this.rows[i]));
    } else {
      // Descending position p is ascending index n-1-p; "after" in desc means a smaller key.
      for (let i = after ? this.bound(after, true) - 1 : n - 1 - offset; i >= 0 && out.length < limit; i--) out.push(this.toRaw(this.rows[i]));
    }
    return out;
  }

  async count({ signal }: SignalOptions): Promise<number> {
    signal.throwIfAborted();
    return this.rows.length;
  }

  async get(id: string, { signal }: SignalOptions): Promise<T | undefined> {
    signal.throwIfAborted();
    return this.byId.get(id)?.doc;
  }

  /** The item its `sku` (products) or `orderid` (orders) names. */
  byUniqueKey(key: string): T | undefined {
    return this.byKey.get(key);
  }

  /**
   * Called by `BaseEntityStore.upsert` with the final item when it changed. Synchronous from the
   * key check to the last index update, so two concurrent writes of one key cannot both pass.
   */
  protected async put(item: T, { signal, lastUpdated }: WriteOptions): Promise<void> {
    signal.throwIfAborted();
    const key = uniqueKeyOf(this.entity, item);
    const holder = key === undefined ? undefined : this.byKey.get(key);
    const taken = holder !== undefined && holder._id !== item._id;
    if (taken && lastUpdated === 'touch') throw new DuplicateKeyError(this.entity, UNIQUE_MEMBERS[this.entity], key!, holder._id);
    const old = this.byId.get(item._id);
    if (old) {
      this.rows.splice(this.bound(old.key, true), 1);
      const oldKey = uniqueKeyOf(this.entity, old.doc);
      if (oldKey !== undefined && this.byKey.get(oldKey)?._id === item._id) this.byKey.delete(oldKey);
    }
    const row: Row<T> = { key: keyOf(item), doc: item, json: JSON.stringify(item) };
    this.rows.splice(this.bound(row.key, false), 0, row);
    this.byId.set(item._id, row);
    // A replicated (`keep`) item repeating another's key is stored; the key keeps its holder.
    if (key !== undefined && !taken) this.byKey.set(key, item);
  }

  private toRaw(row: Row<T>): RawJsonItem {
    return rawJson(row.key._id, row.key.last_updated, row.json);
  }
}

export class SortedArrayAdapter extends BaseStoreAdapter {
  readonly products = new SortedArrayStore<Product>('products');
  readonly orders = new SortedArrayStore<Order>('orders');

  /** Indexed lookups instead of `BaseStoreAdapter`'s page-by-page scans. */
  override async productBySku(sku: string, { signal }: SignalOptions): Promise<Product | undefined> {
    signal.throwIfAborted();
    return this.products.byUniqueKey(sku);
  }

  override async orderByOrderId(orderid: string, { signal }: SignalOptions): Promise<Order | undefined> {
    signal.throwIfAborted();
    return this.orders.byUniqueKey(orderid);
  }
}

/**
 * The CLI's entry: `--adapter sorted-array` opens a fresh, empty store (a real adapter would read a
 * connection string from the rest of the spec: `open: (spec) => connect(spec.slice('name:'.length))`).
 */
export const storebridgeAdapter: AdapterRegistration = {
  prefix: 'sorted-array',
  describe: 'sorted-array',
  open: () => new SortedArrayAdapter(),
};

/** Registers the conformance suite for this adapter with node:test. */
export async function runWithNodeTest(): Promise<void> {
  const { describe, test } = await import('node:test');
  runAdapterConformance({
    describe,
    test,
    name: 'SortedArrayAdapter conformance',
    factory: () => new SortedArrayAdapter(),
  });
}

if (require.main === module) void runWithNodeTest();
