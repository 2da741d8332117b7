/**
 * The Express binding: `createStoreRouter` (the six operations at their default routes, relative
 * to where it is mounted) and one handler per operation for owners whose connection is configured
 * with other URLs. Plain `(req, res, next)` functions with no runtime dependency on Express (only
 * its types), so the same code mounts in Express 4 and 5.
 *
 * It is the `node:http` binding plus what Express knows: the caller's address is `req.ip` (so the
 * app's `trust proxy` setting applies to the limit on failed key checks), by-ID handlers read the
 * id from the route's `:id` parameter, and a body the app already parsed (`express.json()`) is
 * used as is. Rate limits are the core's (on by default), counted in express-rate-limit stores.
 */
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { decodeSegment } from '../routes';
import type { StoreRouterOptions } from '../router-options';
import { createStoreCore, OPERATIONS, type OperationName, type StoreCore } from '../store-core';
import { createStoreListener } from './node-http';
import { pathOf, sendRouteError, serveNode } from './node-io';

export type StoreHandlers = Readonly<Record<OperationName, RequestHandler>>;

/** Express's idea of the caller's address (honours `trust proxy`), else the socket's. */
function expressAddress(req: IncomingMessage): string | undefined {
  return (req as Partial<Request>).ip ?? req.socket?.remoteAddress;
}

/**
 * The store router: the six webhook operations at their default routes, relative to where it is
 * mounted (`GET /products`, `GET /products/:id`, `POST /products`, and the same for `/orders`).
 * Any other path or method under it is a 404 (or 405) JSON `{error}`, so mount it at its own path
 * prefix. Works in Express 4 and 5.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createStoreRouter } from 'storebridge/server';
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 *
 * const app = express();
 * app.use('/sync', createStoreRouter({ adapter: createMemoryAdapter(), svcKeys: [process.env.SVC_KEY!] }));
 * app.listen(8080);
 * ```
 */
export function createStoreRouter(options: StoreRouterOptions | StoreCore): RequestHandler {
  const listener = createStoreListener(options, { clientAddress: expressAddress });
  return ((req: Request, res: Response) => listener(req, res)) as RequestHandler;
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
  const core = createStoreCore(options);
  const make = (operation: OperationName): RequestHandler => {
    const byId = OPERATIONS[operation].kind === 'get';
    return ((req: Request, res: Response) => {
      let id: string | undefined;
      if (byId) {
        const param = (req.params as Record<string, string> | undefined)?.id;
        try {
          id = typeof param === 'string' ? param : lastSegment(req.url ?? '');
        } catch (err) {
          return sendRouteError(core, req, res, err);
        }
      }
      void serveNode(core, operation, req, res, id, () => expressAddress(req));
    }) as RequestHandler;
  };
  return Object.fromEntries(Object.keys(OPERATIONS).map((op) => [op, make(op as OperationName)])) as unknown as StoreHandlers;
}

/** The last path segment, decoded (a by-ID handler mounted without `:id`). */
function lastSegment(url: string): string {
  const path = pathOf(url).replace(/\/+$/, '');
  return decodeSegment(path.slice(path.lastIndexOf('/') + 1));
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
