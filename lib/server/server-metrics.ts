/**
 * The store router's Prometheus metrics (recorded only when the owner passes `metrics`): requests
 * by operation, route and status, request duration, list page items and bytes, adapter latency.
 * Names and labels are listed in `docs/observability.md`; label values come from fixed sets
 * (operations, routes, methods, statuses), never from request data, so cardinality stays bounded.
 */
import type { ListedItem } from '../adapter-guard';
import type { GuardedAdapter, GuardedEntityStore } from '../adapter-guard';
import type { Entity } from '../contract/entities';
import { BYTE_BUCKETS, createMetrics, ITEM_COUNT_BUCKETS, LATENCY_BUCKETS_SECONDS, type Counter, type Histogram, type Metrics, type Registry } from '../metrics';

/** What the core records into. */
export interface StoreMetrics {
  readonly registry: Registry;
  request(operation: string, route: string, method: string, status: number, seconds: number): void;
  page(entity: Entity, items: number, bytes: number): void;
  /** Wraps the adapter so each call is timed (`outcome` ok or error). */
  timeAdapter(adapter: GuardedAdapter): GuardedAdapter;
}

/** Accepts a prom-client `Registry` or the result of `createMetrics()` (whose prefix is kept). */
export function createStoreMetrics(target: Registry | Metrics): StoreMetrics {
  const metrics: Metrics = isMetrics(target) ? target : createMetrics({ registry: target });
  const requests: Counter<'operation' | 'route' | 'method' | 'status'> = metrics.counter({
    name: 'store_requests_total',
    help: 'Store webhook requests answered, by operation, route, method and HTTP status',
    labelNames: ['operation', 'route', 'method', 'status'],
  });
  const duration: Histogram<'operation'> = metrics.histogram({
    name: 'store_request_duration_seconds',
    help: 'Time from receiving a store webhook request to the end of its response',
    labelNames: ['operation'],
    buckets: [...LATENCY_BUCKETS_SECONDS],
  });
  const pageItems: Histogram<'entity'> = metrics.histogram({
    name: 'store_page_items',
    help: 'Items per list page served',
    labelNames: ['entity'],
    buckets: [...ITEM_COUNT_BUCKETS],
  });
  const pageBytes: Histogram<'entity'> = metrics.histogram({
    name: 'store_page_bytes',
    help: 'Bytes per list page body served',
    labelNames: ['entity'],
    buckets: [...BYTE_BUCKETS],
  });
  const adapterSeconds: Histogram<'entity' | 'method' | 'outcome'> = metrics.histogram({
    name: 'store_adapter_duration_seconds',
    help: 'Latency of adapter calls made by the store router, by entity, method and outcome',
    labelNames: ['entity', 'method', 'outcome'],
    buckets: [...LATENCY_BUCKETS_SECONDS],
  });

  function timed<A extends unknown[], R>(entity: string, method: string, fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return async (...args: A) => {
      const end = adapterSeconds.startTimer({ entity, method });
      try {
        const r = await fn(...args);
        end({ outcome: 'ok' });
        return r;
      } catch (err) {
        end({ outcome: 'error' });
        throw err;
      }
    };
  }

  function timeEntity<E extends Entity>(store: GuardedEntityStore<E>): GuardedEntityStore<E> {
    const e = store.entity;
    return {
      entity: e,
      list: timed(e, 'list', (o) => store.list(o)) as (o: Parameters<GuardedEntityStore<E>['list']>[0]) => Promise<ListedItem<never>[]>,
      listKeys: timed(e, 'listKeys', (o: Parameters<GuardedEntityStore<E>['listKeys']>[0]) => store.listKeys(o)),
      count: timed(e, 'count', (o) => store.count(o)),
      get: timed(e, 'get', (id: string, o) => store.get(id, o)),
      getMany: timed(e, 'getMany', (ids: readonly string[], o) => store.getMany(ids, o)),
      upsert: timed(e, 'upsert', (item, o) => store.upsert(item, o)),
      upsertMany: timed(e, 'upsertMany', (items, o) => store.upsertMany(items, o)),
      check: timed(e, 'check', (item, o) => store.check(item, o)),
    };
  }

  return {
    registry: metrics.registry,
    request(operation, route, method, status, seconds) {
      requests.inc({ operation, route, method, status: String(status) });
      duration.observe({ operation }, seconds);
    },
    page(entity, items, bytes) {
      pageItems.observe({ entity }, items);
      pageBytes.observe({ entity }, bytes);
    },
    timeAdapter(adapter) {
      const products = timeEntity(adapter.products);
      const orders = timeEntity(adapter.orders);
      const timedAdapter: GuardedAdapter = {
        products,
        orders,
        entity: <E extends Entity>(e: E) => ({ products, orders })[e] as unknown as GuardedEntityStore<E>,
        productBySku: timed('products', 'productBySku', (sku: string, o) => adapter.productBySku(sku, o)),
        hasSkuLookup: adapter.hasSkuLookup,
        orderByOrderId: timed('orders', 'orderByOrderId', (orderid: string, o) => adapter.orderByOrderId(orderid, o)),
        idempotency: adapter.idempotency,
        newId: (entity, item, o) => adapter.newId(entity, item, o),
        close: () => adapter.close(),
        inner: adapter.inner,
      };
      // Already guarded: guardAdapter must not wrap it a second time.
      Object.defineProperty(timedAdapter, Symbol.for('storebridge.guardedAdapter'), { value: true });
      return timedAdapter;
    },
  };
}

function isMetrics(x: Registry | Metrics): x is Metrics {
  return typeof (x as Metrics).counter === 'function' && typeof (x as Metrics).histogram === 'function' && 'registry' in x;
}
