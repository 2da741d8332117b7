/**
 * The runtime guard around a user's adapter (after kysely's RuntimeDriver): every call goes
 * through it, so a buggy or failing adapter becomes a clear, typed error instead of a wrong page.
 *
 * It checks what comes back (array, at most `limit` items, strict `sortorder` after the keyset
 * position, valid webhook-form items, a non-negative integer count, the `_id` asked for) and turns
 * anything thrown into `AdapterError` (the original kept as `cause`, for logs only), except the
 * kit's own `AdapterContractError`, `UnstorableValueError`, `DuplicateKeyError` and `StorageError`,
 * which pass unchanged.
 */
import type { z } from 'zod';
import { ENTITIES, entityOf, perEntity } from './contract/entities';
import { IdSchema, OrderSchema, ProductSchema, type Order, type Product } from './contract/webhook';
import type { Entity, ItemOf } from './contract/entities';
import { describeZodError } from './contract/parse';
import {
  compareKeys,
  isRawJson,
  entityStore,
  keyOf,
  type EntityStore,
  type IdempotencyRecord,
  type IdempotencyStore,
  type ListOptions,
  type RawJsonItem,
  type SignalOptions,
  type SortKey,
  type StoreAdapter,
  type UpsertResult,
  type WriteOptions,
} from './adapter';
import { AdapterContractError, AdapterError, DuplicateKeyError, StorageError, UnstorableValueError } from './errors';

/** One listed item, serialized at most once and parsed at most once. */
export class ListedItem<T> implements SortKey {
  private cachedJson: string | undefined;
  private cachedDoc: T | undefined;
  constructor(
    readonly _id: string,
    readonly last_updated: number,
    doc: T | undefined,
    json: string | undefined,
  ) {
    this.cachedDoc = doc;
    this.cachedJson = json;
  }
  /** The webhook-form JSON text. */
  get json(): string {
    return (this.cachedJson ??= JSON.stringify(this.cachedDoc));
  }
  /** The webhook-form object. */
  get doc(): T {
    return (this.cachedDoc ??= JSON.parse(this.cachedJson!) as T);
  }
}

export interface GuardOptions {
  /**
   * `objects` (default): items returned as objects are validated with the contract schema; raw JSON
   * items are trusted apart from their sort keys. `all`: raw JSON is parsed and validated too.
   */
  readonly validate?: 'objects' | 'all';
  /**
   * What is checked of the items `upsert` / `upsertMany` return. `full` (default): each is
   * validated with the contract schema. `keys`: only that it is an object with the `_id` written
   * and a valid `last_updated` — for callers that validated the incoming items themselves and do
   * not pass the returned items on (the sync engine: the client has parsed every item with the
   * contract schema, and the run uses only `changed`). Saves a second zod pass per written item.
   */
  readonly validateWrites?: 'full' | 'keys';
}

/** A guarded entity store: what the server, the sync engine and the daemon call. */
export interface GuardedEntityStore<E extends Entity> {
  readonly entity: E;
  list(options: ListOptions): Promise<ListedItem<ItemOf<E>>[]>;
  /** The keys of the page `list` would return: the adapter's `listKeys`, else its `list`'s keys. Checked for order and limit. */
  listKeys(options: ListOptions): Promise<SortKey[]>;
  count(options: SignalOptions): Promise<number>;
  get(id: string, options: SignalOptions): Promise<ItemOf<E> | undefined>;
  /**
   * The items with these `_id`s: the adapter's `getMany` when it has one (one query), else its
   * `get` for each id (a few at a time). The answer is aligned with `ids`: `answer[i]` is the item
   * with `_id` `ids[i]`, or `undefined` when there is none. What the adapter returned is checked:
   * valid items, each asked for, none twice. An id repeated in `ids` is asked for once.
   *
   * @example The store's batched by-ID read
   * ```ts
   * const found = await guardAdapter(adapter).products.getMany(['p1', 'p9', 'p2'], { signal });
   * const missing = ['p1', 'p9', 'p2'].filter((_, i) => found[i] === undefined);
   * ```
   */
  getMany(ids: readonly string[], options: SignalOptions): Promise<(ItemOf<E> | undefined)[]>;
  upsert(item: ItemOf<E>, options: WriteOptions): Promise<UpsertResult<ItemOf<E>>>;
  /**
   * Many upserts: the adapter's `upsertMany` when it has one, else its `upsert` for each item in
   * turn. Results in input order, checked like `upsert`'s (one per item, the `_id` written).
   *
   * @example Write a fetched page in one call
   * ```ts
   * const sink = guardAdapter(createMemoryAdapter());
   * const results = await sink.products.upsertMany(page.fresh, { lastUpdated: 'keep', now: Date.now(), signal });
   * const written = results.filter((r) => r.changed).length;
   * ```
   */
  upsertMany(items: readonly ItemOf<E>[], options: WriteOptions): Promise<UpsertResult<ItemOf<E>>[]>;
  /** The adapter's business reasons to refuse this item (`checkOrder` / `checkProduct`). */
  check(item: ItemOf<E>, options: SignalOptions): Promise<string[]>;
}

export interface GuardedAdapter {
  readonly products: GuardedEntityStore<'products'>;
  readonly orders: GuardedEntityStore<'orders'>;
  entity<E extends Entity>(entity: E): GuardedEntityStore<E>;
  /** The product with this SKU (`undefined` when unknown or the adapter has no SKU lookup). */
  productBySku(sku: string, options: SignalOptions): Promise<Product | undefined>;
  /** Whether the adapter can look products up by SKU. */
  readonly hasSkuLookup: boolean;
  /** The order with this `orderid` (`undefined` when unknown or the adapter has no such lookup). */
  orderByOrderId(orderid: string, options: SignalOptions): Promise<Order | undefined>;
  /** The adapter's Idempotency-Key records, each call guarded; `undefined` when it keeps none. */
  readonly idempotency: IdempotencyStore | undefined;
  /**
   * The adapter's `newId` for an item being created, checked to be a valid `_id`; `undefined` when
   * the adapter has no `newId` (the caller then makes one).
   */
  newId<E extends Entity>(entity: E, item: Omit<ItemOf<E>, '_id'>, options: SignalOptions): Promise<string | undefined>;
  close(): Promise<void>;
  /** The adapter as given. */
  readonly inner: StoreAdapter;
}

const GUARDED = Symbol.for('storebridge.guardedAdapter');

/** `get` calls in flight at once when `getMany` falls back to them (an adapter without `getMany`). */
const GET_MANY_FALLBACK_CONCURRENCY = 8;

/** Wraps an adapter (idempotent: a guarded adapter is returned as is). */
export function guardAdapter(adapter: StoreAdapter | GuardedAdapter, options: GuardOptions = {}): GuardedAdapter {
  if ((adapter as unknown as Record<symbol, unknown>)[GUARDED]) return adapter as GuardedAdapter;
  const inner = adapter as StoreAdapter;
  if (!inner || typeof inner !== 'object' || ENTITIES.some((e) => !inner[e])) {
    throw new TypeError(`a storebridge adapter must have ${ENTITIES.map((e) => `\`${e}\``).join(' and ')} entity stores`);
  }
  for (const entity of ENTITIES) {
    for (const m of ['list', 'count', 'get', 'upsert'] as const) {
      if (typeof inner[entity][m] !== 'function') throw new TypeError(`adapter.${entity}.${m} must be a function`);
    }
    for (const m of ['upsertMany', 'getMany'] as const) {
      const optional = inner[entity][m];
      if (optional !== undefined && typeof optional !== 'function') throw new TypeError(`adapter.${entity}.${m} must be a function when present`);
    }
  }
  const stores = perEntity((e) => guardEntity(inner, e, options));
  const guarded: GuardedAdapter = {
    products: stores.products as GuardedEntityStore<'products'>,
    orders: stores.orders as GuardedEntityStore<'orders'>,
    entity: <E extends Entity>(e: E) => stores[e] as unknown as GuardedEntityStore<E>,
    productBySku: async (sku, opts) => {
      if (!inner.productBySku) return undefined;
      const p = await call('productBySku', opts.signal, () => inner.productBySku!(sku, opts));
      return lookedUp('productBySku', ProductSchema, p, 'sku', sku);
    },
    hasSkuLookup: typeof inner.productBySku === 'function',
    orderByOrderId: async (orderid, opts) => {
      if (!inner.orderByOrderId) return undefined;
      const o = await call('orderByOrderId', opts.signal, () => inner.orderByOrderId!(orderid, opts));
      return lookedUp('orderByOrderId', OrderSchema, o, 'orderid', orderid);
    },
    idempotency: inner.idempotency ? guardIdempotency(inner.idempotency) : undefined,
    newId: async (entity, item, opts) => {
      if (typeof inner.newId !== 'function') return undefined;
      const id: unknown = await call('newId', opts.signal, async () => inner.newId!(entity, item, opts));
      const parsed = IdSchema.safeParse(id);
      if (!parsed.success) throw new AdapterContractError('newId', `returned ${typeof id === 'string' ? JSON.stringify(id.slice(0, 80)) : String(id)}, not a valid _id: ${describeZodError(parsed.error)}`);
      return parsed.data;
    },
    close: async () => {
      await inner.close?.();
    },
    inner,
  };
  Object.defineProperty(guarded, GUARDED, { value: true });
  return guarded;
}

async function call<R>(operation: string, signal: AbortSignal | undefined, fn: () => Promise<R>): Promise<R> {
  try {
    return await fn();
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    // Errors that are already the kit's own, and say exactly what is wrong, pass unchanged.
    if (err instanceof AdapterContractError || err instanceof UnstorableValueError || err instanceof DuplicateKeyError || err instanceof StorageError) throw err;
    throw new AdapterError(operation, { cause: err });
  }
}

/** An item found by a lookup (`productBySku`, `orderByOrderId`): valid, and holding the value asked for. */
function lookedUp<T extends Product | Order>(operation: string, schema: typeof ProductSchema | typeof OrderSchema, found: unknown, member: 'sku' | 'orderid', value: string): T | undefined {
  if (found === undefined || found === null) return undefined;
  const parsed = schema.safeParse(found);
  if (!parsed.success) throw new AdapterContractError(operation, describeZodError(parsed.error));
  const got = (parsed.data as Record<string, unknown>)[member];
  if (got !== value) throw new AdapterContractError(operation, `asked for ${member} "${value}", got "${String(got)}"`);
  return parsed.data as T;
}

/** The adapter's Idempotency-Key records: failures become `AdapterError`, and a claim answers a record or nothing. */
function guardIdempotency(store: IdempotencyStore): IdempotencyStore {
  return {
    claim: async (key, record, opts) => {
      const live = await call('idempotency.claim', opts.signal, () => store.claim(key, record, opts));
      if (live === undefined || live === null) return undefined;
      if (!isRecord(live)) throw new AdapterContractError('idempotency.claim', 'answered neither a record nor nothing');
      return live;
    },
    settle: (key, record, opts) => call('idempotency.settle', opts.signal, () => store.settle(key, record, opts)),
    release: (key, fingerprint, opts) => call('idempotency.release', opts.signal, () => store.release(key, fingerprint, opts)),
  };
}

function isRecord(x: unknown): x is IdempotencyRecord {
  const r = x as IdempotencyRecord;
  if (!r || typeof r !== 'object' || typeof r.fingerprint !== 'string' || !Number.isFinite(r.expiresAt)) return false;
  const o = r.outcome;
  return o === undefined || (typeof o === 'object' && o !== null && typeof o.id === 'string' && Array.isArray(o.warnings) && (o.entity === 'products' || o.entity === 'orders'));
}

function guardEntity<E extends Entity>(adapter: StoreAdapter, entity: E, options: GuardOptions): GuardedEntityStore<E> {
  return new EntityGuard(adapter, entity, options);
}

/** One entity store of a user's adapter behind the checks `GuardedEntityStore` promises. */
class EntityGuard<E extends Entity> implements GuardedEntityStore<E> {
  private readonly store: EntityStore<ItemOf<E>>;
  private readonly schema: z.ZodType;
  private readonly validateRaw: boolean;
  private readonly fullWriteCheck: boolean;

  constructor(
    private readonly adapter: StoreAdapter,
    readonly entity: E,
    options: GuardOptions,
  ) {
    this.store = entityStore(adapter, entity) as unknown as EntityStore<ItemOf<E>>;
    this.schema = entityOf(entity).schema;
    this.validateRaw = options.validate === 'all';
    this.fullWriteCheck = options.validateWrites !== 'keys';
  }

  async list(opts: ListOptions): Promise<ListedItem<ItemOf<E>>[]> {
    const op = `${this.entity}.list`;
    const raw = await call(op, opts.signal, () => this.store.list(opts));
    if (!Array.isArray(raw)) throw new AdapterContractError(op, 'did not return an array');
    if (raw.length > opts.limit) throw new AdapterContractError(op, `returned ${raw.length} items for a limit of ${opts.limit}`);
    const sign = opts.sortorder === 'asc' ? 1 : -1;
    let prev: SortKey | undefined = opts.after;
    // A fresh array, not raw.map(): a native driver's array belongs to another realm under test VMs.
    const out: ListedItem<ItemOf<E>>[] = [];
    raw.forEach((x: ItemOf<E> | RawJsonItem, i: number) => {
      const listed = this.listedItem(op, x, `item ${i}`);
      if (prev && sign * compareKeys(listed, prev) <= 0) {
        throw new AdapterContractError(op, `item ${i} ("${listed._id}") is out of ${opts.sortorder} order (sort key is (last_updated, _id))`);
      }
      prev = listed;
      out.push(listed);
    });
    return out;
  }

  async listKeys(opts: ListOptions): Promise<SortKey[]> {
    const store = this.store;
    if (!store.listKeys) return (await this.list(opts)).map((x) => ({ _id: x._id, last_updated: x.last_updated }));
    const op = `${this.entity}.listKeys`;
    const raw = await call(op, opts.signal, () => store.listKeys!(opts));
    if (!Array.isArray(raw)) throw new AdapterContractError(op, 'did not return an array');
    if (raw.length > opts.limit) throw new AdapterContractError(op, `returned ${raw.length} keys for a limit of ${opts.limit}`);
    const sign = opts.sortorder === 'asc' ? 1 : -1;
    let prev: SortKey | undefined = opts.after;
    const out: SortKey[] = [];
    raw.forEach((x: SortKey, i: number) => {
      if (!x || typeof x !== 'object') throw new AdapterContractError(op, `key ${i} is not an object`);
      checkKey(op, x, `key ${i}`);
      const key = { _id: x._id, last_updated: x.last_updated };
      if (prev && sign * compareKeys(key, prev) <= 0) {
        throw new AdapterContractError(op, `key ${i} ("${key._id}") is out of ${opts.sortorder} order (sort key is (last_updated, _id))`);
      }
      prev = key;
      out.push(key);
    });
    return out;
  }

  async count(opts: SignalOptions): Promise<number> {
    const op = `${this.entity}.count`;
    const n = await call(op, opts.signal, () => this.store.count(opts));
    if (!Number.isSafeInteger(n) || n < 0) throw new AdapterContractError(op, `returned ${String(n)}, not a count`);
    return n;
  }

  async get(id: string, opts: SignalOptions): Promise<ItemOf<E> | undefined> {
    const op = `${this.entity}.get`;
    const x = await call(op, opts.signal, () => this.store.get(id, opts));
    if (x === undefined || x === null) return undefined;
    const doc = this.validItem(op, x, `item "${id}"`);
    if (doc._id !== id) throw new AdapterContractError(op, `asked for "${id}", got "${doc._id}"`);
    return doc;
  }

  async getMany(ids: readonly string[], opts: SignalOptions): Promise<(ItemOf<E> | undefined)[]> {
    if (!Array.isArray(ids)) throw new TypeError('getMany takes an array of ids');
    const store = this.store;
    const distinct = [...new Set(ids)];
    if (distinct.length === 0) return [];
    if (!store.getMany) {
      // The fallback: `get` per id, a few in flight (a pooled database answers them side by side).
      const found = new Map<string, ItemOf<E>>();
      let next = 0;
      const worker = async () => {
        while (next < distinct.length) {
          const id = distinct[next++];
          try {
            const item = await this.get(id, opts);
            if (item !== undefined) found.set(id, item);
          } catch (err) {
            next = distinct.length; // the call fails: the other workers ask for nothing more
            throw err;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(GET_MANY_FALLBACK_CONCURRENCY, distinct.length) }, worker));
      return ids.map((id) => found.get(id));
    }
    const op = `${this.entity}.getMany`;
    const raw = await call(op, opts.signal, () => store.getMany!(distinct, opts));
    if (!Array.isArray(raw)) throw new AdapterContractError(op, 'did not return an array');
    const asked = new Set(distinct);
    const found = new Map<string, ItemOf<E>>();
    raw.forEach((x: unknown, i: number) => {
      const doc = this.validItem(op, x, `item ${i}`);
      if (!asked.has(doc._id)) throw new AdapterContractError(op, `item ${i} ("${doc._id}") was not asked for`);
      if (found.has(doc._id)) throw new AdapterContractError(op, `item ${i} ("${doc._id}") is returned twice`);
      found.set(doc._id, doc);
    });
    return ids.map((id) => found.get(id));
  }

  async upsert(item: ItemOf<E>, opts: WriteOptions): Promise<UpsertResult<ItemOf<E>>> {
    const op = `${this.entity}.upsert`;
    const r = await call(op, opts.signal, () => this.store.upsert(item, opts));
    if (!r || typeof r !== 'object') throw new AdapterContractError(op, 'did not return an upsert result');
    return this.writtenResult(op, r, item._id, 'result');
  }

  async upsertMany(items: readonly ItemOf<E>[], opts: WriteOptions): Promise<UpsertResult<ItemOf<E>>[]> {
    const op = `${this.entity}.upsertMany`;
    if (!Array.isArray(items)) throw new TypeError('upsertMany takes an array of items');
    const store = this.store;
    const results = await call(op, opts.signal, async () => {
      if (store.upsertMany) return store.upsertMany(items, opts);
      opts.signal.throwIfAborted();
      const out: UpsertResult<ItemOf<E>>[] = [];
      for (const item of items) out.push(await store.upsert(item, opts));
      return out;
    });
    if (!Array.isArray(results)) throw new AdapterContractError(op, 'did not return an array of upsert results');
    if (results.length !== items.length) throw new AdapterContractError(op, `returned ${results.length} results for ${items.length} items`);
    return results.map((r, i) => this.writtenResult(op, r, items[i]._id, `result ${i}`));
  }

  async check(item: ItemOf<E>, opts: SignalOptions): Promise<string[]> {
    const op = entityOf(this.entity).checkHook;
    const fn = this.adapter[op] as ((i: ItemOf<E>, o: SignalOptions) => Promise<string[]>) | undefined;
    if (!fn) return [];
    const reasons = await call(op, opts.signal, () => fn.call(this.adapter, item, opts));
    if (!Array.isArray(reasons) || reasons.some((r) => typeof r !== 'string')) {
      throw new AdapterContractError(op, 'must return an array of strings');
    }
    return reasons;
  }

  /** One listed element, an object or raw JSON, checked and wrapped. */
  private listedItem(op: string, x: ItemOf<E> | RawJsonItem, where: string): ListedItem<ItemOf<E>> {
    if (isRawJson(x)) {
      checkKey(op, x, where);
      const doc = this.validateRaw ? this.validItem(op, JSON.parse(x.json), where) : undefined;
      if (doc && doc._id !== x._id) throw new AdapterContractError(op, `${where}: JSON _id differs from its key`);
      return new ListedItem<ItemOf<E>>(x._id, x.last_updated, doc, this.validateRaw ? undefined : x.json);
    }
    const doc = this.validItem(op, x, where);
    const key = keyOf(doc);
    checkKey(op, key, where);
    return new ListedItem<ItemOf<E>>(key._id, key.last_updated, doc, undefined);
  }

  /** Checks one item an upsert returned for `written` (the `_id` asked for). */
  private writtenResult(op: string, r: unknown, written: string, where: string): UpsertResult<ItemOf<E>> {
    if (!r || typeof r !== 'object') throw new AdapterContractError(op, `${where}: not an upsert result`);
    const { item, changed, created } = r as UpsertResult<unknown>;
    let doc: ItemOf<E>;
    if (this.fullWriteCheck) doc = this.validItem(op, item, `item "${written}"`);
    else {
      if (!item || typeof item !== 'object' || Array.isArray(item)) throw new AdapterContractError(op, `${where}: item "${written}" is not an object`);
      checkKey(op, item as { _id?: unknown; last_updated?: unknown }, `item "${written}"`);
      doc = item as ItemOf<E>;
    }
    if (doc._id !== written) throw new AdapterContractError(op, `wrote "${written}", returned "${doc._id}"`);
    return { item: doc, changed: Boolean(changed), created: Boolean(created) };
  }

  private validItem(operation: string, raw: unknown, where: string): ItemOf<E> {
    const parsed = this.schema.safeParse(raw);
    if (!parsed.success) throw new AdapterContractError(operation, `${where}: ${describeZodError(parsed.error)}`);
    return parsed.data as ItemOf<E>;
  }
}

function checkKey(operation: string, item: { _id?: unknown; last_updated?: unknown }, where: string): void {
  if (typeof item._id !== 'string' || item._id === '') throw new AdapterContractError(operation, `${where} has no _id`);
  if (!Number.isSafeInteger(item.last_updated) || (item.last_updated as number) < 0) {
    throw new AdapterContractError(operation, `${where} ("${item._id}") has no valid last_updated`);
  }
}
