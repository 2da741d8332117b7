/**
 * A small, hand-written `node:http` store for tests: honest by default (the key in `SvcKey` or
 * `C2SKey`, parameter checks with `sortorder` defaulting to asc and `jobid` optional, offset or
 * cursor paging sorted by `(last_updated, _id)`, by-ID reads at `/products/{id}` and `?id=`,
 * order/product writes with the failure structure); with `seedOnly` it follows the interface's
 * text alone (`SvcKey` only, `sortorder` and `jobid` required, no `?id=`). Seams to misbehave on purpose:
 * - `intercept(ctx)` runs first on every request and may answer (or hang, or drop) it itself;
 * - `transform(body, ctx)` rewrites a list page before it is sent.
 * It counts requests and tracks its sockets so tests can assert that none leaked.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { compareKeys, keyOf } from '../../lib/adapter';
import type { Order, Product } from '../../lib/contract/webhook';

export interface RequestContext {
  /** 1-based count of requests to this store. */
  readonly n: number;
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  readonly url: URL;
  readonly entity?: 'products' | 'orders';
}

export interface FakeStoreOptions {
  products?: Product[];
  orders?: Order[];
  key?: string;
  pageSize?: number;
  /** Largest `limit` honoured (default `pageSize`: a store that never sends more than its page). */
  maxLimit?: number;
  pagination?: 'offset' | 'cursor';
  /** `stubs`: lists carry only `{_id, last_updated}` (orders also `orderid`), the deployed ids-only mode. */
  listing?: 'full' | 'stubs';
  /** Only what the interface's text says: `SvcKey` only, `sortorder` and `jobid` required, no `?id=` (a seed-conforming store). */
  seedOnly?: boolean;
  /** How `GET /products?id=X` answers: the bare item (default, the deployed form), `{product}`, or a one-item list. */
  byIdForm?: 'bare' | 'envelope' | 'list';
  /** Return true when the request was handled here (answered, left hanging, or destroyed). */
  intercept?: (ctx: RequestContext) => boolean | void;
  transform?: (body: { paging: Record<string, unknown>; [entity: string]: unknown }, ctx: RequestContext) => unknown;
}

export interface FakeStore {
  readonly url: string;
  readonly server: http.Server;
  readonly requests: RequestContext['url'][];
  readonly data: { products: Map<string, Product>; orders: Map<string, Order> };
  /**
   * Sockets that carried a request and are still open after idle keep-alive sockets are closed:
   * 0 unless a request was left hanging (the caller neither finished nor aborted it).
   */
  openSockets(): Promise<number>;
  close(): Promise<void>;
}

export const encodeCursor = (position: number) => Buffer.from(JSON.stringify({ p: position })).toString('base64url');
function decodeCursor(s: string): number | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { p?: unknown };
    return Number.isSafeInteger(v.p) && (v.p as number) >= 0 ? (v.p as number) : undefined;
  } catch {
    return undefined;
  }
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startFakeStore(options: FakeStoreOptions = {}): Promise<FakeStore> {
  const key = options.key ?? 'K';
  const pageSize = options.pageSize ?? 20;
  const data = {
    products: new Map((options.products ?? []).map((p) => [p._id, p])),
    orders: new Map((options.orders ?? []).map((o) => [o._id, o])),
  };
  const requests: URL[] = [];
  const sockets = new Set<Socket>();
  // undici may pre-open a spare connection that never carries a request; only sockets that served
  // a request can leak one.
  const served = new WeakSet<Socket>();
  let n = 0;

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(url);
    served.add(req.socket);
    const routeOf = () => {
      const parts = url.pathname.split('/').filter(Boolean);
      const entity: 'products' | 'orders' | undefined = parts[0] === 'products' || parts[0] === 'orders' ? parts[0] : undefined;
      return { parts, entity };
    };
    const ctx: RequestContext = { n: ++n, req, res, url, entity: routeOf().entity };
    if (options.intercept?.(ctx)) return;
    // An intercept may rewrite ctx.url (e.g. map a store's own paths onto these routes).
    const { parts, entity } = routeOf();
    const keys = [req.headers.svckey, options.seedOnly ? undefined : req.headers.c2skey].filter((k) => k !== undefined);
    if (keys.length === 0 || keys.some((k) => k !== key)) return json(res, 401, { error: 'missing or invalid key' });
    if (!entity || parts.length > 2) return json(res, 404, { error: 'no such route' });
    const store = data[entity] as Map<string, Product | Order>;
    if (req.method === 'GET' && parts.length === 2) {
      const item = store.get(decodeURIComponent(parts[1]));
      return item ? json(res, 200, { [entity === 'products' ? 'product' : 'order']: item }) : json(res, 404, { error: 'unknown id' });
    }
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = url.searchParams.get('id');
        if (!id || !/^\d+$/.test(url.searchParams.get('jobid') ?? '')) return json(res, 400, { error: 'id and jobid are required' });
        let body: Order;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Order;
        } catch {
          return json(res, 400, { error: 'body is not JSON' });
        }
        const reasons: Array<{ msg: string }> = [];
        for (const it of body.orderItems ?? []) {
          if (!it.id) reasons.push({ msg: 'blank SKU' });
          if ((it.quantity ?? 0) <= 0) reasons.push({ msg: 'zero quantity' });
        }
        if (reasons.length) return json(res, 400, { success: false, code: 400, error: 'order rejected', reasons, warnings: [] });
        const stored = { ...body, _id: id, last_updated: Date.now() };
        store.set(id, stored);
        return json(res, 200, { success: true, code: 200, warnings: [], [entity === 'products' ? 'product' : 'order']: stored });
      });
      return;
    }
    const byId = options.seedOnly ? null : url.searchParams.get('id');
    if (byId !== null) {
      const item = store.get(byId);
      if (!item) return json(res, 404, { error: 'unknown id' });
      const form = options.byIdForm ?? 'bare';
      return json(res, 200, form === 'bare' ? item : form === 'list' ? [item] : { [entity === 'products' ? 'product' : 'order']: item });
    }
    const sortorder = url.searchParams.get('sortorder') ?? (options.seedOnly ? null : 'asc');
    if (sortorder !== 'asc' && sortorder !== 'desc') return json(res, 400, { error: 'sortorder must be asc or desc' });
    const jobid = url.searchParams.get('jobid') ?? (options.seedOnly ? null : '0');
    if (!/^\d+$/.test(jobid ?? '')) return json(res, 400, { error: 'jobid must be an integer' });
    const offsetParam = url.searchParams.get('offset');
    const nextParam = url.searchParams.get('next');
    if (offsetParam !== null && !/^\d+$/.test(offsetParam)) return json(res, 400, { error: 'offset must be a non-negative integer' });
    let position = offsetParam === null ? 0 : Number(offsetParam);
    if (nextParam !== null) {
      const p = decodeCursor(nextParam);
      if (p === undefined) return json(res, 400, { error: 'invalid next cursor' });
      position = p;
    }
    const sign = sortorder === 'asc' ? 1 : -1;
    const all = [...store.values()].sort((a, b) => sign * compareKeys(keyOf(a), keyOf(b)));
    const limit = url.searchParams.has('limit') ? Math.min(options.maxLimit ?? pageSize, Number(url.searchParams.get('limit'))) : pageSize;
    const items = all.slice(position, position + limit);
    const end = position + items.length;
    const cursorMode = options.pagination === 'cursor' || nextParam !== null;
    const paging: Record<string, unknown> = { pageSize: items.length, itemsTotal: all.length };
    if (!cursorMode) paging.offset = position;
    if (cursorMode && end < all.length) paging.next = encodeCursor(end);
    const listed = options.listing === 'stubs' ? items.map((x) => ({ _id: x._id, ...('orderid' in x && x.orderid !== undefined ? { orderid: x.orderid } : {}), last_updated: x.last_updated })) : items;
    let body: unknown = { paging, [entity]: listed };
    if (options.transform) body = options.transform(body as { paging: Record<string, unknown> }, ctx);
    json(res, 200, body);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    requests,
    data,
    async openSockets() {
      server.closeIdleConnections();
      await new Promise((r) => setTimeout(r, 50));
      return [...sockets].filter((s) => served.has(s)).length;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
