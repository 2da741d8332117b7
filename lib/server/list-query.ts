/**
 * A list request's query, parsed with the contract's table (`LIST_QUERY`, `parseQuery`): the
 * parameters, their schemas and their messages are declared once, in `lib/contract/query.ts`.
 * The raw query string is parsed here (not by the framework), so Express 4 (`qs`), Express 5
 * (`querystring`), `node:http` and Fetch hosts behave the same: no nested objects, a repeated
 * parameter is an error, every error names the parameter.
 *
 * What this module adds is what one parameter alone cannot say: the defaults (`sortorder` asc,
 * `limit` the router's page size), that `offset` and `next` exclude each other, the cursor's
 * checks, and the `id` and `ids` reads. Every other parameter the table declares is handed to the adapter's
 * `list` as is (`ListQuery.extra`, the table's filters: `listFiltersOf`): adding a list parameter
 * means adding it to the table and to the adapters, and nothing here (see docs/wire-decisions.md).
 */
import type { SortKey } from '../adapter';
import type { SortOrder } from '../contract/messages';
import { LIST_QUERY, listFiltersOf, parseQuery, type ListQueryValues } from '../contract/query';
import { MAX_STUB_PAGE_SIZE } from '../contract/limits';
import { FORBIDDEN_CHARACTERS, hasForbiddenCharacter } from '../contract/webhook';
import type { Entity } from '../contract/entities';
import { InvalidQueryError } from '../http/http-errors';
import type { RouterConfig } from './router-options';

/** A list request for one page. */
export interface ListQuery {
  readonly kind: 'page';
  readonly sortorder: SortOrder;
  /** `undefined`: the caller sent none (an untracked request, allowed). */
  readonly jobid: number | undefined;
  /** `offset`: answer `paging.offset`; `cursor`: answer without it. */
  readonly mode: 'offset' | 'cursor';
  readonly offset: number;
  readonly after: SortKey | undefined;
  readonly limit: number;
  /** The table's other parameters that were given, for the adapter's `list` (ListOptions). */
  readonly extra: Readonly<Record<string, unknown>>;
}

/** A list request with `id`: read that one item (the deployed by-id read). */
export interface ItemQuery {
  readonly kind: 'item';
  readonly id: string;
}

/** A list request with `ids`: read those items (the batched by-ID read, an extension of this kit). */
export interface ItemsQuery {
  readonly kind: 'items';
  /** 1 to `MAX_BY_IDS` distinct valid ids, in the order asked (`ItemIdsParameter`). */
  readonly ids: readonly string[];
}

export function parseListQuery(rawQuery: string, entity: Entity, config: RouterConfig): ListQuery | ItemQuery | ItemsQuery {
  const parsed = parseQuery(LIST_QUERY, rawQuery);
  if (!parsed.ok) throw new InvalidQueryError(parsed.error);
  const v: ListQueryValues = parsed.values;
  if (v.id !== undefined && v.ids !== undefined) throw new InvalidQueryError('give either id (one item) or ids (several), not both');
  // With `id` or `ids`, the paging parameters do not apply; they were still checked one by one above.
  if (v.id !== undefined) return { kind: 'item', id: v.id };
  if (v.ids !== undefined) return { kind: 'items', ids: v.ids };
  if (v.offset !== undefined && v.next !== undefined) {
    throw new InvalidQueryError('give either offset (numeric paging) or next (cursor paging), not both');
  }
  const sortorder = v.sortorder ?? 'asc';
  const after = v.next === undefined ? undefined : config.cursors.decode(v.next, { entity, sortorder });
  return {
    kind: 'page',
    sortorder,
    jobid: v.jobid,
    mode: v.next !== undefined ? 'cursor' : v.offset !== undefined ? 'offset' : config.defaultPagination,
    offset: v.offset ?? 0,
    after,
    limit: Math.min(v.limit ?? config.pageSize, config.listing === 'stubs' ? Math.max(config.maxPageSize, MAX_STUB_PAGE_SIZE) : config.maxPageSize),
    extra: extraParameters(v),
  };
}

/** The list filters given (`listFiltersOf`), for the adapter. */
function extraParameters(values: Record<string, unknown>): Readonly<Record<string, unknown>> {
  const extra = listFiltersOf(values);
  for (const [name, value] of Object.entries(extra)) {
    // The core's promise to every adapter: no control character reaches it (PostgreSQL refuses NUL).
    if (typeof value === 'string' && hasForbiddenCharacter(value)) throw new InvalidQueryError(`${name} must not contain ${FORBIDDEN_CHARACTERS}`);
  }
  return extra;
}
