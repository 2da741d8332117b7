/**
 * Strict parsing of a list request's query string. The raw query string is parsed here (not by the
 * framework), so Express 4 (`qs`), Express 5 (`querystring`) and any other host behave the same:
 * no nested objects, a repeated parameter is an error, every error says what is wrong.
 */
import type { SortKey } from '../adapter';
import type { SortOrder } from '../contract/messages';
import type { Entity } from '../contract/webhook';
import { InvalidQueryError } from './http-errors';
import type { RouterConfig } from './router-options';

/** Parameters a list request understands; anything else is ignored (see docs/wire-decisions.md). */
const LIST_PARAMS = ['sortorder', 'jobid', 'offset', 'next', 'limit'] as const;

export interface ListQuery {
  readonly sortorder: SortOrder;
  readonly jobid: number;
  /** `offset`: answer `paging.offset`; `cursor`: answer without it. */
  readonly mode: 'offset' | 'cursor';
  readonly offset: number;
  readonly after: SortKey | undefined;
  readonly limit: number;
}

/** Every parameter of a query string with all its values, in order. */
export function queryParams(rawQuery: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    const values = out.get(name);
    if (values) values.push(value);
    else out.set(name, [value]);
  }
  return out;
}

/** A query as a plain record: one value a string, a repeated one an array (null prototype). */
export function queryRecord(params: Map<string, string[]>): Record<string, string | string[]> {
  const rec: Record<string, string | string[]> = Object.create(null);
  for (const [name, values] of params) rec[name] = values.length === 1 ? values[0] : values;
  return rec;
}

function shorten(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

const INTEGER = /^-?\d{1,16}$/;
const NON_NEGATIVE = /^\d{1,16}$/;

export function parseListQuery(rawQuery: string, entity: Entity, config: RouterConfig): ListQuery {
  const params = queryParams(rawQuery);
  const one = (name: (typeof LIST_PARAMS)[number]): string | undefined => {
    const values = params.get(name);
    if (!values) return undefined;
    if (values.length > 1) throw new InvalidQueryError(`${name} must be given once, got ${values.length} values`);
    return values[0];
  };

  const sortorder = one('sortorder');
  if (sortorder === undefined) throw new InvalidQueryError('sortorder is required: asc or desc');
  if (sortorder !== 'asc' && sortorder !== 'desc') throw new InvalidQueryError(`sortorder must be asc or desc, got ${shorten(sortorder)}`);

  const jobidText = one('jobid');
  if (jobidText === undefined) throw new InvalidQueryError('jobid is required: the integer id of the sync job');
  if (!INTEGER.test(jobidText) || !Number.isSafeInteger(Number(jobidText))) {
    throw new InvalidQueryError(`jobid must be an integer, got ${shorten(jobidText)}`);
  }

  const offsetText = one('offset');
  const next = one('next');
  if (offsetText !== undefined && next !== undefined) {
    throw new InvalidQueryError('give either offset (numeric paging) or next (cursor paging), not both');
  }
  let offset = 0;
  if (offsetText !== undefined) {
    if (!NON_NEGATIVE.test(offsetText) || !Number.isSafeInteger(Number(offsetText))) {
      throw new InvalidQueryError(`offset must be a non-negative integer, got ${shorten(offsetText)}`);
    }
    offset = Number(offsetText);
  }
  let after: SortKey | undefined;
  if (next !== undefined) {
    if (next === '') throw new InvalidQueryError('next must not be empty: send the paging.next value of the previous page');
    after = config.cursors.decode(next, { entity, sortorder });
  }

  let limit = config.pageSize;
  const limitText = one('limit');
  if (limitText !== undefined) {
    if (!NON_NEGATIVE.test(limitText) || Number(limitText) < 1) {
      throw new InvalidQueryError(`limit must be a positive integer (at most ${config.maxPageSize}), got ${shorten(limitText)}`);
    }
    limit = Math.min(Number(limitText), config.maxPageSize);
  }

  const mode = next !== undefined ? 'cursor' : offsetText !== undefined ? 'offset' : config.defaultPagination;
  return { sortorder, jobid: Number(jobidText), mode, offset, after, limit };
}
