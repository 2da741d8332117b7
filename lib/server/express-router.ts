/**
 * The Express bindings of the store core: `createStoreRouter` (the six operations at their default
 * routes) and one handler per operation for owners whose connection is configured with other URLs.
 *
 * The bindings are plain `(req, res, next)` middleware with no runtime dependency on Express, so
 * the same code mounts in Express 4 and 5. They add what only a host can: per-key rate limiting
 * and a per-address limit on failed key checks (express-rate-limit), reading the JSON body of
 * writes, and writing the response. Everything else is `StoreCore`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import { InvalidQueryError, NotFoundError, RateLimitedError } from './http-errors';
import { readJsonBody } from '../http/request-body';
import type { RequestObservation } from './request-observation';
import type { StoreRouterOptions } from './router-options';
import { createStoreCore, OPERATIONS, StoreCore, type CoreHttpResponse, type OperationName } from './store-core';

type Req = Request & { storebridgeKeyHash?: string; storebridgeObservation?: RequestObservation };
type Middleware = (req: Req, res: Response, next: NextFunction) => unknown;

export type StoreHandlers = Readonly<Record<OperationName, RequestHandler>>;

function send(req: IncomingMessage, res: ServerResponse, out: CoreHttpResponse, close = false): void {
  if (res.headersSent) return;
  res.statusCode = out.status;
  for (const [name, value] of Object.entries(out.headers ?? {})) res.setHeader(name, value);
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('x-content-type-options', 'nosniff');
  // Encoded once: Buffer.byteLength and then res.end(string) would each walk the (up to 10 MB) text.
  const body = Buffer.from(out.body, 'utf8');
  res.setHeader('content-length', body.length);
  if (close) res.setHeader('connection', 'close');
  res.end(req.method === 'HEAD' ? undefined : body);
}

function rawQueryOf(req: Request): string {
  const url = req.originalUrl ?? req.url ?? '';
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}

/** Runs middleware in order; `done` gets the first error, or nothing when the last one calls next. */
function runChain(chain: readonly Middleware[], req: Req, res: Response, done: (err?: unknown) => void): void {
  let i = 0;
  const next = (err?: unknown) => {
    if (err !== undefined && err !== null && err !== 'route') return done(err);
    const mw = chain[i++];
    if (!mw) return done();
    try {
      const r = mw(req, res, next as NextFunction);
      if (r && typeof (r as Promise<unknown>).catch === 'function') (r as Promise<unknown>).catch(done);
    } catch (e) {
      done(e);
    }
  };
  next();
}

function limiters(core: StoreCore): { beforeAuth: Middleware[]; afterAuth: Middleware[] } {
  const rl = core.config.rateLimit;
  if (!rl) return { beforeAuth: [], afterAuth: [] };
  const logger = core.config.logger;
  const common = {
    standardHeaders: 'draft-7' as const,
    legacyHeaders: false,
    ...(logger ? { logger: { warn: (...a: unknown[]) => logger.warn({ detail: a.map(String) }, 'rate limiter'), error: (...a: unknown[]) => logger.error({ detail: a.map(String) }, 'rate limiter') } } : {}),
  };
  const tooMany = (what: string) => (req: Request, res: Response) => {
    const retry = res.getHeader('retry-after');
    send(req, res, core.failure(new RateLimitedError(`too many ${what}; retry after ${retry ?? 'a while'} seconds`), 'rateLimit'));
  };
  const afterAuth: Middleware[] = [
    rateLimit({
      ...common,
      limit: rl.limit,
      windowMs: rl.windowMs,
      ...(rl.store ? { store: rl.store } : {}),
      // Counted per key (its SHA-256), not per address: the sync service may call from many.
      keyGenerator: (request: Req) => `key:${request.storebridgeKeyHash ?? ''}`,
      handler: tooMany('requests with this SvcKey'),
    }) as unknown as Middleware,
  ];
  const beforeAuth: Middleware[] = rl.failedAuth
    ? [
        rateLimit({
          ...common,
          limit: rl.failedAuth.limit,
          windowMs: rl.failedAuth.windowMs,
          ...(rl.failedAuth.store ? { store: rl.failedAuth.store } : {}),
          // Only refused keys count; the default key is the client address (IPv6 by /56 subnet).
          skipSuccessfulRequests: true,
          requestWasSuccessful: (_req: Request, res: Response) => res.statusCode !== 401,
          handler: tooMany('requests with an invalid SvcKey from this address'),
        }) as unknown as Middleware,
      ]
    : [];
  return { beforeAuth, afterAuth };
}

/**
 * One handler per operation, sharing one parsed configuration (and one rate limiter). By-ID handlers
 * read the id from the route's `:id` parameter.
 *
 * @example Mounting at the URLs a connection is configured with:
 * ```ts
 * const store = createStoreHandlers({ adapter, svcKeys: [process.env.SVC_KEY!] });
 * app.get('/api/catalog', store.listProducts);
 * app.get('/api/catalog/:id', store.getProduct);
 * app.post('/api/order-hook', store.writeOrder);
 * ```
 */
export function createStoreHandlers(options: StoreRouterOptions | StoreCore): StoreHandlers {
  const core = options instanceof StoreCore ? options : createStoreCore(options);
  const { beforeAuth, afterAuth } = limiters(core);

  const authenticate: Middleware = async (req, res, next) => {
    const auth = await core.authenticate(req.headers, req.storebridgeObservation);
    if (!auth.ok) return send(req, res, auth.response);
    req.storebridgeKeyHash = auth.keyHash;
    next();
  };

  const make = (operation: OperationName): RequestHandler => {
    const op = OPERATIONS[operation];
    const perform: Middleware = async (req, res) => {
      const controller = new AbortController();
      const onClose = () => {
        if (!res.writableEnded) controller.abort(new Error('the caller closed the connection'));
      };
      res.on('close', onClose);
      try {
        let body: unknown;
        if (op.kind === 'write') {
          try {
            body = await readJsonBody(req, core.config.maxBodyBytes);
          } catch (err) {
            // An unread or half-read body cannot be skipped safely: answer, then close.
            return send(req, res, core.failure(err, operation), true);
          }
        }
        const id = op.kind === 'get' ? idOf(req) : undefined;
        const out = await core.run(operation, { headers: req.headers, rawQuery: rawQueryOf(req), id, body, signal: controller.signal, observation: req.storebridgeObservation });
        send(req, res, out);
      } finally {
        res.off('close', onClose);
      }
    };
    const chain = [...beforeAuth, authenticate, ...afterAuth, perform];
    const observed = core.config.logger !== undefined || core.config.metrics !== undefined;
    return ((req: Req, res: Response, next: NextFunction) => {
      if (observed) observeResponse(req, res, core.observe(operation, op.path, req.method, rawQueryOf(req)));
      runChain(chain, req, res, (err) => {
        if (err === undefined) return next();
        send(req, res, core.failure(err, operation, req.storebridgeObservation?.logger));
      });
    }) as RequestHandler;
  };

  return {
    listProducts: make('listProducts'),
    getProduct: make('getProduct'),
    writeProduct: make('writeProduct'),
    listOrders: make('listOrders'),
    getOrder: make('getOrder'),
    writeOrder: make('writeOrder'),
  };
}

/**
 * Ends the observation when the response is done. A caller that leaves before the response ends is
 * recorded as 499 (nginx's "client closed request"), since no status reached it.
 */
function observeResponse(req: Req, res: Response, observation: RequestObservation): void {
  req.storebridgeObservation = observation;
  const done = () => observation.end(res.writableFinished ? res.statusCode : 499);
  res.once('finish', done);
  res.once('close', done);
}

function idOf(req: Request): string {
  const fromRoute = (req.params as Record<string, string> | undefined)?.id;
  if (typeof fromRoute === 'string') return fromRoute;
  const path = (req.url ?? '').split('?')[0].replace(/\/+$/, '');
  return decodeSegment(path.slice(path.lastIndexOf('/') + 1));
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InvalidQueryError('the id in the path is not valid percent-encoding');
  }
}

const ROUTES_TEXT = Object.values(OPERATIONS)
  .map((o) => `${o.method} ${o.path}`)
  .join(', ');

/**
 * The store router: the six webhook operations at their default routes, relative to where it is
 * mounted (`GET /products`, `GET /products/:id`, `POST /products?jobid=&id=`, and the same for
 * `/orders`). Any other path or method under it is a 404 JSON `{error}`, so mount it at its own
 * path prefix. Works in Express 4 and 5.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createStoreRouter } from 'storebridge';
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 *
 * const app = express();
 * app.use('/sync', createStoreRouter({ adapter: createMemoryAdapter(), svcKeys: [process.env.SVC_KEY!] }));
 * app.listen(8080);
 * ```
 */
export function createStoreRouter(options: StoreRouterOptions): RequestHandler {
  const core = createStoreCore(options);
  const handlers = createStoreHandlers(core);
  return ((req: Req, res: Response, next: NextFunction) => {
    let operation: OperationName | undefined;
    let params: Record<string, string> | undefined;
    try {
      const path = (req.url ?? '/').split('?')[0];
      const m = /^\/(products|orders)(?:\/([^/]+))?\/?$/.exec(path);
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      if (m) {
        const entity = m[1] as 'products' | 'orders';
        if (m[2] !== undefined && method === 'GET') {
          operation = entity === 'products' ? 'getProduct' : 'getOrder';
          params = { id: decodeSegment(m[2]) };
        } else if (m[2] === undefined && method === 'GET') operation = entity === 'products' ? 'listProducts' : 'listOrders';
        else if (m[2] === undefined && method === 'POST') operation = entity === 'products' ? 'writeProduct' : 'writeOrder';
      }
      if (!operation) {
        throw new NotFoundError(`no route ${req.method} ${path.length > 100 ? path.slice(0, 100) + '…' : path} here; this store serves ${ROUTES_TEXT}`);
      }
    } catch (err) {
      const observation = core.config.logger !== undefined || core.config.metrics !== undefined ? core.observe('none', 'unmatched', req.method, rawQueryOf(req)) : undefined;
      if (observation) observeResponse(req, res, observation);
      return send(req, res, core.failure(err, 'route', observation?.logger));
    }
    if (params) {
      // Express 4 and 5 both replace req.params per matched layer; restore it for the owner's next().
      const previous = req.params;
      req.params = params as Req['params'];
      return handlers[operation](req, res, (err?: unknown) => {
        req.params = previous;
        next(err);
      });
    }
    return handlers[operation](req, res, next);
  }) as RequestHandler;
}

/** The list-products webhook alone (its own configuration and rate limiter). */
export const listProductsHandler = (options: StoreRouterOptions): RequestHandler => createStoreHandlers(options).listProducts;
/** The list-orders webhook alone. */
export const listOrdersHandler = (options: StoreRouterOptions): RequestHandler => createStoreHandlers(options).listOrders;
/** The product-by-ID webhook alone; mount it on a route with an `:id` parameter. */
export const productByIdHandler = (options: StoreRouterOptions): RequestHandler => createStoreHandlers(options).getProduct;
/** The order-by-ID webhook alone; mount it on a route with an `:id` parameter. */
export const orderByIdHandler = (options: StoreRouterOptions): RequestHandler => createStoreHandlers(options).getOrder;
/** The add/update-product webhook alone. */
export const writeProductHandler = (options: StoreRouterOptions): RequestHandler => createStoreHandlers(options).writeProduct;
/** The add/update-order webhook alone. */
export const writeOrderHandler = (options: StoreRouterOptions): RequestHandler => createStoreHandlers(options).writeOrder;
