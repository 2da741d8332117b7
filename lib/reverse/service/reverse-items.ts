/**
 * Reading what daemons send the service, tolerantly (docs/reverse-connection.md "What the service
 * accepts"): push pages through the contract's `readItem` (numbers or numeric strings, epoch-ms or
 * ISO dates, numeric ids, orders keyed by `orderid`, composite `last_updated`), one bad item refused
 * and reported while the rest of its page is stored; acknowledgement bodies as information, never a
 * reason to refuse the acknowledgement itself (a deployed daemon ignores the status and would loop).
 */
import { entityOf } from '../../contract/entities';
import { readItem } from '../../contract/item-reader';
import type { StorageFailureReport } from '../../contract/messages';
import { hasForbiddenCharacter, MAX_ID_LENGTH } from '../../contract/webhook';
import type { Entity, ItemOf } from '../../contract/entities';

const MAX_REPORT_TEXT = 2000;
const MAX_REASONS = 100;

export type BodyRead<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** An item of a push page the service could not read. */
export interface RefusedItem {
  /** Its place in the page (0-based). */
  readonly index: number;
  /** Its `_id`, `sku` or `orderid` when it has one, else `#<index>`. */
  readonly id: string;
  readonly error: string;
}

export interface PushPage<E extends Entity> {
  readonly items: ItemOf<E>[];
  /** The first refused items (at most `maxRefusedListed`). */
  readonly refused: RefusedItem[];
  /** Every item refused. */
  readonly refusedCount: number;
  /** The `last_updated` of the last item read, exactly as sent (a number or a string), if it had one. */
  readonly lastUpdated?: number | string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A scalar id as a string (`1001` → `"1001"`), or `undefined` when it is not a usable id. */
function idText(value: unknown): string | undefined {
  const s = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value : undefined;
  return s !== undefined && s !== '' && s.length <= MAX_ID_LENGTH && !hasForbiddenCharacter(s) ? s : undefined;
}

/** The name an item goes by in reports: its `_id`, else its `sku` / `orderid`. */
function nameOf(entity: Entity, raw: unknown): string | undefined {
  if (!isObject(raw)) return undefined;
  return idText(raw._id) ?? idText(raw[entityOf(entity).naturalKey]);
}

/** How much of a push page the service reads (docs/reverse-connection.md "Bounds"). */
export interface PageBounds {
  /** More items than this: the page is refused whole (deployed daemons send at most 50). */
  readonly maxItems: number;
  /** Refused items listed in the reply and recorded one by one (the rest are only counted). */
  readonly maxRefusedListed: number;
}

/**
 * Reads `{products: […]}` / `{orders: […]}`. The envelope must be right and the page no longer than
 * `bounds.maxItems` (`tooLarge` otherwise: the page is refused whole before any item is read); each
 * item is read on its own: the readable ones are returned, the first `maxRefusedListed` others
 * listed in `refused`, all of them counted in `refusedCount`.
 */
export function readPushPage<E extends Entity>(entity: E, body: unknown, bounds: PageBounds): BodyRead<PushPage<E>> | { readonly ok: false; readonly tooLarge: true; readonly error: string } {
  const list = isObject(body) ? body[entity] : undefined;
  if (!Array.isArray(list)) return { ok: false, error: `body: expected {${entity}: [ … ]}` };
  if (list.length > bounds.maxItems) return { ok: false, tooLarge: true, error: `a push page holds at most ${bounds.maxItems} ${entity}; this one has ${list.length} (send pages of 50, as the deployed daemons do)` };
  const items: ItemOf<E>[] = [];
  const refused: RefusedItem[] = [];
  let refusedCount = 0;
  let lastUpdated: number | string | undefined;
  list.forEach((raw: unknown, index) => {
    const sent = isObject(raw) ? raw.last_updated : undefined;
    const read = readItem(entity, raw, `${entity}.${index}`);
    if (!read.ok) {
      if (++refusedCount <= bounds.maxRefusedListed) refused.push({ index, id: nameOf(entity, raw) ?? `#${index}`, error: read.error });
      return;
    }
    items.push(read.item);
    if (typeof sent === 'number' || typeof sent === 'string') lastUpdated = sent;
  });
  return { ok: true, value: { items, refused, refusedCount, ...(lastUpdated !== undefined ? { lastUpdated } : {}) } };
}

/**
 * The store id a `succeded` body names: `{product: {_id}}` / `{order: {_id | orderid}}` (a number
 * is read as its decimal text). Anything else in the body is information only: an item missing, or
 * `{order: null}` (a deployed daemon sends that), is no id, not an error. The body must be an object.
 */
export function readStoredId(entity: Entity, body: unknown): BodyRead<string | undefined> {
  if (!isObject(body)) return { ok: false, error: `body: expected {${entityOf(entity).noun}: …}, the item as stored` };
  return { ok: true, value: nameOf(entity, body[entityOf(entity).noun]) };
}

/**
 * A storage failure report `{error, reasons: [{message, code}]}`, read leniently: a missing or
 * non-string `error` becomes `""`, reasons keep a string `message` (or the seed's `msg`) and an
 * integer `code` (else 0). Texts are cut at 2,000 characters, at most 100 reasons. The body must be an object.
 */
export function readFailureReport(body: unknown): BodyRead<StorageFailureReport> {
  if (!isObject(body)) return { ok: false, error: 'body: expected a storage failure report {error, reasons: [{message, code}]}' };
  const reasons = Array.isArray(body.reasons) ? body.reasons : [];
  return {
    ok: true,
    value: {
      error: typeof body.error === 'string' ? body.error.slice(0, MAX_REPORT_TEXT) : '',
      reasons: reasons.slice(0, MAX_REASONS).map((r: unknown) => {
        const reason = isObject(r) ? r : {};
        const message = typeof reason.message === 'string' ? reason.message : typeof reason.msg === 'string' ? reason.msg : '';
        const code = typeof reason.code === 'number' && Number.isSafeInteger(reason.code) ? reason.code : 0;
        return { message: message.slice(0, MAX_REPORT_TEXT), code };
      }),
    },
  };
}

/**
 * The ids a daemon may acknowledge an item handed out as `item` by: the `_id` it went out under (the
 * store's own, once the id map knows it), a product's `sku`, an order's `orderid`.
 */
export function aliasesOf(entity: Entity, item: object): string[] {
  const r = item as Record<string, unknown>;
  return [idText(r._id), idText(r[entityOf(entity).naturalKey])].filter((x): x is string => x !== undefined);
}
