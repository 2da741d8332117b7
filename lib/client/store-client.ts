/**
 * The service-side caller of a store's webhooks (after ky: injectable fetch, normalised retry
 * options, hooks, one error class per failure kind).
 */
import type { Order, Product } from '../contract/webhook';
import type { Entity, ItemOf } from '../contract/entities';
import { entityOf } from '../contract/entities';
import type { SortOrder } from '../contract/messages';
import { listFiltersOf, type ListFilters } from '../contract/query';
import { parseClientOptions, type ClientConfig, type Operation, type StoreClientOptions } from './client-options';
import { send, type HttpRequest, type HttpResponse, type TransportStats } from './client-transport';
import { StoreContractError, StoreBadRequestError, type StoreErrorContext } from './client-errors';
import { CatalogWalk, type ListPage, type WalkOptions } from './catalog-walk';
import { requestUrl, type OperationQuery } from './client-urls';
import { InvalidOptionError } from '../errors';
import { IDEMPOTENCY_KEY_HEADER } from '../contract/webhook';
import { idempotencyKeyOf } from './idempotency';
import { advertisedByIds, readByIdReply, readByIdsReply, readListReply, readWriteReply, replyJson, type NormalisationCounts, type WriteResult } from './store-reply';
import { MAX_BY_IDS } from '../contract/limits';
import { z } from 'zod';
import { readOption } from '../options';

/** The ids of one batched by-ID read: at most the read's limit (`MAX_BY_IDS`). */
const BY_IDS_ARGUMENT = z.array(z.string(), { error: 'must be an array of ids' }).max(MAX_BY_IDS, `must hold at most ${MAX_BY_IDS} ids (the batched by-ID read's limit)`);

/** One list request: paging, and the list filters to send (`ListFilters`, from `LIST_QUERY`). */
export interface ListOptions extends ListFilters {
  readonly sortorder: SortOrder;
  readonly jobid: number;
  readonly offset?: number;
  readonly next?: string;
  /** Sent as `limit` (overrides the client's `pageSize` for this call). */
  readonly limit?: number;
  readonly signal?: AbortSignal;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface WriteOptions extends CallOptions {
  readonly jobid: number;
  /**
   * The `Idempotency-Key` sent with the write (1–255 printable ASCII characters). A create (an item
   * without `_id`) gets a new random one by default; every retry of the call sends the same. Give
   * the key of a failed call to repeat it later without creating the item twice.
   */
  readonly idempotencyKey?: string;
}

/** An item to create: without `_id`, the store assigns one (the deployed service's create). */
export type NewItemOf<E extends Entity> = Omit<ItemOf<E>, '_id'> & { readonly _id?: undefined };
/** What a write sends: an item to update (with `_id`) or to create (without). */
export type WritableItem<E extends Entity> = ItemOf<E> | NewItemOf<E>;

/** A by-ID read with what the reader normalised in it. */
export interface ReadById<T> {
  readonly item: T;
  readonly normalisations: NormalisationCounts;
}

/** A batched by-ID read (`readByIds`), read. */
export interface ReadByIds<T> {
  /** The valid items answered, in the order asked. */
  readonly items: T[];
  /** Ids the store says it does not hold. */
  readonly missing: string[];
  /**
   * Ids answered neither way, or answered with an item that fails the contract: read each of them
   * again with `readById` (a store leaves items out that would cross its page budget; the single
   * read then says what is wrong with an invalid one).
   */
  readonly unanswered: string[];
  readonly normalisations: NormalisationCounts;
}

export interface StoreClient {
  /** The parsed options, without the key. */
  readonly config: Readonly<Omit<ClientConfig, 'svcKey'>>;
  /** Requests sent (every attempt) and retries, since creation. */
  readonly stats: Readonly<TransportStats>;
  listProducts(options: ListOptions): Promise<ListPage<Product>>;
  listOrders(options: ListOptions): Promise<ListPage<Order>>;
  list<E extends Entity>(entity: E, options: ListOptions): Promise<ListPage<ItemOf<E>>>;
  getProduct(id: string, options?: CallOptions): Promise<Product>;
  getOrder(id: string, options?: CallOptions): Promise<Order>;
  get<E extends Entity>(entity: E, id: string, options?: CallOptions): Promise<ItemOf<E>>;
  /** `get`, with the normalisations the reader applied (the sync engine counts them). */
  readById<E extends Entity>(entity: E, id: string, options?: CallOptions): Promise<ReadById<ItemOf<E>>>;
  /**
   * Several items in one request (`GET {list URL}?ids=a,b,c`): the batched by-ID read, an
   * extension of this kit's store. Send it only to a store whose list pages advertised it
   * (`ListPage.byIds`, from the `Storebridge-By-Ids` header), with at most that many distinct ids;
   * a deployed store does not know `ids` and would answer a list page (a `StoreContractError`).
   *
   * @example
   * ```ts
   * const page = await client.list('products', { sortorder: 'asc', jobid: 1 });
   * if (page.byIds) {
   *   const read = await client.readByIds('products', ['p1', 'p2'], { signal });
   *   // read.items: the items found, in order; read.missing: ids the store does not hold
   * }
   * ```
   */
  readByIds<E extends Entity>(entity: E, ids: readonly string[], options?: CallOptions): Promise<ReadByIds<ItemOf<E>>>;
  /** Updates the order (with `_id`) or creates it (without: the result carries the `_id` the store assigned). */
  writeOrder(order: WritableItem<'orders'>, options: WriteOptions): Promise<WriteResult<Order>>;
  writeProduct(product: WritableItem<'products'>, options: WriteOptions): Promise<WriteResult<Product>>;
  write<E extends Entity>(entity: E, item: WritableItem<E>, options: WriteOptions): Promise<WriteResult<ItemOf<E>>>;
  /** The whole catalog of one entity, each item once. */
  walk<E extends Entity>(entity: E, options: WalkOptions): CatalogWalk<E>;
  /**
   * A raw request for probes (the conformance checker): no status is thrown, no retry. Size and
   * time limits still apply. `svcKey: null` sends no key, a string sends that key instead;
   * `keyHeaders` names the headers it goes in instead of the configured ones.
   */
  probe(request: { operation: string; method: 'GET' | 'POST'; url: string; body?: string; svcKey?: string | null; keyHeaders?: readonly string[]; signal?: AbortSignal }): Promise<HttpResponse>;
  /**
   * The URL of an operation with the query merged into its configured URL's own query; with an
   * `id`, a by-ID URL gets it in its `{id}` placeholder or as `?id=`. Throws `InvalidOptionError`
   * for an operation of an entity the connection does not cover (`config.entities`).
   */
  urlOf(operation: Operation, query?: OperationQuery, id?: string): string;
}

/**
 * Creates a caller for one store connection.
 *
 * @example
 * ```ts
 * import { createStoreClient } from 'storebridge/client';
 * const client = createStoreClient({ baseUrl: 'https://shop.example/webhooks', svcKey: process.env.SVC_KEY!, retry: 5 });
 * for await (const product of client.walk('products', { jobid: 1 })) console.log(product._id);
 * const result = await client.writeOrder(order, { jobid: 2 });
 * if (!result.ok) console.error(result.error, result.reasons);
 * ```
 */
export function createStoreClient(options: StoreClientOptions): StoreClient {
  const config = parseClientOptions(options);
  const stats: TransportStats = { requests: 0, retries: 0 };

  const urlOf = (operation: Operation, query: OperationQuery = {}, id?: string): string => {
    const template = config.urls[operation];
    if (template === undefined) throw new InvalidOptionError(`urls.${operation}`, `is not configured: this connection covers ${config.entities.join(' and ')} only`);
    return requestUrl(template, query, id);
  };

  /** Sends a request and returns its JSON body (text refusals of the key become `StoreAuthError`). */
  async function exchange(req: HttpRequest, counts: NormalisationCounts): Promise<{ res: HttpResponse; ctx: StoreErrorContext; body: unknown }> {
    const res = await send(config, req, stats);
    const ctx: StoreErrorContext = { operation: req.operation, method: req.method, url: req.url, status: res.status, attempts: res.attempts };
    return { res, ctx, body: replyJson(res, ctx, counts) };
  }

  async function list<E extends Entity>(entity: E, opts: ListOptions): Promise<ListPage<ItemOf<E>>> {
    const operation = entityOf(entity).operations.list;
    const url = urlOf(operation, { ...filterQuery(opts), sortorder: opts.sortorder, jobid: opts.jobid, offset: opts.offset, next: opts.next, limit: opts.limit ?? config.pageSize });
    const counts: NormalisationCounts = {};
    const { res, ctx, body } = await exchange({ operation, method: 'GET', url, signal: opts.signal }, counts);
    const page = readListReply(entity, body, ctx, counts);
    const byIds = advertisedByIds(res.headers);
    return { ...page, bytes: res.bytes, durationMs: res.durationMs, ...(byIds === undefined ? {} : { byIds }) };
  }

  async function readById<E extends Entity>(entity: E, id: string, opts: CallOptions = {}): Promise<ReadById<ItemOf<E>>> {
    const operation = entityOf(entity).operations.get;
    const url = urlOf(operation, {}, id);
    const counts: NormalisationCounts = {};
    const { ctx, body } = await exchange({ operation, method: 'GET', url, signal: opts.signal }, counts);
    const read = readByIdReply(entity, body, id, counts);
    if (!read.ok) throw new StoreContractError(ctx, read.error);
    return { item: read.item, normalisations: counts };
  }

  async function readByIds<E extends Entity>(entity: E, ids: readonly string[], opts: CallOptions = {}): Promise<ReadByIds<ItemOf<E>>> {
    if (ids.length === 0) return { items: [], missing: [], unanswered: [], normalisations: {} };
    readOption('ids', BY_IDS_ARGUMENT, ids);
    const operation = entityOf(entity).operations.get;
    // Each id percent-encoded on its own, so a comma inside an id cannot split it (`ItemIdsParameter`).
    const url = urlOf(entityOf(entity).operations.list, { ids: ids.map((id) => encodeURIComponent(id)).join(',') });
    const counts: NormalisationCounts = {};
    const { ctx, body } = await exchange({ operation, method: 'GET', url, signal: opts.signal }, counts);
    const read = readByIdsReply(entity, body, ids, counts);
    if (!read.ok) throw new StoreContractError(ctx, read.error);
    return { ...read.value, normalisations: counts };
  }

  async function write<E extends Entity>(entity: E, item: WritableItem<E>, opts: WriteOptions): Promise<WriteResult<ItemOf<E>>> {
    const operation = entityOf(entity).operations.write;
    // Without `_id` the write is a create: no `id` parameter, and the store assigns the id.
    const url = urlOf(operation, item._id === undefined ? { jobid: opts.jobid } : { jobid: opts.jobid, id: item._id });
    // Retrying a write is safe: the store keys an update by (jobid, id), a create by its
    // Idempotency-Key (one per call, the same on every retry) and an order create by its orderid.
    const key = idempotencyKeyOf(item, opts.idempotencyKey);
    const req: HttpRequest = {
      operation,
      method: 'POST',
      url,
      body: JSON.stringify(item),
      signal: opts.signal,
      accept: (s) => s === 400,
      // 409 under a key: the first attempt still runs at the store (its reply was lost); ask again.
      ...(key === undefined ? {} : { headers: { [IDEMPOTENCY_KEY_HEADER]: key }, retryStatuses: [409] }),
    };
    const { res, ctx, body } = await exchange(req, {});
    const result = readWriteReply(entity, item, body, res.status, {});
    if (result?.ok === 'unreadable') throw new StoreContractError(ctx, result.error);
    if (result) return result;
    if (res.status === 400) {
      const text = body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string' ? (body as { error: string }).error : undefined;
      throw new StoreBadRequestError({ ...ctx, storeError: text });
    }
    throw new StoreContractError(ctx, 'expected the success or the failure structure');
  }

  const { svcKey: _omitted, ...publicConfig } = config;
  return {
    config: publicConfig,
    stats,
    list,
    listProducts: (o) => list('products', o),
    listOrders: (o) => list('orders', o),
    get: async (entity, id, o) => (await readById(entity, id, o)).item,
    readById,
    readByIds,
    getProduct: async (id, o) => (await readById('products', id, o)).item,
    getOrder: async (id, o) => (await readById('orders', id, o)).item,
    write,
    writeOrder: (order, o) => write('orders', order, o),
    writeProduct: (product, o) => write('products', product, o),
    walk: (entity, walkOptions) =>
      new CatalogWalk(
        entity,
        // A stub page's `limit` never shrinks the pages below the client's own `pageSize`.
        (query, signal) =>
          list(entity, {
            ...listFiltersOf(walkOptions),
            sortorder: walkOptions.sortorder ?? 'asc',
            jobid: walkOptions.jobid,
            ...query,
            limit: query.limit === undefined ? undefined : Math.max(query.limit, config.pageSize ?? 0),
            signal,
          }),
        walkOptions,
      ),
    probe: (r) => send(config, { ...r, accept: () => true, retryLimit: 0 }, stats),
    urlOf,
  };
}

/** The list filters of a request as query text (`LIST_QUERY`'s parameters beyond paging: declared once, sent from the options). */
function filterQuery(options: ListOptions): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(listFiltersOf(options))) out[name] = typeof value === 'number' ? value : String(value);
  return out;
}
