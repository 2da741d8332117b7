/**
 * A types check of the public API, written as a consumer writes it: imports by package name
 * (`storebridge`, `storebridge/…`), so it is checked against the shipped `.d.ts` — in the project
 * (self-reference, after the build) and, by test/packaging/packaging.test.ts, inside throwaway
 * consumers under node16, nodenext and bundler resolution. Never run: it only has to typecheck.
 * Each `@ts-expect-error` line is a misuse the types must refuse.
 */
import {
  InvalidOptionError,
  StorebridgeError,
  StorageError,
  UnstorableValueError,
  type AdapterRegistration,
  type ListOptions,
  type Order,
  type Product,
  type ReverseProduct,
  type SignalOptions,
  type StoreAdapter,
  type StoreRouterOptions,
} from 'storebridge';
import { createMemoryAdapter, type MemoryAdapter } from 'storebridge/adapters/memory';
import { createStoreClient, type ListPage, type StoreClient } from 'storebridge/client';
import { checkEndpoints, runAdapterConformance, type CheckReport } from 'storebridge/conformance';
import { CONVERTERS, OrderSchema, parseWire, ProductSchema } from 'storebridge/contract';
import { BaseEntityStore, BaseStoreAdapter, jsonEqual, KeyedMutex, registerAdapterSpec } from 'storebridge/adapter';
import { createOpenApiDocument, openApiHandler, type OpenApiDocument } from 'storebridge/openapi';
import { demoCatalog } from 'storebridge/demo';
import { createDaemon, createReverseServiceRouter, type ReverseService } from 'storebridge/reverse';
import { createStoreCore, createStoreHandlers, createStoreRouter } from 'storebridge/server';
import { MemoryCheckpointStore, runSync, type SyncReport } from 'storebridge/sync';
import { SqlDriverUnavailableError, type SqlAdapterOptions } from 'storebridge/adapters/sql';
import { createMappedAdapter, MappingMismatchError, type MappedAdapter } from 'storebridge/adapters/mapped';
import type { RequestHandler } from 'express';

// ---- The contract: types derived from the zod schemas -----------------------------------------
const product: Product = { _id: 'p1', sku: 'MUG-1', variations: [{ availabilities: [{ tag: 'default', quantity: 3 }], prices: [{ tag: 'default', currency: 'EUR', number: 9.5 }] }] };
// @ts-expect-error the webhook form carries quantity as a number
const badProduct: Product = { _id: 'p2', variations: [{ availabilities: [{ tag: 'default', quantity: '3' }] }] };
const reverseForm: ReverseProduct = CONVERTERS.products.toReverse(product);
const stock: string | undefined = reverseForm.variations?.[0].availabilities?.[0].quantity;
const parsed = parseWire(OrderSchema, JSON.parse('{"_id":"o1"}'));
if (parsed.ok) {
  const order: Order = parsed.value;
  void order;
} else {
  const message: string = parsed.error;
  void message;
}
const fromZod: Product = ProductSchema.parse(product);

// ---- A custom adapter on the base classes -----------------------------------------------------
class ArrayStore<T extends { _id: string; last_updated?: number }> extends BaseEntityStore<T> {
  private readonly items = new Map<string, T>();
  async list(options: ListOptions): Promise<T[]> {
    return [...this.items.values()].slice(options.offset ?? 0, (options.offset ?? 0) + options.limit);
  }
  async count(_options: SignalOptions): Promise<number> {
    return this.items.size;
  }
  async get(id: string): Promise<T | undefined> {
    return this.items.get(id);
  }
  protected async put(item: T): Promise<void> {
    this.items.set(item._id, item);
  }
}
class ArrayAdapter extends BaseStoreAdapter {
  readonly products = new ArrayStore<Product>();
  readonly orders = new ArrayStore<Order>();
  override async checkOrder(order: Order): Promise<string[]> {
    return order.buyer?.id ? [] : ['unknown business partner'];
  }
}
const custom: StoreAdapter = new ArrayAdapter();

// ---- The CLI's adapter registry (what a storebridge-adapter-NAME package exports) ------------------
export const storebridgeAdapter: AdapterRegistration = { prefix: ['array'], describe: 'array', open: async () => new ArrayAdapter() };
registerAdapterSpec(storebridgeAdapter);
// @ts-expect-error open takes the spec string
registerAdapterSpec({ prefix: 'array2', describe: 'array2', open: async (n: number) => new ArrayAdapter() });

// ---- The store router and its handlers ----------------------------------------------------------
const memory: MemoryAdapter = createMemoryAdapter(demoCatalog(10));
const options: StoreRouterOptions = { adapter: memory, svcKeys: ['k1', { key: 'k2', id: 'next', expiresAt: Date.now() + 86_400_000 }], pageSize: 50, rateLimit: { limit: 600 } };
const router: RequestHandler = createStoreRouter(options);
const handlers = createStoreHandlers({ adapter: custom, svcKeys: ['k1'] });
const listProducts: RequestHandler = handlers.listProducts;
const core = createStoreCore({ adapter: memory, svcKeys: ['k1'] });
// @ts-expect-error an adapter is required
createStoreRouter({ svcKeys: ['k1'] });
// @ts-expect-error svcKeys are strings or {key, id?, expiresAt?}
createStoreRouter({ adapter: memory, svcKeys: [42] });

// ---- Adapter authors' helpers (storebridge/adapter) --------------------------------------------
const same: boolean = jsonEqual({ a: 1 }, { a: 1 });
const lock: KeyedMutex = new KeyedMutex();

// ---- OpenAPI ------------------------------------------------------------------------------------
const doc: OpenApiDocument = createOpenApiDocument({ include: ['webhooks'], serverUrl: 'https://shop.example.com/sync', paths: { getProduct: '/catalog/{id}' } });
const serveDoc: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void = openApiHandler(doc);
// @ts-expect-error only webhooks and reverse exist
createOpenApiDocument({ include: ['graphql'] });

// ---- The caller, the checker, the conformance suite ---------------------------------------------
const client: StoreClient = createStoreClient({ baseUrl: 'https://shop.example.com/sync', svcKey: 'k1', retry: 3 });
const page: Promise<ListPage<Product>> = client.listProducts({ sortorder: 'asc', jobid: 1, limit: 100 });
async function walkAll(): Promise<number> {
  let n = 0;
  for await (const order of client.walk('orders', { jobid: 7 })) n += order._id.length > 0 ? 1 : 0;
  return n;
}
const report: Promise<CheckReport> = checkEndpoints({ baseUrl: 'https://shop.example.com/sync', svcKey: 'k1' });
const suite: (options: { name: string; create: () => Promise<ArrayAdapter> }) => void = runAdapterConformance as never;

// ---- The sync engine, the SQL adapter's options -------------------------------------------------
const synced: Promise<SyncReport> = runSync({ connectionId: 'shop-1', client, sink: memory, checkpoints: new MemoryCheckpointStore() });
const sqlOptions: SqlAdapterOptions = { spec: 'sqlite::memory:' } as SqlAdapterOptions;
const mappedAdapter: Promise<MappedAdapter> = createMappedAdapter({ connection: 'sqlite:./shop.db', map: './storebridge-map.json', countCacheMs: 0 });
const mappedRouter = mappedAdapter.then((adapter) => createStoreRouter({ adapter, svcKeys: ['k1'] }));
// @ts-expect-error the mapping is a file path or the parsed file
void createMappedAdapter({ connection: 'sqlite:./shop.db', map: 42 });

// ---- The reverse connection -----------------------------------------------------------------------
const reverseRouter = createReverseServiceRouter({ adapter: memory, connections: [{ key: 'conn-key', name: 'shop' }] });
const service: ReverseService = reverseRouter.service;
void service.enqueue('shop', { kind: 'pull', entity: 'products' });
void service.enqueue('shop', { kind: 'pull' }); // products, then orders
// @ts-expect-error a pull's entity is products or orders
void service.enqueue('shop', { kind: 'pull', entity: 'customers' });
const daemon = createDaemon({ serviceUrl: 'https://sync.example.com', connectionKey: 'conn-key', adapter: custom });

// ---- Errors ---------------------------------------------------------------------------------------
function describe(err: unknown): string {
  if (err instanceof InvalidOptionError) return `${err.code}: ${err.option}`;
  if (err instanceof UnstorableValueError) return `${err.code}: ${err.field}`;
  if (err instanceof StorageError) return `${err.code}: ${err.failure} (${err.summary})`;
  if (err instanceof SqlDriverUnavailableError) return `${err.code}: ${err.driver}`;
  if (err instanceof MappingMismatchError) return `${err.code}: ${err.table}.${err.column ?? ''}`;
  if (err instanceof StorebridgeError) return err.code;
  return 'unknown';
}

export const used = [synced, sqlOptions, mappedRouter, badProduct, stock, fromZod, router, listProducts, core, serveDoc, page, walkAll, report, suite, daemon, describe];
