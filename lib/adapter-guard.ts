/**
 * The runtime guard around a user's adapter (after kysely's RuntimeDriver): every call goes
 * through it, so a buggy or failing adapter becomes a clear, typed error instead of a wrong page.
 *
 * It checks what comes back (array, at most `limit` items, strict `sortorder` after the keyset
 * position, valid webhook-form items, a non-negative integer count, the `_id` asked for) and turns
 * anything thrown into `AdapterError` (the original kept as `cause`, for logs only), except the
 * kit's own `AdapterContractError` and `UnstorableValueError`, which pass unchanged.
 */
import { ITEM_SCHEMAS, ProductSchema, type Entity, type ItemOf, type Product } from './contract/webhook';
import { describeZodError } from './contract/parse';
import {
  compareKeys,
  isRawJson,
  keyOf,
  type ListOptions,
  type RawJsonItem,
  type SignalOptions,
  type SortKey,
  type StoreAdapter,
  type UpsertResult,
  type WriteOptions,
} from './adapter';
import { AdapterContractError, AdapterError, UnstorableValueError } from './errors';

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
  count(options: SignalOptions): Promise<number>;
  get(id: string, options: SignalOptions): Promise<ItemOf<E> | undefined>;
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
  close(): Promise<void>;
  /** The adapter as given. */
  readonly inner: StoreAdapter;
}

const GUARDED = Symbol.for('storebridge.guardedAdapter');

/** Wraps an adapter (idempotent: a guarded adapter is returned as is). */
export function guardAdapter(adapter: StoreAdapter | GuardedAdapter, options: GuardOptions = {}): GuardedAdapter {
  if ((adapter as unknown as Record<symbol, unknown>)[GUARDED]) return adapter as GuardedAdapter;
  const inner = adapter as StoreAdapter;
  if (!inner || typeof inner !== 'object' || !inner.products || !inner.orders) {
    throw new TypeError('a storebridge adapter must have `products` and `orders` entity stores');
  }
  for (const entity of ['products', 'orders'] as const) {
    for (const m of ['list', 'count', 'get', 'upsert'] as const) {
      if (typeof inner[entity][m] !== 'function') throw new TypeError(`adapter.${entity}.${m} must be a function`);
    }
    const many = inner[entity].upsertMany;
    if (many !== undefined && typeof many !== 'function') throw new TypeError(`adapter.${entity}.upsertMany must be a function when present`);
  }
  const products = guardEntity(inner, 'products', options);
  const orders = guardEntity(inner, 'orders', options);
  const guarded: GuardedAdapter = {
    products,
    orders,
    entity: <E extends Entity>(e: E) => (e === 'products' ? products : orders) as unknown as GuardedEntityStore<E>,
    productBySku: async (sku, opts) => {
      if (!inner.productBySku) return undefined;
      const p = await call('productBySku', opts.signal, () => inner.productBySku!(sku, opts));
      if (p === undefined || p === null) return undefined;
      const parsed = ProductSchema.safeParse(p);
      if (!parsed.success) throw new AdapterContractError('productBySku', describeZodError(parsed.error));
      if (parsed.data.sku !== sku) throw new AdapterContractError('productBySku', `asked for SKU "${sku}", got "${parsed.data.sku}"`);
      return parsed.data;
    },
    hasSkuLookup: typeof inner.productBySku === 'function',
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
    if (err instanceof AdapterContractError || err instanceof UnstorableValueError) throw err;
    throw new AdapterError(operation, { cause: err });
  }
}

function guardEntity<E extends Entity>(adapter: StoreAdapter, entity: E, options: GuardOptions): GuardedEntityStore<E> {
  type T = ItemOf<E>;
  const store = (entity === 'products' ? adapter.products : adapter.orders) as unknown as import('./adapter').EntityStore<T>;
  const schema = ITEM_SCHEMAS[entity];
  const validateRaw = options.validate === 'all';
  const fullWriteCheck = options.validateWrites !== 'keys';

  /** Checks one item an upsert returned for `written` (the `_id` asked for). */
  function writtenResult(op: string, r: unknown, written: string, where: string): UpsertResult<T> {
    if (!r || typeof r !== 'object') throw new AdapterContractError(op, `${where}: not an upsert result`);
    const { item, changed, created } = r as UpsertResult<unknown>;
    let doc: T;
    if (fullWriteCheck) doc = validItem(op, item, `item "${written}"`);
    else {
      if (!item || typeof item !== 'object' || Array.isArray(item)) throw new AdapterContractError(op, `${where}: item "${written}" is not an object`);
      checkKey(op, item as { _id?: unknown; last_updated?: unknown }, `item "${written}"`);
      doc = item as T;
    }
    if (doc._id !== written) throw new AdapterContractError(op, `wrote "${written}", returned "${doc._id}"`);
    return { item: doc, changed: Boolean(changed), created: Boolean(created) };
  }

  function validItem(operation: string, raw: unknown, where: string): T {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw new AdapterContractError(operation, `${where}: ${describeZodError(parsed.error)}`);
    return parsed.data as T;
  }

  function checkKey(operation: string, item: { _id?: unknown; last_updated?: unknown }, where: string): void {
    if (typeof item._id !== 'string' || item._id === '') throw new AdapterContractError(operation, `${where} has no _id`);
    if (!Number.isSafeInteger(item.last_updated) || (item.last_updated as number) < 0) {
      throw new AdapterContractError(operation, `${where} ("${item._id}") has no valid last_updated`);
    }
  }

  return {
    entity,
    async list(opts) {
      const op = `${entity}.list`;
      const raw = await call(op, opts.signal, () => store.list(opts));
      if (!Array.isArray(raw)) throw new AdapterContractError(op, 'did not return an array');
      if (raw.length > opts.limit) throw new AdapterContractError(op, `returned ${raw.length} items for a limit of ${opts.limit}`);
      const sign = opts.sortorder === 'asc' ? 1 : -1;
      let prev: SortKey | undefined = opts.after;
      const out: ListedItem<T>[] = [];
      raw.forEach((x: T | RawJsonItem, i: number) => {
        const where = `item ${i}`;
        let listed: ListedItem<T>;
        if (isRawJson(x)) {
          checkKey(op, x, where);
          const doc = validateRaw ? validItem(op, JSON.parse(x.json), where) : undefined;
          if (doc && doc._id !== x._id) throw new AdapterContractError(op, `${where}: JSON _id differs from its key`);
          listed = new ListedItem<T>(x._id, x.last_updated, doc, validateRaw ? undefined : x.json);
        } else {
          const doc = validItem(op, x, where);
          const key = keyOf(doc);
          checkKey(op, key, where);
          listed = new ListedItem<T>(key._id, key.last_updated, doc, undefined);
        }
        if (prev && sign * compareKeys(listed, prev) <= 0) {
          throw new AdapterContractError(op, `${where} ("${listed._id}") is out of ${opts.sortorder} order (sort key is (last_updated, _id))`);
        }
        prev = listed;
        out.push(listed);
      });
      return out;
    },
    async count(opts) {
      const op = `${entity}.count`;
      const n = await call(op, opts.signal, () => store.count(opts));
      if (!Number.isSafeInteger(n) || n < 0) throw new AdapterContractError(op, `returned ${String(n)}, not a count`);
      return n;
    },
    async get(id, opts) {
      const op = `${entity}.get`;
      const x = await call(op, opts.signal, () => store.get(id, opts));
      if (x === undefined || x === null) return undefined;
      const doc = validItem(op, x, `item "${id}"`);
      if (doc._id !== id) throw new AdapterContractError(op, `asked for "${id}", got "${doc._id}"`);
      return doc;
    },
    async upsert(item, opts) {
      const op = `${entity}.upsert`;
      const r = await call(op, opts.signal, () => store.upsert(item, opts));
      if (!r || typeof r !== 'object') throw new AdapterContractError(op, 'did not return an upsert result');
      return writtenResult(op, r, item._id, 'result');
    },
    async upsertMany(items, opts) {
      const op = `${entity}.upsertMany`;
      if (!Array.isArray(items)) throw new TypeError('upsertMany takes an array of items');
      const results = await call(op, opts.signal, async () => {
        if (store.upsertMany) return store.upsertMany(items, opts);
        opts.signal.throwIfAborted();
        const out: UpsertResult<T>[] = [];
        for (const item of items) out.push(await store.upsert(item, opts));
        return out;
      });
      if (!Array.isArray(results)) throw new AdapterContractError(op, 'did not return an array of upsert results');
      if (results.length !== items.length) throw new AdapterContractError(op, `returned ${results.length} results for ${items.length} items`);
      return results.map((r, i) => writtenResult(op, r, items[i]._id, `result ${i}`));
    },
    async check(item, opts) {
      const op = entity === 'products' ? 'checkProduct' : 'checkOrder';
      const fn = entity === 'products' ? adapter.checkProduct : adapter.checkOrder;
      if (!fn) return [];
      const reasons = await call(op, opts.signal, () => (fn as (i: T, o: SignalOptions) => Promise<string[]>).call(adapter, item, opts));
      if (!Array.isArray(reasons) || reasons.some((r) => typeof r !== 'string')) {
        throw new AdapterContractError(op, 'must return an array of strings');
      }
      return reasons;
    },
  };
}
