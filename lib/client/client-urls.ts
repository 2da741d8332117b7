/**
 * The caller's URLs, derived from the contract's tables: default routes from `WEBHOOK_ROUTES`,
 * parameter names from `LIST_QUERY` / `WRITE_QUERY`, merged into a configured URL's own query with
 * `withQuery`. Nothing here restates a route or a parameter.
 */
import { ENTITIES, entityOf } from '../contract/entities';
import { withQuery, type LIST_QUERY, type WRITE_QUERY } from '../contract/query';
import { WEBHOOK_ROUTES, type WebhookOperation } from '../contract/webhook-routes';
import { hasUnpairedSurrogate } from '../contract/webhook';
import { InvalidOptionError } from '../errors';

/** Values of the list parameters (`sortorder`, `jobid`, `offset`, `next`, `limit`, `id`); `undefined` is left out. */
export type ListQuery = { readonly [K in keyof typeof LIST_QUERY]?: string | number };
/** Values of the write parameters (`jobid`, `id`). */
export type WriteQuery = { readonly [K in keyof typeof WRITE_QUERY]?: string | number };
/** Any query the caller sends: a list's or a write's parameters. */
export type OperationQuery = ListQuery | WriteQuery;

/** The list parameter that asks for one item on the list URL (the deployed by-ID read). */
export const BY_ID_PARAMETER = 'id' satisfies keyof typeof LIST_QUERY;
/** Where a by-ID URL template puts the id (`https://shop.example/items/{id}`). */
export const ID_PLACEHOLDER = '{id}';

/** `/products/:id` → `/products/{id}`: a route of the table as a URL template. */
const templateOf = (route: string) => route.replace(/:([A-Za-z]+)/g, '{$1}');

/**
 * The URL of every operation. An entity whose list URL is configured (`urls.listProducts`: a
 * deployed connection's `{{URI_PRODUCTS}}`) has its writes and by-ID reads (`?id=`) on that URL; an
 * entity without one uses the base URL and the routes of `WEBHOOK_ROUTES` (`/products/{id}`). An
 * entity with neither is not covered by the connection (a products-only store): its operations
 * are left out. Each operation URL given explicitly wins. `check(name, url)` validates and returns
 * each URL used.
 */
export function operationUrls(
  baseUrl: string | undefined,
  given: Partial<Record<WebhookOperation, string>>,
  check: (name: string, url: string) => string,
): Partial<Record<WebhookOperation, string>> {
  const base = baseUrl?.replace(/\/+$/, '');
  const out: Partial<Record<WebhookOperation, string>> = {};
  for (const entity of ENTITIES) {
    const { list, get, write } = entityOf(entity).operations;
    const listUrl = given[list] === undefined ? undefined : check(`urls.${list}`, given[list]);
    if (listUrl === undefined && base === undefined) continue;
    const routeUrl = (op: WebhookOperation) => `${base}${templateOf(WEBHOOK_ROUTES[op].path)}`;
    out[list] = listUrl ?? routeUrl(list);
    out[get] = given[get] === undefined ? (listUrl ?? routeUrl(get)) : check(`urls.${get}`, given[get]);
    out[write] = given[write] === undefined ? (listUrl ?? routeUrl(write)) : check(`urls.${write}`, given[write]);
  }
  if (Object.keys(out).length === 0) throw new InvalidOptionError('urls.listProducts', 'is required without baseUrl (give baseUrl, or the list URL of each entity the connection covers)');
  return out;
}

/**
 * A request URL: `template` with the query values merged into its own query (same-named
 * parameters replaced, its others kept). With an `id`, a template holding `{id}` gets the encoded
 * id there; any other template gets it as the `id` parameter.
 *
 * @example
 * ```ts
 * requestUrl('https://shop.example/c2s.php?entity=products', { sortorder: 'asc', offset: 50 });
 * // 'https://shop.example/c2s.php?entity=products&sortorder=asc&offset=50'
 * requestUrl('https://shop.example/c2s.php?entity=orders', {}, '1001');
 * // 'https://shop.example/c2s.php?entity=orders&id=1001'
 * ```
 * An id (or any value) with an unpaired surrogate is refused with `InvalidOptionError` before any
 * request: it has no UTF-8 form, so `encodeURIComponent` throws a bare `URIError` and
 * `URLSearchParams` would silently send U+FFFD, another id.
 */
export function requestUrl(template: string, query: OperationQuery = {}, id?: string): string {
  for (const [name, value] of Object.entries({ ...query, ...(id === undefined ? {} : { [BY_ID_PARAMETER]: id }) })) {
    if (typeof value === 'string' && hasUnpairedSurrogate(value)) throw unsendable(name, value);
  }
  if (id === undefined) return withQuery(template, query);
  if (template.includes(ID_PLACEHOLDER)) return withQuery(template.replace(ID_PLACEHOLDER, encodeURIComponent(id)), query);
  return withQuery(template, { ...query, [BY_ID_PARAMETER]: id });
}

/** Ill-formed UTF-16 cannot be percent-encoded: the store would be asked for another id, or `encodeURIComponent` throws. */
function unsendable(name: string, value: string): InvalidOptionError {
  const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  return new InvalidOptionError(name, `${shown} holds an unpaired surrogate (ill-formed UTF-16), which no URL can carry; a store refuses such an ${name} too`);
}
