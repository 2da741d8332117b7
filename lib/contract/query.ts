/**
 * Query parameters as data: each parameter's text-to-value schema, its meaning and its origin, in
 * one table per kind of request. The store router parses with these tables, the caller builds
 * its URLs from them and the OpenAPI document lists them, so a parameter is declared once.
 *
 * A query string is parsed strictly and the same on every host (Express 4's `qs`, Express 5's
 * `querystring`, `node:http`, Fetch): no nested objects, a repeated parameter is an error, and
 * every error names the parameter and says what is wrong.
 */
import { z } from 'zod';
import { SORT_ORDERS } from './messages';
import { MAX_BY_IDS } from './limits';
import { BY_IDS_HEADER, IdSchema } from './webhook';

/** Where a parameter comes from: the interface's text, the deployed system, or this kit. */
export type ParameterOrigin = 'spec' | 'deployed' | 'storebridge';

/** One query parameter: how its text becomes a value, and what it means. */
export interface QueryParameter<T = unknown> {
  /** From the text received to the value; an error message completes "<name> …". */
  readonly schema: z.ZodType<T, string>;
  readonly description: string;
  readonly origin: ParameterOrigin;
}

export type QueryTable = Readonly<Record<string, QueryParameter>>;

/** The values of a query table: each parameter's value, or `undefined` when absent. */
export type QueryValues<T extends QueryTable> = { readonly [K in keyof T]: T[K] extends QueryParameter<infer V> ? V | undefined : never };

const integerText = (pattern: RegExp, message: string, min: number) =>
  z
    .string()
    .regex(pattern, message)
    .transform(Number)
    .pipe(z.number().int(message).min(min, message).max(Number.MAX_SAFE_INTEGER, message));

/** `jobid`: identifies the sync job, for tracking; logged, never interpreted. */
export const JobIdParameter: QueryParameter<number> = {
  schema: integerText(/^-?\d{1,16}$/, 'must be an integer', Number.MIN_SAFE_INTEGER),
  description: 'Identifier of the sync job, for tracking (logged, not interpreted). Optional: deployed callers may leave it out.',
  origin: 'spec',
};

/** `id` on the list and write URLs: the item to read or write (deployed: the same URL serves both). */
export const ItemIdParameter: QueryParameter<string> = {
  schema: IdSchema,
  description: 'The `_id` of one item.',
  origin: 'spec',
};

/** `"abc"` for a message, shortened to 40 characters. */
const shownId = (id: string) => JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id);

/**
 * `ids` on the list URL: the batched by-ID read. Comma-separated ids, each percent-encoded on its
 * own (`encodeURIComponent`: a comma inside an id travels as `%2C`), so the value is decoded once
 * more per id after the query string's own decoding. 1 to `MAX_BY_IDS` distinct ids, each valid by
 * the contract's id rule (`IdSchema`); anything else is refused with what is wrong.
 */
export const ItemIdsParameter: QueryParameter<string[]> = {
  schema: z.string().transform((text, ctx) => {
    const fail = (message: string) => {
      ctx.issues.push({ code: 'custom', message, input: text });
      return z.NEVER;
    };
    if (text === '') return fail(`must not be empty: give 1 to ${MAX_BY_IDS} comma-separated ids`);
    const parts = text.split(',');
    // Counted before anything is decoded: a long list costs nothing more than its refusal.
    if (parts.length > MAX_BY_IDS) return fail(`must hold at most ${MAX_BY_IDS} ids, got ${parts.length}`);
    const ids: string[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < parts.length; i++) {
      if (parts[i] === '') return fail(`must not hold an empty id (id ${i + 1} of ${parts.length}); separate ids with single commas`);
      let id: string;
      try {
        id = decodeURIComponent(parts[i]);
      } catch {
        return fail(`id ${i + 1} is not valid percent-encoding (encode each id with encodeURIComponent)`);
      }
      const valid = IdSchema.safeParse(id);
      if (!valid.success) return fail(`id ${i + 1} (${shownId(id)}) ${valid.error.issues[0]?.message ?? 'is not a valid id'}`);
      if (seen.has(id)) return fail(`must not repeat an id: ${shownId(id)} is given twice`);
      seen.add(id);
      ids.push(id);
    }
    return ids;
  })
    // What the value is once read, for the OpenAPI document (a comma-separated array: `style: form`, `explode: false`).
    .pipe(z.array(IdSchema).min(1).max(MAX_BY_IDS)),
  description: `Read several items at once (an extension of this kit, advertised by the \`${BY_IDS_HEADER}\` header of its stub list pages): 1 to ${MAX_BY_IDS} distinct ids, comma-separated, each percent-encoded on its own (a comma in an id is \`%2C\`). The answer is \`{"<entity>": [items found, in the order asked], "missing": [ids not found]}\`; other parameters are then ignored.`,
  origin: 'storebridge',
};

/** The list webhooks' parameters. */
export const LIST_QUERY = {
  sortorder: {
    schema: z.enum(SORT_ORDERS, { error: 'must be asc or desc' }),
    description: 'Sort order by `(last_updated, _id)`; `_id` breaks ties. Default `asc` (deployed callers may leave it out).',
    origin: 'spec',
  } as QueryParameter<(typeof SORT_ORDERS)[number]>,
  jobid: JobIdParameter,
  offset: {
    schema: integerText(/^\d{1,16}$/, 'must be a non-negative integer', 0),
    description: 'Numeric paging: 0-based position of the first item. Not together with `next`.',
    origin: 'spec',
  } as QueryParameter<number>,
  next: {
    schema: z.string().min(1, 'must not be empty: send the paging.next value of the previous page'),
    description: 'Cursor paging: the `paging.next` of the previous page (opaque). Not together with `offset`.',
    origin: 'spec',
  } as QueryParameter<string>,
  limit: {
    schema: integerText(/^\d{1,16}$/, 'must be a positive integer', 1),
    description: 'Items per page, capped by the store (an extension of this kit): at its `maxPageSize` (default 1,000), or at 10,000 on an ids-only stub listing.',
    origin: 'storebridge',
  } as QueryParameter<number>,
  id: {
    ...ItemIdParameter,
    description: 'Read one item instead of a page: the answer is the bare item (the deployed by-id read). Other parameters are then ignored.',
    origin: 'deployed',
  } as QueryParameter<string>,
  ids: ItemIdsParameter,
} satisfies QueryTable;

/** The add/update webhooks' parameters (`POST {url}?jobid=&id=`; without `id` the write creates). */
export const WRITE_QUERY = {
  jobid: { ...JobIdParameter, description: 'Identifier of the sync job (optional).' },
  id: { ...ItemIdParameter, description: 'The `_id` of the item to write. Without it (and without a body `_id`) the write creates the item and the store assigns its id.' },
} satisfies QueryTable;

export type ListQueryValues = QueryValues<typeof LIST_QUERY>;

/**
 * The list parameters the store router interprets itself (paging and the by-ID reads). Every other
 * parameter of `LIST_QUERY` is a **filter**: the router hands it to the adapter's `list`, and the
 * caller sends it from its `ListOptions` / `WalkOptions`, so a filter is declared once, here.
 */
const LIST_PAGING_PARAMETERS: ReadonlySet<string> = new Set(['sortorder', 'jobid', 'offset', 'next', 'limit', 'id', 'ids'] satisfies (keyof typeof LIST_QUERY)[]);
type ListPagingParameter = 'sortorder' | 'jobid' | 'offset' | 'next' | 'limit' | 'id' | 'ids';

type DeclaredFilters = { readonly [K in Exclude<keyof typeof LIST_QUERY, ListPagingParameter>]?: ListQueryValues[K] };

/**
 * The values of the list filters (`LIST_QUERY`'s parameters beyond paging), one optional member each.
 * The adapter's `ListOptions`, the caller's `ListOptions` and `WalkOptions` all extend it, so a filter
 * in the table reaches the adapter and the caller's requests with no other declaration. A filter
 * added to the table at run time (an extension) declares its value type by merging into this
 * interface.
 *
 * @example
 * ```ts
 * import { LIST_QUERY, type QueryParameter } from 'storebridge/contract';
 * (LIST_QUERY as Record<string, QueryParameter>).lang = { schema: z.enum(['en', 'es']), description: 'Title language.', origin: 'storebridge' };
 * declare module 'storebridge/contract' {
 *   interface ListFilters { readonly lang?: 'en' | 'es' }
 * }
 * // adapter.products.list({ …, lang }) receives it; client.walk('products', { jobid: 1, lang: 'es' }) sends it.
 * ```
 */
export interface ListFilters extends DeclaredFilters {}

/** The filters among some values (a parsed query, the caller's options): `LIST_QUERY`'s non-paging parameters that are set. */
export function listFiltersOf(values: object): Readonly<Record<string, unknown>> {
  let out: Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || LIST_PAGING_PARAMETERS.has(name) || !Object.prototype.hasOwnProperty.call(LIST_QUERY, name)) continue;
    (out ??= {})[name] = value;
  }
  return out ?? NO_FILTERS;
}
const NO_FILTERS: Readonly<Record<string, unknown>> = Object.freeze({});
export type WriteQueryValues = QueryValues<typeof WRITE_QUERY>;

export type QueryParseResult<T extends QueryTable> =
  | { readonly ok: true; readonly values: QueryValues<T>; /** Parameters the table does not declare (ignored). */ readonly ignored: readonly string[] }
  | { readonly ok: false; /** The parameter at fault. */ readonly parameter: string; readonly error: string };

/** `"abc"`, shortened to 40 characters. */
function shorten(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

/**
 * Parses a raw query string (with or without `?`) against a table. The first problem found is the
 * answer: a repeated parameter, or a value its schema refuses.
 */
export function parseQuery<T extends QueryTable>(table: T, rawQuery: string): QueryParseResult<T> {
  const params = new URLSearchParams(rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery);
  const seen = new Map<string, string[]>();
  for (const [name, value] of params) {
    const values = seen.get(name);
    if (values) values.push(value);
    else seen.set(name, [value]);
  }
  const values: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [name, texts] of seen) {
    const parameter = Object.prototype.hasOwnProperty.call(table, name) ? table[name] : undefined;
    if (!parameter) {
      ignored.push(name);
      continue;
    }
    if (texts.length > 1) return { ok: false, parameter: name, error: `${name} must be given once, got ${texts.length} values` };
    const parsed = parameter.schema.safeParse(texts[0]);
    if (!parsed.success) {
      const message = parsed.error.issues[0]?.message ?? 'is not valid';
      return { ok: false, parameter: name, error: `${name} ${message}${texts[0] === '' ? '' : `, got ${shorten(texts[0])}`}` };
    }
    values[name] = parsed.data;
  }
  return { ok: true, values: values as QueryValues<T>, ignored };
}

/**
 * Writes query values into a URL's query, keeping the URL's own parameters (a deployed connection's
 * URL may carry its own, e.g. `…/c2s.php?entity=products`) and replacing same-named ones.
 */
export function withQuery(url: string | URL, values: Readonly<Record<string, string | number | undefined>>): string {
  const out = new URL(url);
  for (const [name, value] of Object.entries(values)) if (value !== undefined) out.searchParams.set(name, String(value));
  return out.toString();
}
