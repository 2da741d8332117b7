/**
 * Routing from the contract's table: each `WEBHOOK_ROUTES` path (`/products`, `/products/:id`)
 * compiled once into a matcher, shared by every binding. A path the table does not know is a 404,
 * a known path with another method a 405 (with the methods it serves), both JSON.
 */
import { WEBHOOK_ROUTES, type WebhookOperation } from '../contract/webhook-routes';
import { InvalidQueryError, MethodNotAllowedError, NotFoundError, type HttpError } from '../http/http-errors';

export type RouteMatch =
  | { readonly operation: WebhookOperation; /** The decoded `:id` of by-ID routes. */ readonly id?: string }
  | { readonly error: HttpError };

interface Compiled {
  readonly operation: WebhookOperation;
  readonly method: string;
  readonly pattern: RegExp;
  readonly hasId: boolean;
}

/** `/products/:id` → `^/products/([^/]+)/?$` (a trailing slash is allowed). */
function compile(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '([^/]+)' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

const COMPILED: readonly Compiled[] = Object.values(WEBHOOK_ROUTES).map((r) => ({ operation: r.operation, method: r.method, pattern: compile(r.path), hasId: r.path.includes('/:') }));

const ROUTES_TEXT = Object.values(WEBHOOK_ROUTES)
  .map((o) => `${o.method} ${o.path}`)
  .join(', ');

/** Decodes one path segment; malformed percent-encoding is a 400. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InvalidQueryError('the id in the path is not valid percent-encoding');
  }
}

/**
 * The operation for a method and a path (relative to where the routes are served, without the
 * query). `HEAD` is served as `GET`.
 */
export function matchRoute(method: string, path: string): RouteMatch {
  const m = method === 'HEAD' ? 'GET' : method;
  let allow: string[] | undefined;
  for (const route of COMPILED) {
    const found = route.pattern.exec(path);
    if (!found) continue;
    if (route.method !== m) {
      (allow ??= []).push(route.method);
      continue;
    }
    if (!route.hasId) return { operation: route.operation };
    try {
      return { operation: route.operation, id: decodeSegment(found[1]) };
    } catch (err) {
      return { error: err as HttpError };
    }
  }
  const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
  if (allow) {
    const methods = [...new Set(allow.flatMap((a) => (a === 'GET' ? ['GET', 'HEAD'] : [a])))];
    return { error: new MethodNotAllowedError(`${method} is not served at ${shown}; use ${methods.join(' or ')}`, methods) };
  }
  return { error: new NotFoundError(`no route ${method} ${shown} here; this store serves ${ROUTES_TEXT}`) };
}
