/**
 * The `node:http` binding: the six webhook operations as one request listener for
 * `http.createServer` (or `https`, or any connect-style host), routed from the contract's table.
 * No framework: the store core does the work, this module only reads the request and writes the
 * answer. Rate limits are on by default, as in every binding.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createStoreListener } from 'storebridge/server';
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 *
 * createServer(createStoreListener({ adapter: createMemoryAdapter(), svcKeys: [process.env.SVC_KEY!] })).listen(8080);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { defineOptions, opt } from '../../options';
import { NotFoundError } from '../../http/http-errors';
import { matchRoute, type RouteMatch } from '../routes';
import type { StoreRouterOptions } from '../router-options';
import { createStoreCore, type StoreCore } from '../store-core';
import { pathOf, sendRouteError, serveNode } from './node-io';

export interface StoreListenerOptions {
  /**
   * A path prefix the routes live under (`/sync`: `GET /sync/products`, …). Default: none. A
   * request outside it is a 404.
   */
  readonly basePath?: string;
  /**
   * The caller's address, for the limit on failed key checks. Default: the socket's remote
   * address. Behind a proxy you trust, read it from the proxy's header here.
   */
  readonly clientAddress?: (req: IncomingMessage) => string | undefined;
}

export type StoreListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Normalizes a base path: `''`, or `/x` without a trailing slash. */
export function normalizeBasePath(basePath: string | undefined): string {
  if (basePath === undefined || basePath === '' || basePath === '/') return '';
  if (!basePath.startsWith('/')) throw new TypeError(`basePath must start with "/", got ${JSON.stringify(basePath)}`);
  return basePath.replace(/\/+$/, '');
}

/** The path below `base`, or `undefined` when the path is outside it. */
function below(base: string, path: string): string | undefined {
  if (base === '') return path;
  if (!path.startsWith(base)) return undefined;
  const rest = path.slice(base.length);
  return rest === '' || rest.startsWith('/') ? rest || '/' : undefined;
}

/** The route of a request path (without the query) served under `base`; a path outside it is a 404. */
export function matchRouteBelow(base: string, method: string, fullPath: string): RouteMatch {
  const path = below(base, fullPath);
  if (path === undefined) return { error: new NotFoundError(`no route ${method} ${fullPath.slice(0, 100)} here; this store serves under ${base}/`) };
  return matchRoute(method, path);
}

/** A binding's own options (`basePath`, `clientAddress`): the Node listener's and the Fetch handler's. */
export const BINDING_OPTIONS = {
  basePath: z.string({ error: 'must be a path starting with "/"' }).refine((p) => p === '' || p.startsWith('/'), 'must be a path starting with "/"').optional(),
  clientAddress: opt.fn<(request: never) => string | undefined>().optional(),
};
const parseListenerOptions = defineOptions('createStoreListener', BINDING_OPTIONS);

/** A `node:http` request listener serving the six webhook operations. */
export function createStoreListener(options: StoreRouterOptions | StoreCore, listenerOptions: StoreListenerOptions = {}): StoreListener {
  parseListenerOptions(listenerOptions);
  const core = createStoreCore(options);
  const base = normalizeBasePath(listenerOptions.basePath);
  const addressOf = listenerOptions.clientAddress ?? ((req: IncomingMessage) => req.socket?.remoteAddress);
  return (req, res) => {
    const method = req.method ?? 'GET';
    const match = matchRouteBelow(base, method, pathOf(req.url ?? '/'));
    if ('error' in match) return sendRouteError(core, req, res, match.error);
    void serveNode(core, match.operation, req, res, match.id, () => addressOf(req));
  };
}
