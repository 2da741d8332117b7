/**
 * A standalone store server: an Express app with the store router at `/`, over an adapter spec,
 * optionally seeded with the demo catalog. What `storebridge serve` and `storebridge demo` run.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StoreAdapter, WriteOptions } from '../adapter';
import type { Order, Product } from '../contract/webhook';
import { guardAdapter } from '../adapter-guard';
import { demoCatalog } from '../demo';
import { createStoreRouter } from './express-router';
import type { Logger, Pagination, RateLimitOptions } from './router-options';

export interface StoreServerOptions {
  readonly adapter: StoreAdapter;
  readonly key: string;
  readonly port: number;
  readonly host?: string;
  /** Seed this many demo products (and about a quarter as many orders) first. */
  readonly demo?: number;
  readonly pagination?: Pagination;
  readonly pageSize?: number;
  readonly rateLimit?: false | RateLimitOptions;
  readonly logger?: Logger;
}

export interface RunningStoreServer {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly seeded: { products: number; orders: number };
  /** Stops accepting requests, ends open connections, closes the adapter. */
  close(): Promise<void>;
}

/** An entity store that can write many items at once (the SQL adapter: one transaction per batch). */
interface BulkWriter<T> {
  upsertMany(items: readonly T[], options: WriteOptions): Promise<unknown>;
}

function bulkWriter<T>(store: unknown): BulkWriter<T> | undefined {
  return typeof (store as Partial<BulkWriter<T>>)?.upsertMany === 'function' ? (store as BulkWriter<T>) : undefined;
}

/**
 * Writes the demo catalog through the adapter, keeping the demo's own `last_updated` values. Uses the
 * store's `upsertMany` when it has one (the demo data is valid by construction), else the guarded
 * `upsert` one item at a time.
 */
export async function seedDemo(adapter: StoreAdapter, count: number): Promise<{ products: number; orders: number }> {
  const guarded = guardAdapter(adapter);
  const { products, orders } = demoCatalog(count);
  const options: WriteOptions = { lastUpdated: 'keep', now: Date.now(), signal: new AbortController().signal };
  const seed = async <T extends Product | Order>(items: T[], raw: unknown, one: (item: T) => Promise<unknown>) => {
    const bulk = bulkWriter<T>(raw);
    if (bulk) await bulk.upsertMany(items, options);
    else for (const item of items) await one(item);
  };
  await seed(products, adapter.products, (p) => guarded.products.upsert(p, options));
  await seed(orders, adapter.orders, (o) => guarded.orders.upsert(o, options));
  return { products: products.length, orders: orders.length };
}

export async function startStoreServer(options: StoreServerOptions): Promise<RunningStoreServer> {
  const seeded = options.demo ? await seedDemo(options.adapter, options.demo) : { products: 0, orders: 0 };
  // Loaded here so that importing the server module never requires Express (a peer dependency).
  const express = require('express') as typeof import('express');
  const app = express();
  app.disable('x-powered-by');
  app.use(
    createStoreRouter({
      adapter: options.adapter,
      svcKeys: [options.key],
      defaultPagination: options.pagination,
      pageSize: options.pageSize,
      rateLimit: options.rateLimit,
      logger: options.logger,
    }),
  );
  const host = options.host ?? '127.0.0.1';
  const server = app.listen(options.port, host);
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([err]) => {
      throw err;
    }),
  ]);
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    server,
    seeded,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await options.adapter.close?.();
    },
  };
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
