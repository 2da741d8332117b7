/**
 * The Fetch-API binding: the six webhook operations as one `(Request) => Promise<Response>`
 * function, for hosts built on the Fetch API: Hono, Next.js route handlers, Bun, Deno, Cloudflare
 * Workers-like runtimes, or Node with an adapter. Routed from the contract's table; the store core
 * does the work. Rate limits are on by default, as in every binding.
 *
 * Fetch gives no caller address, so the limit on failed key checks counts every caller in one
 * bucket unless `clientAddress` says who is calling (Bun: `server.requestIP(request)`, Deno:
 * `info.remoteAddr`, Hono: `getConnInfo(c)`). That bucket only ever refuses requests whose key is
 * wrong anyway: a valid key is never refused by it.
 *
 * @example A Next.js route handler at `app/sync/[...path]/route.ts`:
 * ```ts
 * import { createStoreFetchHandler } from 'storebridge/server';
 * const store = createStoreFetchHandler({ adapter, svcKeys: [process.env.SVC_KEY!] }, { basePath: '/sync' });
 * export const GET = store;
 * export const POST = store;
 * ```
 */
import { fetchBodyStream, readJsonBodyOrDrain } from '../../http/request-body';
import type { StoreRouterOptions } from '../router-options';
import { createStoreCore, OPERATIONS, type CoreAnswer, type StoreCore } from '../store-core';
import { defineOptions } from '../../options';
import { BINDING_OPTIONS, matchRouteBelow, normalizeBasePath } from './node-http';
import { writeBodyLimits } from './node-io';

export interface StoreFetchHandlerOptions {
  /** A path prefix the routes live under (`/sync`). Default: none. A request outside it is a 404. */
  readonly basePath?: string;
  /** The caller's address, for the limit on failed key checks (see above). Default: unknown. */
  readonly clientAddress?: (request: Request) => string | undefined;
}

export type StoreFetchHandler = (request: Request) => Promise<Response>;

function toResponse(request: Request, out: CoreAnswer): Response {
  const headers = new Headers(out.headers);
  headers.set('content-type', 'application/json; charset=utf-8');
  headers.set('x-content-type-options', 'nosniff');
  if (out.close) headers.set('connection', 'close');
  return new Response(request.method === 'HEAD' ? null : out.body, { status: out.status, headers });
}

const parseHandlerOptions = defineOptions('createStoreFetchHandler', BINDING_OPTIONS);

/** A Fetch-API handler serving the six webhook operations. */
export function createStoreFetchHandler(options: StoreRouterOptions | StoreCore, handlerOptions: StoreFetchHandlerOptions = {}): StoreFetchHandler {
  parseHandlerOptions(handlerOptions);
  const core = createStoreCore(options);
  const base = normalizeBasePath(handlerOptions.basePath);
  return async (request) => {
    const url = new URL(request.url);
    const method = request.method;
    const rawQuery = url.search.slice(1);
    const match = matchRouteBelow(base, method, url.pathname);
    if ('error' in match) {
      const observation = core.observed ? core.observe('none', 'unmatched', method, rawQuery) : undefined;
      const out = core.failure(match.error, 'route', observation?.logger);
      observation?.end(out.status);
      return toResponse(request, out);
    }
    const operation = match.operation;
    const observation = core.observed ? core.observe(operation, OPERATIONS[operation].path, method, rawQuery) : undefined;
    const out = await core.handle(operation, {
      method,
      headers: request.headers,
      rawQuery,
      id: match.id,
      clientAddress: handlerOptions.clientAddress && (() => handlerOptions.clientAddress!(request)),
      signal: request.signal,
      observation,
      readBody: () => readJsonBodyOrDrain(fetchBodyStream(request), writeBodyLimits(core.config.maxBodyBytes)),
    });
    observation?.end(out.status);
    return toResponse(request, out);
  };
}
