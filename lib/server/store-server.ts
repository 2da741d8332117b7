/**
 * A standalone store server: an Express app with the store router at `/`, over an adapter spec,
 * optionally seeded with the demo catalog. What `storebridge serve` and `storebridge demo` run.
 */
import { once, setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StoreAdapter, WriteOptions } from '../adapter';
import { guardAdapter, type GuardedEntityStore } from '../adapter-guard';
import type { Entity, ItemOf } from '../contract/webhook';
import { demoOrder, demoOrderCount, demoProduct } from '../demo';
import { createMetrics, metricsHandler, type Metrics } from '../metrics';
import { createStoreRouter } from './express-router';
import type { JwtKeyOptions } from './jwt-key-verifier';
import type { Logger, Pagination, RateLimitOptions } from './router-options';

export interface StoreServerOptions {
  readonly adapter: StoreAdapter;
  /** The static SvcKey; may be empty when `jwt` is given. */
  readonly key: string;
  /** JWT SvcKeys, beside (or, with an empty `key`, instead of) the static key. */
  readonly jwt?: JwtKeyOptions;
  /** Needed when there is no static key to derive it from. */
  readonly cursorSecret?: string;
  readonly port: number;
  readonly host?: string;
  /** Seed this many demo products (and about a quarter as many orders) first. */
  readonly demo?: number;
  /**
   * Aborts the start: seeding stops between batches and `startStoreServer` rejects with the
   * signal's reason, before listening (a Ctrl-C during a long `--demo` seed).
   */
  readonly signal?: AbortSignal;
  readonly pagination?: Pagination;
  readonly pageSize?: number;
  readonly rateLimit?: false | RateLimitOptions;
  readonly logger?: Logger;
  /** Log one line per request (needs `logger`). */
  readonly logRequests?: boolean;
  /**
   * Record Prometheus metrics and serve them at `GET /metrics` on a separate listener on this port
   * (same host; 0 picks a free one). Default: no metrics.
   */
  readonly metricsPort?: number;
}

export interface RunningStoreServer {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly seeded: { products: number; orders: number };
  /** `http://HOST:PORT/metrics` when `metricsPort` was given. */
  readonly metricsUrl?: string;
  /** Stops accepting requests, ends open connections, closes the adapter. */
  close(): Promise<void>;
}

/** Demo items generated and written per `upsertMany` call while seeding. */
const SEED_BATCH = 2000;

/** Concurrent `get` calls while seeding a store that already holds items. */
const SEED_LOOKUPS = 16;

/**
 * Writes the demo catalog (`demoCatalog(count)`: products first, then orders) through the guarded
 * adapter's `upsertMany` (the adapter's own batch write when it has one, else `upsert` per item),
 * keeping the demo's own `last_updated` values. Returned items are checked by key only: the demo
 * data is valid by construction. Items are generated and written in batches of 2,000, yielding to
 * the event loop between batches, so memory stays flat and a signal handler can run; `signal`
 * stops the seed between batches (rejecting with its reason).
 *
 * Only items the store does not hold yet are written: re-run on a persistent store (`sqlite:FILE`,
 * a database), the seed adds what is missing and never overwrites an item, so an edit made through
 * the write webhooks survives and no `last_updated` goes back in time. (An empty store, the usual
 * case, skips the lookups.)
 */
export async function seedDemo(adapter: StoreAdapter, count: number, signal?: AbortSignal): Promise<{ products: number; orders: number }> {
  const guarded = guardAdapter(adapter, { validateWrites: 'keys' });
  const stop = signal ?? new AbortController().signal;
  const options: WriteOptions = { lastUpdated: 'keep', now: Date.now(), signal: stop };
  const orderCount = demoOrderCount(count);
  const seed = async <E extends Entity>(entity: E, total: number, make: (i: number) => ItemOf<E>) => {
    const store = guarded.entity(entity);
    const empty = total === 0 || (await store.count({ signal: stop })) === 0;
    for (let start = 0; start < total; start += SEED_BATCH) {
      stop.throwIfAborted();
      let items = Array.from({ length: Math.min(SEED_BATCH, total - start) }, (_, k) => make(start + k));
      if (!empty) items = await missingOnly(store, items, stop);
      if (items.length > 0) await store.upsertMany(items, options);
      // Let timers, I/O and signal handlers run: adapters like SQLite's answer synchronously.
      await new Promise((resolve) => setImmediate(resolve));
    }
    stop.throwIfAborted();
  };
  await seed('products', count, (i) => demoProduct(i));
  await seed('orders', orderCount, (i) => demoOrder(i, count));
  return { products: count, orders: orderCount };
}

/** The items whose `_id` the store does not hold. */
async function missingOnly<E extends Entity>(store: GuardedEntityStore<E>, items: ItemOf<E>[], signal: AbortSignal): Promise<ItemOf<E>[]> {
  // The lookups share one signal, each listening to it while it runs: give them their own, with
  // room for that many listeners (Node warns past 10), following the caller's.
  const lookups = new AbortController();
  setMaxListeners(4 * SEED_LOOKUPS, lookups.signal);
  const forward = () => lookups.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  const present = new Array<boolean>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      present[i] = (await store.get(items[i]._id, { signal: lookups.signal })) !== undefined;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(SEED_LOOKUPS, items.length) }, worker));
  } finally {
    signal.removeEventListener('abort', forward);
  }
  return items.filter((_, i) => !present[i]);
}

export async function startStoreServer(options: StoreServerOptions): Promise<RunningStoreServer> {
  options.signal?.throwIfAborted();
  const seeded = options.demo ? await seedDemo(options.adapter, options.demo, options.signal) : { products: 0, orders: 0 };
  // Loaded here so that importing the server module never requires Express (a peer dependency).
  const express = require('express') as typeof import('express');
  const app = express();
  app.disable('x-powered-by');
  const metrics: Metrics | undefined = options.metricsPort !== undefined ? createMetrics() : undefined;
  app.use(
    createStoreRouter({
      adapter: options.adapter,
      ...(options.key !== '' || !options.jwt ? { svcKeys: [options.key] } : {}),
      ...(options.jwt ? { jwt: options.jwt } : {}),
      ...(options.cursorSecret !== undefined ? { cursorSecret: options.cursorSecret } : {}),
      defaultPagination: options.pagination,
      pageSize: options.pageSize,
      rateLimit: options.rateLimit,
      logger: options.logger,
      logRequests: options.logRequests,
      ...(metrics ? { metrics } : {}),
    }),
  );
  const host = options.host ?? '127.0.0.1';
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const server = await listening(app.listen(options.port, host));
  const { port } = server.address() as AddressInfo;
  let metricsServer: Server | undefined;
  if (metrics) {
    const handler = metricsHandler(metrics);
    metricsServer = createServer((req, res) => {
      if ((req.url ?? '').split('?')[0] === '/metrics') return handler(req, res);
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'only GET /metrics is served here' }));
    });
    try {
      await listening(metricsServer.listen(options.metricsPort, host));
    } catch (err) {
      await closeServer(server);
      throw err;
    }
  }
  return {
    url: `http://${shownHost}:${port}`,
    port,
    server,
    seeded,
    ...(metricsServer ? { metricsUrl: `http://${shownHost}:${(metricsServer.address() as AddressInfo).port}/metrics` } : {}),
    close: async () => {
      await Promise.all([closeServer(server), metricsServer && closeServer(metricsServer)]);
      await options.adapter.close?.();
    },
  };
}

async function listening(server: Server): Promise<Server> {
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([err]) => {
      throw err;
    }),
  ]);
  return server;
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A logger writing one JSON line per event to `write` (stderr in the CLI); errors as messages only. */
export function lineLogger(write: (line: string) => void): Logger {
  const log = (level: string) => (obj: object, msg?: string) => {
    const fields: Record<string, unknown> = { level, time: new Date().toISOString(), msg };
    for (const [k, v] of Object.entries(obj)) {
      fields[k] = v instanceof Error ? describeError(v) : v;
    }
    write(JSON.stringify(fields));
  };
  return { info: log('info'), warn: log('warn'), error: log('error') };
}

function describeError(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message}: ${describeError(cause)}` : err.message;
}
