/** Shared fixtures of the store router tests: loopback servers, a call-counting adapter, demo data. */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { EntityStore, ListOptions, SignalOptions, StoreAdapter, WriteOptions } from '../../lib/adapter';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { Readable } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createStoreFetchHandler, createStoreListener, createStoreRouter, type StoreFetchHandler, type StoreRouterOptions } from '../../lib/server';

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

/** The store bindings, each served on loopback the way an owner would host it. */
export const BINDINGS = ['express5', 'express4', 'node:http', 'fetch'] as const;
export type BindingKind = (typeof BINDINGS)[number];

/**
 * A Fetch handler on a Node server: each request becomes a `Request` (body streamed), the
 * `Response` is written back. What a Fetch host (Bun, Deno, @hono/node-server) does for it.
 */
export function fetchHost(handler: StoreFetchHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
      signal: controller.signal,
      duplex: 'half',
    } as RequestInit);
    handler(request).then(
      async (response) => {
        res.statusCode = response.status;
        response.headers.forEach((value, name) => res.setHeader(name, value));
        res.end(Buffer.from(await response.arrayBuffer()));
      },
      (err) => {
        res.statusCode = 599;
        res.end(String(err));
      },
    );
  };
}

/** A store served by one binding under `/sync`, on loopback. */
export async function startBinding(kind: BindingKind, options: Partial<StoreRouterOptions> & Pick<StoreRouterOptions, 'adapter'>) {
  const full = { svcKeys: [KEY], rateLimit: false, ...options } as StoreRouterOptions;
  let app: (req: any, res: any) => void;
  if (kind === 'express5' || kind === 'express4') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const factory = kind === 'express5' ? express : (require('express4') as typeof express);
    const a = factory();
    a.use('/sync', createStoreRouter(full));
    app = a;
  } else if (kind === 'node:http') {
    app = createStoreListener(full, { basePath: '/sync' });
  } else {
    app = fetchHost(createStoreFetchHandler(full, { basePath: '/sync' }));
  }
  const srv = await listen(app);
  return { ...srv, base: `${srv.url}/sync` };
}
