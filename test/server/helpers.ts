/** Shared fixtures of the store router tests: loopback servers, a call-counting adapter, demo data. */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { EntityStore, ListOptions, SignalOptions, StoreAdapter, WriteOptions } from '../../lib/adapter';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createStoreRouter, type StoreRouterOptions } from '../../lib/server';

export const KEY = 'test-key-0123456789abcdef';

/** Starts `app` on 127.0.0.1 with a free port. */
export async function listen(app: (req: any, res: any) => void): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  const server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Counts every call that reaches the adapter boundary. */
export interface SpyAdapter extends StoreAdapter {
  readonly calls: string[];
  readonly memory: MemoryAdapter;
}

function spyStore<T extends { _id: string }>(name: string, inner: EntityStore<T>, calls: string[]): EntityStore<T> {
  return {
    list: (o: ListOptions) => (calls.push(`${name}.list`), inner.list(o)),
    count: (o: SignalOptions) => (calls.push(`${name}.count`), inner.count(o)),
    get: (id: string, o: SignalOptions) => (calls.push(`${name}.get`), inner.get(id, o)),
    upsert: (item: T, o: WriteOptions) => (calls.push(`${name}.upsert`), inner.upsert(item, o)),
  };
}

export function spyAdapter(memory: MemoryAdapter = createMemoryAdapter()): SpyAdapter {
  const calls: string[] = [];
  return {
    calls,
    memory,
    products: spyStore('products', memory.products, calls),
    orders: spyStore('orders', memory.orders, calls),
    productBySku: (sku: string) => (calls.push('productBySku'), memory.productBySku(sku)),
  };
}

export function demoAdapter(n: number): MemoryAdapter {
  return createMemoryAdapter(demoCatalog(n));
}

/** An Express 5 app with the router mounted at `mount`, listening on loopback. */
export async function startStore(options: Partial<StoreRouterOptions> & Pick<StoreRouterOptions, 'adapter'>, mount = '/sync') {
  const app = express();
  app.use(mount, createStoreRouter({ svcKeys: [KEY], rateLimit: false, ...options } as StoreRouterOptions));
  const srv = await listen(app);
  return { ...srv, base: `${srv.url}${mount === '/' ? '' : mount}` };
}

/** GET with the test key; resolves status, headers and parsed JSON (throws if the body is not JSON). */
export async function get(url: string, headers: Record<string, string> = { SvcKey: KEY }) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as any };
}

export async function post(url: string, body: unknown, headers: Record<string, string> = { SvcKey: KEY, 'content-type': 'application/json' }) {
  const res = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as any };
}
