/**
 * The data adapter: the one extension point between the kit and a database.
 *
 * The same interface is the store's data source (webhook routers), the service's sink (sync
 * engine) and the daemon's local store (reverse connection). The kit owns HTTP, auth, validation,
 * paging envelopes, cursors, byte and time budgets; an adapter owns only data access, and never
 * sees Express objects.
 *
 * Implement `StoreAdapter` directly, or extend `BaseStoreAdapter` / `BaseEntityStore` to get
 * defaults (an upsert with change detection and `last_updated` rules, no-op business checks) so
 * that members added in later versions do not break you. Every adapter the kit is handed is
 * wrapped by `guardAdapter` (see `adapter-guard.ts`), which checks what it returns.
 *
 * @example A complete adapter over a Map (see examples/custom-adapter.ts for a runnable one):
 * ```ts
 * import { BaseEntityStore, BaseStoreAdapter, compareKeys } from 'storebridge/adapter';
 * import type { ListOptions, Product, Order } from 'storebridge';
 *
 * class MapStore<T extends { _id: string; last_updated?: number }> extends BaseEntityStore<T> {
 *   private readonly rows = new Map<string, T>();
 *   async list({ sortorder, limit, offset = 0, after }: ListOptions) {
 *     const sign = sortorder === 'asc' ? 1 : -1;
 *     const all = [...this.rows.values()].sort((a, b) => sign * compareKeys(keyOf(a), keyOf(b)));
 *     const start = after ? all.findIndex((x) => sign * compareKeys(keyOf(x), after) > 0) : offset;
 *     return (start < 0 ? [] : all.slice(start, start + limit));
 *   }
 *   async count() { return this.rows.size; }
 *   async get(id: string) { return this.rows.get(id); }
 *   protected async put(item: T) { this.rows.set(item._id, item); }
 * }
 * class MapAdapter extends BaseStoreAdapter {
 *   readonly products = new MapStore<Product>();
 *   readonly orders = new MapStore<Order>();
 * }
 * ```
 */
import type { Order, Product } from './contract/webhook';
import type { Entity, ItemOf } from './contract/entities';
import type { SortOrder } from './contract/messages';
import { entityOf, perEntity, type NaturalKeyOf } from './contract/entities';
import type { ListFilters } from './contract/query';

/** The sort key of every list: `(last_updated, _id)`, `_id` breaking ties. Stable and unique. */
export interface SortKey {
  readonly last_updated: number;
  readonly _id: string;
}

/**
 * Compares two ids in Unicode code-point order, which is the order of their UTF-8 bytes: the order
 * SQLite (BINARY), PostgreSQL (`COLLATE "C"`) and MariaDB (binary collations) sort them in. JS `<`
 * compares UTF-16 code units instead, and the two orders disagree when one id has a character above
 * U+FFFF (a surrogate pair: emoji, 𠮷) where the other has one in U+E000–U+FFFF (halfwidth forms,
 * private use): `'\u{1F600}' < '\uFF61'` is true in JS, false in every database.
 */
export function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Only a surrogate against U+E000–U+FFFF compares differently: lift surrogates above that range.
    if (x >= 0xd800 && y >= 0xd800) return codePointRank(x) - codePointRank(y);
    return x - y;
  }
  return a.length - b.length;
}

/** A UTF-16 unit at or above U+D800, ranked so that surrogates (astral characters) sort after U+FFFF. */
function codePointRank(unit: number): number {
  return unit <= 0xdfff ? unit + 0x2000 : unit - 0x800;
}

/** Compares two sort keys in ascending order: negative, zero or positive (ids by `compareIds`). */
export function compareKeys(a: SortKey, b: SortKey): number {
  if (a.last_updated !== b.last_updated) return a.last_updated < b.last_updated ? -1 : 1;
  return compareIds(a._id, b._id);
}

/** The sort key of a stored item (`last_updated` absent counts as 0). */
export function keyOf(item: { _id: string; last_updated?: number }): SortKey {
  return { last_updated: item.last_updated ?? 0, _id: item._id };
}

/** What `EntityStore.list` is asked for: paging, and the list filters given (`ListFilters`, from `LIST_QUERY`). */
export interface ListOptions extends ListFilters {
  /** `asc`: by `(last_updated, _id)` ascending; `desc`: the exact reverse. */
  readonly sortorder: SortOrder;
  /** At most this many items (≥ 1). Fewer only at the end of the data. */
  readonly limit: number;
  /** Numeric position (0-based) in `sortorder`. Ignored when `after` is given. */
  readonly offset?: number;
  /** Keyset position: return only items strictly after this key in `sortorder`. */
  readonly after?: SortKey;
  /** Aborted when the request's time budget runs out or the client goes away. */
  readonly signal: AbortSignal;
}

export interface SignalOptions {
  readonly signal: AbortSignal;
}

/** How a write treats `last_updated`. */
export interface WriteOptions extends SignalOptions {
  /**
   * `touch` (store-side writes): when the content changes, `last_updated` becomes
   * `max(now, previous + 1)`, so it is monotonic per item; an unchanged write stores nothing.
   * `keep` (replication into a sink): the item's own `last_updated` is stored as given.
   */
  readonly lastUpdated: 'touch' | 'keep';
  /** The clock reading to use for `touch` (Unix ms). */
  readonly now: number;
  /**
   * A partial write (the store's write webhooks): the stored item's members that the incoming item
   * lacks are kept, except the ones named in `remove`, which are dropped. Absent: the incoming item
   * replaces the stored one whole (replication). `resolveWrite` applies it; an adapter that does not
   * call `resolveWrite` must merge under the same lock as the write, so that two partial writes of
   * different members never lose one another (the conformance suite checks this).
   */
  readonly merge?: { readonly remove: readonly string[] };
  /**
   * A create under an id the store just assigned (`newId`, or the kit's `<noun>-<uuid>`): the item
   * must not exist yet. An adapter whose ids can be taken by another process between `newId` and
   * the write (one more than the largest, say) refuses, under the write's lock, with
   * `DuplicateKeyError(entity, '_id', id, id)` when a row has that id; the write core then assigns
   * another. Adapters whose ids cannot collide may ignore it.
   */
  readonly create?: boolean;
}

export interface UpsertResult<T> {
  /** The item as stored now. */
  readonly item: T;
  /** Whether anything was written. */
  readonly changed: boolean;
  /** Whether the item did not exist before. */
  readonly created: boolean;
}

const RAW_JSON = Symbol.for('storebridge.rawJson');

/**
 * An item a list returns already serialized as webhook-form JSON (the fast path: no parse and
 * re-stringify when the database stores the wire document). Make one with `rawJson()`.
 */
export interface RawJsonItem extends SortKey {
  readonly [RAW_JSON]: true;
  /** The webhook-form JSON text of the item. The adapter vouches for its validity. */
  readonly json: string;
}

export function rawJson(_id: string, last_updated: number, json: string): RawJsonItem {
  return { [RAW_JSON]: true, _id, last_updated, json };
}

export function isRawJson(x: unknown): x is RawJsonItem {
  return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[RAW_JSON] === true;
}

/** Access to one entity's items. All methods may reject; the kit answers 500 without details. */
export interface EntityStore<T extends { _id: string; last_updated?: number }> {
  /** One page in `sortorder` from `offset` or strictly after `after`, at most `limit` items. */
  list(options: ListOptions): Promise<ReadonlyArray<T | RawJsonItem>>;
  /**
   * Optional: the sort keys (`{_id, last_updated}`) of the page `list` would return with the same
   * options, without the items. An ids-only (stub) listing and the sync engine's check of stubs
   * against the sink ask for keys only; a database that can read them without the documents (a
   * covering index) answers ten times faster. Without it the kit calls `list` and keeps the keys
   * (`BaseEntityStore` provides that default). Same order, paging and limit rules as `list`.
   *
   * @example A SQL store reading only the key columns
   * ```ts
   * async listKeys({ sortorder, limit, after, offset = 0 }: ListOptions): Promise<SortKey[]> {
   *   const rows = await this.keysQuery(sortorder, limit, after, offset); // SELECT _id, last_updated …
   *   return rows.map((r) => ({ _id: r._id, last_updated: Number(r.last_updated) }));
   * }
   * ```
   */
  listKeys?(options: ListOptions): Promise<ReadonlyArray<SortKey>>;
  /** Exact number of items (`itemsTotal`). Must be cheap: it is asked on every list request. */
  count(options: SignalOptions): Promise<number>;
  /** The item with this `_id`, or `undefined`. */
  get(id: string, options: SignalOptions): Promise<T | undefined>;
  /**
   * Optional: the items with these `_id`s, in one call (the store's batched by-ID read,
   * `?ids=a,b,c`, asks for up to `MAX_BY_IDS` at once). Implement it when your database can read
   * them in one query (`WHERE _id IN (…)`). Contract:
   * - `ids` are distinct, valid `_id`s (the kit never asks for one twice in a call);
   * - the answer holds each item found once, in any order (the guard puts them in the order asked),
   *   and nothing that was not asked for; an id not found is simply left out;
   * - the items are what `get` would answer for each id.
   * Without it, the kit calls `get` once per id.
   *
   * @example One query (a SQL store over Kysely):
   * ```ts
   * async getMany(ids: readonly string[], { signal }: SignalOptions): Promise<Product[]> {
   *   signal.throwIfAborted();
   *   if (ids.length === 0) return [];
   *   const rows = await this.db.selectFrom('products').select('doc').where('_id', 'in', ids).execute();
   *   return rows.map((r) => JSON.parse(r.doc));
   * }
   * ```
   */
  getMany?(ids: readonly string[], options: SignalOptions): Promise<ReadonlyArray<T>>;
  /**
   * Inserts or replaces the item atomically, following `WriteOptions.lastUpdated`
   * (`resolveWrite` implements the rule). Concurrent upserts of one `_id` must neither lose an
   * update nor create two rows.
   */
  upsert(item: T, options: WriteOptions): Promise<UpsertResult<T>>;
  /**
   * Optional: many upserts in one call (the sync engine writes each fetched page with one call;
   * seeding uses it too). Implement it when your database can do better than one transaction per
   * item. Contract:
   * - the same rule as `upsert` for every item (`resolveWrite`), and each item is written
   *   atomically; the call as a whole need not be (on a failure, a prefix or any subset of the
   *   items may be stored — each either whole or not at all);
   * - the results are in input order, one per item, `results[i].item._id === items[i]._id`;
   * - an `_id` repeated in one call is applied in input order, each occurrence seeing the one
   *   before it, exactly as sequential `upsert`s would (callers normally pass distinct `_id`s);
   * - an aborted `signal` before anything is written rejects and stores nothing.
   * Without it, the kit calls `upsert` once per item. `BaseEntityStore` provides that loop.
   *
   * @example One transaction per batch (a SQL store; `writeOne` applies `resolveWrite` to one row):
   * ```ts
   * async upsertMany(items: readonly Product[], options: WriteOptions) {
   *   options.signal.throwIfAborted();
   *   return this.db.transaction().execute(async (trx) => {
   *     const results = [];
   *     for (const item of items) results.push(await this.writeOne(trx, item, options));
   *     return results;
   *   });
   * }
   * ```
   */
  upsertMany?(items: readonly T[], options: WriteOptions): Promise<UpsertResult<T>[]>;
}

/**
 * The member that names an item besides its `_id`, per entity: a product's `sku` (order items name
 * products by it) and an order's `orderid` (the marketplace's order number: what makes an order
 * create idempotent). Each names at most one item among the store's own writes (see `uniqueKeyOf`).
 */
export const UNIQUE_MEMBERS: { readonly [E in Entity]: NaturalKeyOf<E> } = perEntity((e) => entityOf(e).naturalKey) as never;
export type UniqueMember = NaturalKeyOf<Entity>;

/**
 * The value an item is indexed under by its unique member, or `undefined` when it has none to
 * index: the member is absent, not a string, or blank (`""` is how the deployed peers say "no
 * SKU", so blanks never collide). The rule every adapter applies:
 * - a `touch` write (the store's own) whose key another item holds stores nothing and rejects with
 *   `DuplicateKeyError` (enforced by the database, not only by a read before the write: two
 *   concurrent creates of one key leave one item);
 * - a `keep` write (replicating another system, whose data may repeat a key) stores the item, and
 *   the key keeps naming the item that held it (`productBySku` / `orderByOrderId` answer that one).
 */
export function uniqueKeyOf(entity: Entity, item: object): string | undefined {
  const value = (item as Record<string, unknown>)[entityOf(entity).naturalKey];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The adapter: products, orders, and optional business checks. */
export interface StoreAdapter {
  readonly products: EntityStore<Product>;
  readonly orders: EntityStore<Order>;
  /**
   * The adapter's own reasons to refuse an order write (unknown business partner, …), each a
   * human-readable message. Empty: accept. Called after the kit's built-in checks pass.
   */
  checkOrder?(order: Order, options: SignalOptions): Promise<string[]>;
  /** Like `checkOrder`, for product writes. */
  checkProduct?(product: Product, options: SignalOptions): Promise<string[]>;
  /**
   * The product with this SKU, for order writes (an order item's `id` names a product by `_id`
   * or `sku`). Without it only `_id` references resolve. `BaseStoreAdapter` provides a scan;
   * override it with an indexed lookup.
   */
  productBySku?(sku: string, options: SignalOptions): Promise<Product | undefined>;
  /**
   * The order with this `orderid` (see `uniqueKeyOf`): an order create (no id) whose `orderid` an
   * order already has is that order again, not a second one. Without it creates are not matched by
   * `orderid`. `BaseStoreAdapter` provides a scan; override it with an indexed lookup.
   */
  orderByOrderId?(orderid: string, options: SignalOptions): Promise<Order | undefined>;
  /**
   * Optional: where the records of writes made under an `Idempotency-Key` header are kept (see
   * `IdempotencyStore`). Keep them in the same database as the items, so they survive a restart
   * and every replica shares them. Without it a router keeps them in its own memory.
   */
  readonly idempotency?: IdempotencyStore;
  /**
   * Optional: the `_id` of an item being created (a write with neither an `id` parameter nor a body
   * `_id`: the deployed service creates that way). Return an id no stored item has, made of
   * characters that survive being put raw into a URL (no `#`, `?`, `/`, `%`, space or control
   * characters). Without it the kit generates a random one (`<noun>-<uuid>`).
   *
   * @example Ids from a database sequence:
   * ```ts
   * async newId(entity, _item, { signal }) {
   *   const { rows } = await pool.query({ text: `SELECT nextval('${entity}_ids') AS n`, signal });
   *   return `${entity === 'products' ? 'P' : 'O'}${rows[0].n}`;
   * }
   * ```
   */
  newId?<E extends Entity>(entity: E, item: Omit<ItemOf<E>, '_id'>, options: SignalOptions): string | Promise<string>;
  /** Releases connections. Called by the CLI on shutdown. */
  close?(): Promise<void>;
}

/*
 * Where a store keeps the writes made under an `Idempotency-Key` header (docs/writes.md
 * "Idempotency-Key"): one record per key, claimed atomically by the first request, completed with
 * what it wrote, replayed to every repeat until it expires. An adapter offers one as
 * `StoreAdapter.idempotency`, kept in its own database so that records survive a restart and
 * replicas share them (the SQL adapter: a table with the key as primary key).
 * `MemoryIdempotencyStore` is the in-process one: the memory adapter's, and a router's own when its
 * adapter has none.
 */

/** What a completed write under a key did: the item it wrote and the warnings it answered. */
export interface IdempotencyOutcome {
  readonly entity: Entity;
  readonly id: string;
  readonly warnings: readonly string[];
}

/** One key's record. */
export interface IdempotencyRecord {
  /** SHA-256 (hex) of the request the key was first used with: a repeat must carry the same. */
  readonly fingerprint: string;
  /** Unix ms from which the record is forgotten (and the key may be used again). */
  readonly expiresAt: number;
  /** The completed write; absent while the first request is still running. */
  readonly outcome?: IdempotencyOutcome;
}

/**
 * The records of one store. Keys are opaque (the kit passes a SHA-256 hex digest of the caller and
 * the header's value: 64 characters).
 *
 * @example In the same database as the items (a sketch over a `Map`; see `MemoryIdempotencyStore`):
 * ```ts
 * class MyAdapter extends BaseStoreAdapter {
 *   readonly idempotency = new MemoryIdempotencyStore(); // or your table, with `claim` as one transaction
 * }
 * ```
 */
export interface IdempotencyStore {
  /**
   * Atomically: when `key` has no record, or only one that expired before `now`, stores `record`
   * and answers `undefined` (this request owns the key); otherwise answers the live record and
   * changes nothing. Two concurrent claims of one key: exactly one answers `undefined`.
   */
  claim(key: string, record: IdempotencyRecord, options: SignalOptions & { readonly now: number }): Promise<IdempotencyRecord | undefined>;
  /** Replaces the record of `key` (the owner completing its claim with the outcome). */
  settle(key: string, record: IdempotencyRecord, options: SignalOptions): Promise<void>;
  /**
   * Removes the record of `key` if it still has this fingerprint and no outcome: the first request
   * failed, so a retry runs again instead of waiting for the claim to expire.
   */
  release(key: string, fingerprint: string, options: SignalOptions): Promise<void>;
}

/** Records kept in this process: lost on restart, not shared with replicas. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();
  private sweptAt = 0;

  async claim(key: string, record: IdempotencyRecord, { now, signal }: SignalOptions & { now: number }): Promise<IdempotencyRecord | undefined> {
    signal.throwIfAborted();
    this.sweep(now);
    const live = this.records.get(key);
    if (live && live.expiresAt > now) return live;
    this.records.set(key, record);
    return undefined;
  }

  async settle(key: string, record: IdempotencyRecord, { signal }: SignalOptions): Promise<void> {
    signal.throwIfAborted();
    this.records.set(key, record);
  }

  async release(key: string, fingerprint: string, { signal }: SignalOptions): Promise<void> {
    signal.throwIfAborted();
    const r = this.records.get(key);
    if (r && r.fingerprint === fingerprint && !r.outcome) this.records.delete(key);
  }

  /** Drops expired records, at most once a minute (a claim stays O(1) on average). */
  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [key, r] of this.records) if (r.expiresAt <= now) this.records.delete(key);
  }
}

/** Deep equality of JSON values, independent of key order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual(ao[k], bo[k]));
}

/** Same content apart from `last_updated`. */
export function sameContent<T extends { last_updated?: number }>(a: T, b: T): boolean {
  return jsonEqual({ ...a, last_updated: 0 }, { ...b, last_updated: 0 });
}

/**
 * The write rule every adapter follows, given the stored item (if any) and the incoming one.
 * Call it inside your transaction, then store `item` when `changed`.
 */
export function resolveWrite<T extends { _id: string; last_updated?: number }>(
  existing: T | undefined,
  incoming: T,
  options: Pick<WriteOptions, 'lastUpdated' | 'now' | 'merge'>,
): UpsertResult<T> {
  if (existing && options.merge) incoming = mergeMembers(existing, incoming, options.merge.remove);
  if (options.lastUpdated === 'keep') {
    const item = { ...incoming, last_updated: incoming.last_updated ?? 0 };
    const changed = !existing || !jsonEqual(existing, item);
    return { item: changed ? item : existing!, changed, created: !existing };
  }
  if (existing && sameContent(existing, incoming)) return { item: existing, changed: false, created: false };
  const previous = existing?.last_updated ?? -1;
  const item = { ...incoming, last_updated: Math.max(options.now, previous + 1) };
  return { item, changed: true, created: !existing };
}

/**
 * A partial write applied to a stored item: the stored members `incoming` lacks are kept (but for
 * those in `remove`), every member `incoming` has replaces the stored one whole (an array or an
 * object is not merged further). `last_updated` is the incoming one's.
 */
export function mergeMembers<T extends object>(existing: T, incoming: T, remove: readonly string[] = []): T {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(existing)) if (!remove.includes(name) && name !== 'last_updated') out[name] = value;
  return { ...out, ...incoming } as T;
}

/** Serializes async work per key, in-process (what `BaseEntityStore.upsert` uses). */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();
  async run<R>(key: string, fn: () => Promise<R>): Promise<R> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await next;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/**
 * Base class for one entity's store. Implement `list`, `count`, `get` and `put`; `upsert` then
 * follows `resolveWrite` under a per-`_id` lock. The lock is in-process: a store shared by
 * several processes must override `upsert` with a database transaction (the SQL adapter does).
 */
export abstract class BaseEntityStore<T extends { _id: string; last_updated?: number }> implements EntityStore<T> {
  private readonly writeLock = new KeyedMutex();
  abstract list(options: ListOptions): Promise<ReadonlyArray<T | RawJsonItem>>;
  /** Default: `list`, keeping the keys (override it when your database reads keys alone faster). */
  async listKeys(options: ListOptions): Promise<SortKey[]> {
    return (await this.list(options)).map((x) => keyOf(x as SortKey));
  }
  abstract count(options: SignalOptions): Promise<number>;
  abstract get(id: string, options: SignalOptions): Promise<T | undefined>;
  /**
   * Stores the final item (insert or replace). `options.lastUpdated` tells a store-side write
   * (`touch`: a `sku` / `orderid` another item holds is a `DuplicateKeyError`) from replication
   * (`keep`: stored, the key keeps its holder); see `uniqueKeyOf`.
   */
  protected abstract put(item: T, options: WriteOptions): Promise<void>;

  upsert(item: T, options: WriteOptions): Promise<UpsertResult<T>> {
    return this.writeLock.run(item._id, async () => {
      const result = resolveWrite(await this.get(item._id, options), item, options);
      if (result.changed) await this.put(result.item, options);
      return result;
    });
  }

  /** Default: `upsert` for each item in turn (override it with one transaction per batch). */
  async upsertMany(items: readonly T[], options: WriteOptions): Promise<UpsertResult<T>[]> {
    options.signal.throwIfAborted();
    const results: UpsertResult<T>[] = [];
    for (const item of items) results.push(await this.upsert(item, options));
    return results;
  }
}

/** Base class for adapters: defaults for every optional member. */
export abstract class BaseStoreAdapter implements StoreAdapter {
  abstract readonly products: EntityStore<Product>;
  abstract readonly orders: EntityStore<Order>;
  async checkOrder(_order: Order, _options: SignalOptions): Promise<string[]> {
    return [];
  }
  async checkProduct(_product: Product, _options: SignalOptions): Promise<string[]> {
    return [];
  }
  /** Default: walks the catalog page by page. Correct, O(n): override it with an index. */
  async productBySku(sku: string, options: SignalOptions): Promise<Product | undefined> {
    return scan(this.products, (p) => p.sku === sku, options);
  }
  /** Default: walks the orders page by page. Correct, O(n): override it with an index. */
  async orderByOrderId(orderid: string, options: SignalOptions): Promise<Order | undefined> {
    return scan(this.orders, (o) => o.orderid === orderid, options);
  }
  async close(): Promise<void> {}
}

/** The first item in `asc` order that `match`es, walking the store page by page. */
async function scan<T extends { _id: string; last_updated?: number }>(store: EntityStore<T>, match: (item: T) => boolean, options: SignalOptions): Promise<T | undefined> {
  let after: SortKey | undefined;
  for (;;) {
    const page = await store.list({ sortorder: 'asc', limit: 500, after, signal: options.signal });
    for (const x of page) {
      const item = isRawJson(x) ? (JSON.parse(x.json) as T) : x;
      if (match(item)) return item;
    }
    if (page.length < 500) return undefined;
    after = keyOf(page[page.length - 1]);
  }
}

/** The store of one entity, by name. */
export function entityStore(adapter: StoreAdapter, entity: Entity): EntityStore<Product> | EntityStore<Order> {
  // Each entity's store is the adapter's member of that name (`adapter.products`): the registry's names.
  return (adapter as unknown as Record<Entity, EntityStore<Product> | EntityStore<Order>>)[entity];
}
