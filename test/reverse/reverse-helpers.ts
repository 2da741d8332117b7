import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createReverseServiceRouter, type ReverseServiceRouter } from '../../lib/reverse';
import type { ReverseBindingOptions, ReverseServiceOptions } from '../../lib/reverse';

export const KEY = 'conn-key-7f3a9c';

export interface RunningService {
  url: string;
  router: ReverseServiceRouter;
  store: MemoryAdapter;
  close(): Promise<void>;
}

/**
 * A real service on 127.0.0.1:0 whose store holds `demoCatalog(products)`. Its pace is off unless
 * `extra` sets one: these tests run the kit's own daemon as fast as loopback goes.
 */
export async function startService(products: number, extra: Partial<ReverseServiceOptions> & ReverseBindingOptions = {}): Promise<RunningService> {
  const store = createMemoryAdapter(demoCatalog(products));
  const router = createReverseServiceRouter({ adapter: store, connections: [{ key: KEY, name: 'shop' }], answerRoot: true, maxCallsPerSecond: 0, ...extra });
  const app = express();
  app.use(router);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    router,
    store,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Every item of a memory store, in `_id` order. */
export async function allItems<E extends 'products' | 'orders'>(adapter: MemoryAdapter, entity: E) {
  const page = await adapter[entity].list({ sortorder: 'asc', limit: 1_000_000, signal: AbortSignal.timeout(5000) });
  return page.map((x) => JSON.parse(x.json) as { _id: string }).sort((a, b) => (a._id < b._id ? -1 : 1));
}
