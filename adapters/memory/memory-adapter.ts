/**
 * The in-memory adapter: a sorted index on `(last_updated, _id)` per entity, so a keyset seek is a
 * binary search (O(log n)) and an offset page is a slice. Each item is serialized once, when it is
 * written, and served as raw JSON. Single-process; upserts are atomic because they are synchronous,
 * and so is the unique `sku` / `orderid` rule (`uniqueKeyOf`): checked and indexed in one step.
 */
import {
  compareKeys,
  keyOf,
  rawJson,
  MemoryIdempotencyStore,
  resolveWrite,
  uniqueKeyOf,
  UNIQUE_MEMBERS,
  type EntityStore,
  type ListOptions,
  type RawJsonItem,
  type SignalOptions,
  type SortKey,
  type StoreAdapter,
  type UpsertResult,
  type WriteOptions,
} from '../../lib/adapter';
import { ENTITIES } from '../../lib/contract/entities';
import type { Order, Product } from '../../lib/contract/webhook';
import type { Entity } from '../../lib/contract/entities';
import { DuplicateKeyError } from '../../lib/errors';

interface Row<T> {
  readonly key: SortKey;
  readonly doc: T;
  readonly raw: RawJsonItem;
}

/** One entity's items, sorted ascending by sort key. */
export class MemoryEntityStore<T extends { _id: string; last_updated?: number }> implements EntityStore<T> {
  private readonly sorted: Row<T>[] = [];
  private readonly byId = new Map<string, Row<T>>();
  private readonly byUniqueKey = new Map<string, Row<T>>();

  /** @param entity the entity these items are: its unique member (`sku`, `orderid`) is indexed. Without it nothing is. */
  constructor(private readonly entity?: Entity) {}

  /** The item holding this `sku` (products) or `orderid` (orders). */
  getByUniqueKey(key: string): T | undefined {
    return this.byUniqueKey.get(key)?.doc;
  }

  /** Index of the first row whose key is greater than `key` (ascending). */
  private upperBound(key: SortKey): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.sorted[mid].key, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first row whose key is not less than `key`. */
  private lowerBound(key: SortKey): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.sorted[mid].key, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  async list({ sortorder, limit, offset = 0, after, signal }: ListOptions): Promise<RawJsonItem[]> {
    signal?.throwIfAborted();
    const n = this.sorted.length;
    const out: RawJsonItem[] = [];
    if (sortorder === 'asc') {
      const start = after ? this.upperBound(after) : offset;
      for (let i = start; i < n && out.length < limit; i++) out.push(this.sorted[i].raw);
    } else {
      // Descending position p is ascending index n-1-p; "after" in desc means a smaller key.
      const start = after ? this.lowerBound(after) - 1 : n - 1 - offset;
      for (let i = start; i >= 0 && out.length < limit; i--) out.push(this.sorted[i].raw);
    }
    return out;
  }

  async listKeys(options: ListOptions): Promise<SortKey[]> {
    return (await this.list(options)).map((r) => ({ _id: r._id, last_updated: r.last_updated }));
  }

  async count(options?: SignalOptions): Promise<number> {
    options?.signal?.throwIfAborted();
    return this.sorted.length;
  }

  async get(id: string, options?: SignalOptions): Promise<T | undefined> {
    options?.signal?.throwIfAborted();
    return this.byId.get(id)?.doc;
  }

  /** The items found, in the order asked (one map lookup each). */
  async getMany(ids: readonly string[], options?: SignalOptions): Promise<T[]> {
    options?.signal?.throwIfAborted();
    const out: T[] = [];
    for (const id of ids) {
      const row = this.byId.get(id);
      if (row) out.push(row.doc);
    }
    return out;
  }

  async upsert(item: T, options: WriteOptions): Promise<UpsertResult<T>> {
    options.signal?.throwIfAborted();
    return this.write(item, options);
  }

  /** Synchronous, so the whole batch is atomic (no other call runs in between). */
  async upsertMany(items: readonly T[], options: WriteOptions): Promise<UpsertResult<T>[]> {
    options.signal?.throwIfAborted();
    return items.map((item) => this.write(item, options));
  }

  /** Writes an item without the write rule (seeding, like a `keep` write). Replaces an existing `_id`. */
  seed(item: T): void {
    this.store({ ...item, last_updated: item.last_updated ?? 0 }, this.byId.get(item._id), 'keep');
  }

  private write(item: T, options: WriteOptions): UpsertResult<T> {
    const existing = this.byId.get(item._id);
    const result = resolveWrite(existing?.doc, item, options);
    if (result.changed) this.store(result.item, existing, options.lastUpdated);
    return result;
  }

  private store(doc: T, existing: Row<T> | undefined, mode: WriteOptions['lastUpdated']): void {
    const unique = this.entity ? uniqueKeyOf(this.entity, doc) : undefined;
    const holder = unique === undefined ? undefined : this.byUniqueKey.get(unique);
    const taken = holder !== undefined && holder.doc._id !== doc._id;
    // Refused before anything changes: a store-side write never takes another item's key.
    if (taken && mode === 'touch') throw new DuplicateKeyError(this.entity!, UNIQUE_MEMBERS[this.entity!], unique!, holder.doc._id);
    if (existing) {
      this.sorted.splice(this.lowerBound(existing.key), 1);
      const old = this.entity ? uniqueKeyOf(this.entity, existing.doc) : undefined;
      if (old !== undefined && this.byUniqueKey.get(old) === existing) this.byUniqueKey.delete(old);
    }
    const key = keyOf(doc);
    const row: Row<T> = { key, doc, raw: rawJson(key._id, key.last_updated, JSON.stringify(doc)) };
    this.sorted.splice(this.upperBound(key), 0, row);
    this.byId.set(doc._id, row);
    // A replicated item whose key another item holds is stored, not indexed: the key keeps its holder.
    if (unique !== undefined && !taken) this.byUniqueKey.set(unique, row);
  }
}

/**
 * An adapter that keeps everything in memory: the default for tests, demos and sinks that do not
 * need to survive a restart.
 *
 * @example
 * ```ts
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 * const adapter = createMemoryAdapter({ products: [{ _id: 'p1', title: 'Mug', last_updated: 1 }] });
 * app.use('/sync', createStoreRouter({ adapter, svcKeys: [process.env.SVC_KEY!] }));
 * ```
 */
export class MemoryAdapter implements StoreAdapter {
  readonly products = new MemoryEntityStore<Product>('products');
  readonly orders = new MemoryEntityStore<Order>('orders');
  readonly idempotency = new MemoryIdempotencyStore();
  constructor() {
    // One store per entity of the registry: an entity registered besides products and orders
    // (`registerEntity`) gets one too, as `adapter[entity]`.
    for (const entity of ENTITIES) if (!(entity in this)) (this as unknown as Record<string, unknown>)[entity] = new MemoryEntityStore(entity);
  }
  async productBySku(sku: string, options?: SignalOptions): Promise<Product | undefined> {
    options?.signal?.throwIfAborted();
    return this.products.getByUniqueKey(sku);
  }
  async orderByOrderId(orderid: string, options?: SignalOptions): Promise<Order | undefined> {
    options?.signal?.throwIfAborted();
    return this.orders.getByUniqueKey(orderid);
  }
  async close(): Promise<void> {}
}

export function createMemoryAdapter(seed: { products?: Product[]; orders?: Order[] } = {}): MemoryAdapter {
  const adapter = new MemoryAdapter();
  for (const p of seed.products ?? []) adapter.products.seed(p);
  for (const o of seed.orders ?? []) adapter.orders.seed(o);
  return adapter;
}
