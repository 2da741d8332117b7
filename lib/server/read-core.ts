/**
 * The framework-agnostic cores of the four read webhooks: list a page, get one item by id.
 *
 * A list page is built by concatenating each item's JSON text (serialized once, or served as the
 * adapter's raw JSON) inside the envelope, never by stringifying the page a second time. The page
 * ends before the item that would push the whole body over `maxPageBytes`, or when the time budget
 * runs out, and `next` then points right after the last item actually sent.
 */
import type { SortKey } from '../adapter';
import { ListedItem } from '../adapter-guard';
import { entityOf } from '../contract/entities';
import type { Paging } from '../contract/messages';
import { MAX_BY_IDS } from '../contract/limits';
import { BY_IDS_HEADER, FORBIDDEN_CHARACTERS, hasForbiddenCharacter, MAX_ID_LENGTH } from '../contract/webhook';
import type { Entity, ItemOf } from '../contract/entities';
import { AdapterTimeoutError, ItemTooLargeError } from '../errors';
import { CursorCodec } from './cursor';
import type { Deadline } from './deadline';
import { InvalidQueryError, NotFoundError } from '../http/http-errors';
import type { ListQuery } from './list-query';
import type { Listing, RouterConfig } from './router-options';

/** The first adapter call asks for this many items at most; each further call for twice as many. */
export const FIRST_CHUNK = 64;

/** What a core answers: the status, extra headers, and the JSON body as text. */
export interface CoreHttpResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string;
  /** The body's length in UTF-8 bytes, when the core already knows it (list pages count it anyway). */
  readonly bytes?: number;
  /** A list page's items (its `paging.pageSize`), for the page metrics: no one reads it back out of the body. */
  readonly items?: number;
}

function pagingJson(paging: Paging): string {
  // Member order as in the spec's table; undefined members are left out.
  return JSON.stringify({ pageSize: paging.pageSize, itemsTotal: paging.itemsTotal, offset: paging.offset, next: paging.next });
}

/** Decimal digits of a non-negative integer (asked per listed item: no string is made). */
function digits(n: number): number {
  let d = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) d++;
  return d;
}

/** `{"pageSize":` + `,"itemsTotal":` + 16 digits + `,"next":"` + `"}`: what every bound adds. */
const PAGING_FIXED = '{"pageSize":'.length + ',"itemsTotal":'.length + digits(Number.MAX_SAFE_INTEGER) + ',"next":"'.length + '"}'.length;

/**
 * Length of `pagingJson` with a 16-digit `itemsTotal` and a `next` of `cursorLength` characters:
 * `{"pageSize":N,"itemsTotal":T,"offset":O,"next":"C"}` (no escaping: digits and Base64url only).
 */
export function maxPagingLength(pageSize: number, offset: number | undefined, cursorLength: number): number {
  const offsetPart = offset === undefined ? 0 : ',"offset":'.length + digits(offset);
  return PAGING_FIXED + digits(pageSize) + offsetPart + cursorLength;
}

/**
 * At least `CursorCodec.encodedLength` of any cursor after an `_id` of `idLength` UTF-16 units: the
 * payload is under 64 bytes without the `_id`, and each unit is at most 6 bytes in JSON (`\uXXXX`);
 * a 16-byte MAC; Base64 makes 4 characters of 3 bytes.
 */
export function cursorLengthBound(idLength: number): number {
  return Math.ceil(((16 + 64 + 6 * idLength) * 4) / 3);
}

/**
 * The largest item (serialized, UTF-8 bytes) that fits on an empty list page under `maxPageBytes`
 * whatever the request: envelope, a 16-digit `offset` and `itemsTotal`, and a `next` after an item
 * whose `_id` has `idLength` UTF-16 units. Writes refuse larger items: stored, such an item would
 * stop every walk of the list with a 500 (`ItemTooLargeError`) at its position.
 */
export function maxListableItemBytes(entity: Entity, maxPageBytes: number, idLength: number): number {
  const envelopeBytes = '{"paging":'.length + `,${JSON.stringify(entity)}:[`.length + ']}'.length;
  return maxPageBytes - envelopeBytes - maxPagingLength(1, Number.MAX_SAFE_INTEGER, cursorLengthBound(idLength));
}

function keyOfListed(item: ListedItem<unknown>): SortKey {
  return { last_updated: item.last_updated, _id: item._id };
}

/**
 * Whether this listing sends nothing but the sort keys (product stubs): then the page is read with
 * the adapter's `listKeys`, never touching the documents.
 */
function keysOnly(entity: Entity, listing: Listing): boolean {
  return listing === 'stubs' && entityOf(entity).stubMembers.length === 0;
}

/** The JSON text a listed item is sent as: the item, or its stub. */
function listedJson(entity: Entity, listing: Listing): (item: ListedItem<unknown>) => string {
  if (listing === 'full') return (item) => item.json;
  const members = entityOf(entity).stubMembers;
  // Keys only (product stubs): the text written directly, the same as JSON.stringify of the stub
  // (`last_updated` is a safe integer, the guard checked it), without an object per stub.
  if (members.length === 0) return (item) => `{"_id":${JSON.stringify(item._id)},"last_updated":${item.last_updated}}`;
  return (item) => {
    const stub: Record<string, unknown> = { _id: item._id, last_updated: item.last_updated };
    if (members.length > 0) {
      const doc = item.doc as Record<string, unknown>;
      for (const m of members) if (doc[m] !== undefined) stub[m] = doc[m];
    }
    return JSON.stringify(stub);
  };
}

/**
 * One list page. Offset mode answers `paging.offset` (this page's first position) and, when more
 * items follow, `next` as a cursor after the last item sent; cursor mode answers `next` only.
 */
export async function listPage(config: RouterConfig, entity: Entity, query: ListQuery, deadline: Deadline): Promise<CoreHttpResponse> {
  const store = config.adapter.entity(entity);
  const signal = deadline.signal;
  const jsonOf = listedJson(entity, config.listing);
  const readPage = keysOnly(entity, config.listing)
    ? async (o: Parameters<typeof store.list>[0]) => (await store.listKeys(o)).map((k) => new ListedItem<unknown>(k._id, k.last_updated, undefined, undefined))
    : (o: Parameters<typeof store.list>[0]) => store.list(o);
  const total = deadline.race(store.count({ signal }));
  total.catch(() => undefined);

  const cursorFor = (key: SortKey) => config.cursors.encode({ entity, sortorder: query.sortorder, after: key });
  const pageOffset = query.mode === 'offset' ? query.offset : undefined;
  const prefix = '{"paging":';
  const middle = `,${JSON.stringify(entity)}:[`;
  const suffix = ']}';
  const envelopeBytes = prefix.length + middle.length + suffix.length;

  const jsons: string[] = [];
  let itemBytes = 0; // items plus the commas between them
  let last: SortKey | undefined;
  let more = false;
  let position: { offset?: number; after?: SortKey } = query.after ? { after: query.after } : { offset: query.offset };
  let chunk = Math.min(query.limit + 1, FIRST_CHUNK);

  // Ask for one item more than the page holds: its presence is what says a `next` is due.
  fill: for (;;) {
    const want = Math.min(chunk, query.limit + 1 - jsons.length);
    let items: ListedItem<unknown>[];
    try {
      items = await deadline.race(readPage({ ...query.extra, sortorder: query.sortorder, limit: want, ...position, signal }));
    } catch (err) {
      if (err instanceof AdapterTimeoutError && jsons.length > 0) {
        more = true;
        break;
      }
      throw err;
    }
    for (const item of items) {
      if (jsons.length === query.limit) {
        more = true;
        break fill;
      }
      const json = jsonOf(item);
      const bytes = Buffer.byteLength(json, 'utf8');
      const key = keyOfListed(item);
      // The largest paging this page could end with: a 16-digit total and `next` after this item.
      const separator = jsons.length > 0 ? 1 : 0;
      const room = config.maxPageBytes - (envelopeBytes + itemBytes + separator + bytes);
      // The exact cursor length (a JSON payload per item) is needed only near the budget.
      const fits =
        maxPagingLength(jsons.length + 1, pageOffset, cursorLengthBound(item._id.length)) <= room ||
        maxPagingLength(jsons.length + 1, pageOffset, CursorCodec.encodedLength({ entity, sortorder: query.sortorder, after: key })) <= room;
      if (!fits) {
        if (jsons.length === 0) throw new ItemTooLargeError(entity, item._id, bytes, config.maxPageBytes);
        more = true;
        break fill;
      }
      jsons.push(json);
      itemBytes += separator + bytes;
      last = key;
    }
    if (items.length < want) break; // the end of the data
    position = { after: keyOfListed(items[items.length - 1]) };
    chunk *= 2;
    if (deadline.expired) {
      if (jsons.length === 0) throw signal.reason;
      more = true;
      break;
    }
  }

  const paging: Paging = {
    pageSize: jsons.length,
    itemsTotal: await total,
    offset: pageOffset,
    next: more && last ? cursorFor(last) : undefined,
  };
  const pagingText = pagingJson(paging);
  // The envelope and paging are ASCII: their lengths are their byte counts.
  const body = `${prefix}${pagingText}${middle}${jsons.join(',')}${suffix}`;
  // A stub page is what a caller re-syncing by ID reads first: it learns there that it may batch.
  return { status: 200, ...(config.listing === 'stubs' ? { headers: BY_IDS_ADVERTISED } : {}), body, bytes: envelopeBytes + pagingText.length + itemBytes, items: jsons.length };
}

/** The header of stub list pages that advertises the batched by-ID read (`BY_IDS_HEADER`). */
const BY_IDS_ADVERTISED: Readonly<Record<string, string>> = Object.freeze({ [BY_IDS_HEADER.toLowerCase()]: String(MAX_BY_IDS) });

/**
 * The item with this `_id`, or `NotFoundError`. `where` names where the id came from, for messages
 * (`in the path`, `in the id parameter`). An id the contract refuses (empty, too long, a control
 * character) is a 400 before the adapter is asked: no adapter ever sees a NUL.
 */
async function readOne<E extends Entity>(config: RouterConfig, entity: E, id: string, where: string, deadline: Deadline): Promise<ItemOf<E>> {
  const { noun } = entityOf(entity);
  if (id === '') throw new InvalidQueryError(`the ${noun} id ${where} must not be empty`);
  if (id.length > MAX_ID_LENGTH) throw new InvalidQueryError(`the ${noun} id ${where} must be at most ${MAX_ID_LENGTH} characters`);
  if (hasForbiddenCharacter(id)) throw new InvalidQueryError(`the ${noun} id ${where} must not contain ${FORBIDDEN_CHARACTERS}`);
  const item = await deadline.race(config.adapter.entity(entity).get(id, { signal: deadline.signal }));
  if (item === undefined) {
    const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
    throw new NotFoundError(`no ${noun} with _id ${JSON.stringify(shown)}`);
  }
  return item;
}

/** `GET /products/:id`: `200 {product}` / `200 {order}`, or `404 {error}`. */
export async function getItem(config: RouterConfig, entity: Entity, id: string, deadline: Deadline): Promise<CoreHttpResponse> {
  const item = await readOne(config, entity, id, 'in the path', deadline);
  return { status: 200, body: JSON.stringify({ [entityOf(entity).noun]: item }) };
}

/**
 * `GET /products?id=X` (the deployed by-id read on the list URL): `200` with the bare item (the
 * one shape proven against the deployed service), or `404 {error}`.
 */
export async function getBareItem(config: RouterConfig, entity: Entity, id: string, deadline: Deadline): Promise<CoreHttpResponse> {
  return { status: 200, body: JSON.stringify(await readOne(config, entity, id, 'in the id parameter', deadline)) };
}

/**
 * `GET /products?ids=a,b,c` (the batched by-ID read, an extension of this kit):
 * `200 {"products": [items found, in the order asked], "missing": [ids not found]}`. The ids were
 * checked by the contract (`ItemIdsParameter`: 1 to `MAX_BY_IDS` distinct valid ids) and are read
 * with one adapter call (`getMany`). The body keeps to `maxPageBytes` like a list page: an item that
 * would cross it is left out of both lists, and a caller reads any id answered neither way again
 * on its own (the kit's caller does).
 */
export async function getItems(config: RouterConfig, entity: Entity, ids: readonly string[], deadline: Deadline): Promise<CoreHttpResponse> {
  const found = await deadline.race(config.adapter.entity(entity).getMany(ids, { signal: deadline.signal }));
  const missing: string[] = [];
  for (let i = 0; i < ids.length; i++) if (found[i] === undefined) missing.push(ids[i]);
  const missingJson = JSON.stringify(missing);
  const prefix = `{${JSON.stringify(entity)}:[`;
  const suffix = `],"missing":${missingJson}}`;
  let bytes = Buffer.byteLength(prefix) + Buffer.byteLength(suffix);
  const jsons: string[] = [];
  for (const item of found) {
    if (item === undefined) continue;
    const json = JSON.stringify(item);
    const size = Buffer.byteLength(json, 'utf8') + (jsons.length > 0 ? 1 : 0);
    if (bytes + size > config.maxPageBytes) continue;
    jsons.push(json);
    bytes += size;
  }
  return { status: 200, body: `${prefix}${jsons.join(',')}${suffix}`, bytes, items: jsons.length };
}
