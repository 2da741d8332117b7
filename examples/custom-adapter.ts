/**
 * A complete custom adapter, and the adapter conformance suite run on it.
 *
 * `SortedArrayAdapter` keeps each entity in an array sorted by the sort key `(last_updated, _id)`
 * and stores each item's JSON text once, so pages are served as `rawJson` items. It extends
 * `BaseEntityStore` (which gives `upsert` with the `resolveWrite` rule under a per-`_id` lock) and
 * `BaseStoreAdapter` (defaults for `checkOrder`, `checkProduct`, `close`), and overrides
 * `productBySku` with an index.
 *
 * Run the conformance suite on it with node:test, from the repository root:
 *   npx tsc -p examples --outDir /tmp/sb-examples
 *   NODE_PATH=$PWD/node_modules node --test /tmp/sb-examples/examples/custom-adapter.js
 * (25 tests pass; `test/adapters/examples.test.ts` runs the same suite on it under jest.)
 * In a project of your own, import from 'storebridge' and 'storebridge/conformance' instead of
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
  type ListOptions,
  type RawJsonItem,
  type SignalOptions,
  type SortKey,
} from '../lib/adapter';
import type { AdapterRegistration } from '../lib/adapter-registry';
import type { Order, Product } from '../lib/contract/webhook';
import { runAdapterConformance } from '../lib/conformance';

interface Row<T> {
  readonly key: SortKey;
  readonly doc: T;
  readonly json: string;
}

/** One entity: rows sorted ascending by `(last_updated, _id)`, plus an `_id` index. */
export class SortedArrayStore<T extends { _id: string; last_updated?: number }> extends BaseEntityStore<T> {
  private readonly rows: Row<T>[] = [];
  private readonly byId = new Map<string, Row<T>>();

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

  /** Called by `BaseEntityStore.upsert` with the final item when it changed. */
  protected async put(item: T, { signal }: SignalOptions): Promise<void> {
    signal.throwIfAborted();
    const old = this.byId.get(item._id);
    if (old) this.rows.splice(this.bound(old.key, true), 1);
    const row: Row<T> = { key: keyOf(item), doc: item, json: JSON.stringify(item) };
    this.rows.splice(this.bound(row.key, false), 0, row);
    this.byId.set(item._id, row);
    this.onPut?.(item, old?.doc);
  }

  /** Hook for secondary indexes (the adapter's SKU index). */
  onPut?: (item: T, previous: T | undefined) => void;

  private toRaw(row: Row<T>): RawJsonItem {
    return rawJson(row.key._id, row.key.last_updated, row.json);
  }
}

export class SortedArrayAdapter extends BaseStoreAdapter {
  readonly products = new SortedArrayStore<Product>();
  readonly orders = new SortedArrayStore<Order>();
  private readonly bySku = new Map<string, Product>();

  constructor() {
    super();
    this.products.onPut = (item, previous) => {
      if (previous?.sku !== undefined && this.bySku.get(previous.sku)?._id === item._id) this.bySku.delete(previous.sku);
      if (item.sku !== undefined) this.bySku.set(item.sku, item);
    };
  }

  /** An indexed lookup instead of `BaseStoreAdapter`'s page-by-page scan. */
  override async productBySku(sku: string, { signal }: SignalOptions): Promise<Product | undefined> {
    signal.throwIfAborted();
    return this.bySku.get(sku);
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
