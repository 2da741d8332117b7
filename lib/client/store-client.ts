/**
 * The service-side caller of a store's webhooks (after ky: injectable fetch, normalised retry
 * options, hooks, one error class per failure kind).
 */
import { ITEM_SCHEMAS, SINGULAR, type Entity, type ItemOf, type Order, type Product } from '../contract/webhook';
import { PagingSchema, WriteFailureSchema, AnyWarningsSchema, type SortOrder, type WriteMessage } from '../contract/messages';
import { parseWire } from '../contract/parse';
import { parseClientOptions, type ClientConfig, type Operation, type StoreClientOptions } from './client-options';
import { send, type HttpRequest, type HttpResponse, type TransportStats } from './client-transport';
import { StoreContractError, StoreBadRequestError, type StoreErrorContext } from './client-errors';
import { CatalogWalk, type InvalidItem, type ListPage, type WalkOptions } from './catalog-walk';

export interface ListOptions {
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
}

/** The outcome of an add/update: the store's failure structure is a result, not an exception. */
export type WriteResult<T> =
  | { readonly ok: true; readonly item: T; readonly warnings: unknown[] }
  | { readonly ok: false; readonly error: string; readonly reasons: WriteMessage[]; readonly warnings: unknown[]; readonly status: number };

export interface StoreClient {
  readonly config: Readonly<Omit<ClientConfig, 'svcKey'>>;
  /** Requests sent (every attempt) and retries, since creation. */
  readonly stats: Readonly<TransportStats>;
  listProducts(options: ListOptions): Promise<ListPage<Product>>;
  listOrders(options: ListOptions): Promise<ListPage<Order>>;
  list<E extends Entity>(entity: E, options: ListOptions): Promise<ListPage<ItemOf<E>>>;
  getProduct(id: string, options?: CallOptions): Promise<Product>;
  getOrder(id: string, options?: CallOptions): Promise<Order>;
  get<E extends Entity>(entity: E, id: string, options?: CallOptions): Promise<ItemOf<E>>;
  writeOrder(order: Order, options: WriteOptions): Promise<WriteResult<Order>>;
  writeProduct(product: Product, options: WriteOptions): Promise<WriteResult<Product>>;
  write<E extends Entity>(entity: E, item: ItemOf<E>, options: WriteOptions): Promise<WriteResult<ItemOf<E>>>;
  /** The whole catalog of one entity, each item once. */
  walk<E extends Entity>(entity: E, options: WalkOptions): CatalogWalk<E>;
  /**
   * A raw request for probes (the conformance checker): no status is thrown, no retry. Size and
   * time limits still apply. `svcKey: null` sends no key, a string sends that key instead.
   */
  probe(request: { operation: string; method: 'GET' | 'POST'; url: string; body?: string; svcKey?: string | null; signal?: AbortSignal }): Promise<HttpResponse>;
  /** The configured URL of an operation, `{id}` resolved. */
  urlOf(operation: Operation, query?: Record<string, string | number | undefined>, id?: string): string;
}

const LIST_OP = { products: 'listProducts', orders: 'listOrders' } as const;
const GET_OP = { products: 'getProduct', orders: 'getOrder' } as const;
const WRITE_OP = { products: 'writeProduct', orders: 'writeOrder' } as const;

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

  function urlOf(operation: Operation, query: Record<string, string | number | undefined> = {}, id?: string): string {
    let template = config.urls[operation];
    if (id !== undefined) template = template.includes('{id}') ? template.replace('{id}', encodeURIComponent(id)) : `${template.replace(/\/+$/, '')}/${encodeURIComponent(id)}`;
    const url = new URL(template);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  function parseJson(res: HttpResponse, ctx: StoreErrorContext): unknown {
    try {
      return JSON.parse(res.text);
    } catch {
      throw new StoreContractError({ ...ctx, status: res.status }, 'the body is not JSON');
    }
  }

  async function list<E extends Entity>(entity: E, opts: ListOptions): Promise<ListPage<ItemOf<E>>> {
    const operation = LIST_OP[entity];
    const limit = opts.limit ?? config.pageSize;
    const url = urlOf(operation, { sortorder: opts.sortorder, jobid: opts.jobid, offset: opts.offset, next: opts.next, limit });
    const req: HttpRequest = { operation, method: 'GET', url, signal: opts.signal };
    const res = await send(config, req, stats);
    const ctx: StoreErrorContext = { operation, method: 'GET', url, status: res.status, attempts: res.attempts };
    const body = parseJson(res, ctx);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new StoreContractError(ctx, 'the body is not a JSON object');
    const paging = PagingSchema.safeParse((body as Record<string, unknown>).paging);
    if (!paging.success) throw new StoreContractError(ctx, `paging: ${paging.error.issues.map((i) => `${i.path.join('.') || 'paging'} ${i.message}`).join('; ')}`);
    const raw = (body as Record<string, unknown>)[entity];
    if (!Array.isArray(raw)) throw new StoreContractError(ctx, `"${entity}" is not an array`);
    const items: ItemOf<E>[] = [];
    const invalid: InvalidItem[] = [];
    raw.forEach((x: unknown, index: number) => {
      const parsed = parseWire(ITEM_SCHEMAS[entity], x);
      if (parsed.ok) items.push(parsed.value as ItemOf<E>);
      else {
        const id = x && typeof x === 'object' ? (x as { _id?: unknown })._id : undefined;
        invalid.push({ entity, index, _id: typeof id === 'string' ? id : undefined, error: parsed.error });
      }
    });
    return { paging: paging.data, items, invalid, bytes: res.bytes, durationMs: res.durationMs };
  }

  async function get<E extends Entity>(entity: E, id: string, opts: CallOptions = {}): Promise<ItemOf<E>> {
    const operation = GET_OP[entity];
    const url = urlOf(operation, {}, id);
    const res = await send(config, { operation, method: 'GET', url, signal: opts.signal }, stats);
    const ctx: StoreErrorContext = { operation, method: 'GET', url, status: res.status, attempts: res.attempts };
    const body = parseJson(res, ctx) as Record<string, unknown> | null;
    const member = SINGULAR[entity];
    const parsed = parseWire(ITEM_SCHEMAS[entity], body && typeof body === 'object' ? body[member] : undefined, member);
    if (!parsed.ok) throw new StoreContractError(ctx, parsed.error);
    const value = parsed.value as ItemOf<E>;
    if (value._id !== id) throw new StoreContractError(ctx, `asked for "${id}", got "${value._id}"`);
    return value;
  }

  async function write<E extends Entity>(entity: E, item: ItemOf<E>, opts: WriteOptions): Promise<WriteResult<ItemOf<E>>> {
    const operation = WRITE_OP[entity];
    const url = urlOf(operation, { jobid: opts.jobid, id: item._id });
    // Retrying a write is safe: the store keys it by (jobid, id) and repeats answer the same.
    const res = await send(config, { operation, method: 'POST', url, body: JSON.stringify(item), signal: opts.signal, accept: (s) => s === 400 }, stats);
    const ctx: StoreErrorContext = { operation, method: 'POST', url, status: res.status, attempts: res.attempts };
    const body = parseJson(res, ctx) as Record<string, unknown> | null;
    const failure = WriteFailureSchema.safeParse(body);
    if (failure.success) {
      const f = failure.data;
      return { ok: false, error: f.error, reasons: f.reasons, warnings: f.warnings, status: res.status };
    }
    if (res.status === 400) {
      const text = body && typeof body === 'object' && typeof body.error === 'string' ? body.error : undefined;
      throw new StoreBadRequestError({ ...ctx, storeError: text });
    }
    const member = SINGULAR[entity];
    if (!body || typeof body !== 'object' || body.success !== true) throw new StoreContractError(ctx, 'expected the success or the failure structure');
    const parsed = parseWire(ITEM_SCHEMAS[entity], body[member], member);
    if (!parsed.ok) throw new StoreContractError(ctx, parsed.error);
    const warnings = AnyWarningsSchema.safeParse(body.warnings ?? []);
    return { ok: true, item: parsed.value as ItemOf<E>, warnings: warnings.success ? warnings.data : [] };
  }

  const { svcKey: _omitted, ...publicConfig } = config;
  return {
    config: publicConfig,
    stats,
    list,
    listProducts: (o) => list('products', o),
    listOrders: (o) => list('orders', o),
    get,
    getProduct: (id, o) => get('products', id, o),
    getOrder: (id, o) => get('orders', id, o),
    write,
    writeOrder: (order, o) => write('orders', order, o),
    writeProduct: (product, o) => write('products', product, o),
    walk: (entity, walkOptions) =>
      new CatalogWalk(
        entity,
        (query, signal) => list(entity, { sortorder: walkOptions.sortorder ?? 'asc', jobid: walkOptions.jobid, ...query, signal }),
        walkOptions,
      ),
    probe: (r) => send(config, { ...r, accept: () => true, retryLimit: 0 }, stats),
    urlOf,
  };
}
