/**
 * Reading what daemons send the service, tolerantly (docs/reverse-connection.md "What the service
 * accepts"): push pages through the contract's `readItem` (numbers or numeric strings, epoch-ms or
 * ISO dates, numeric ids, orders keyed by `orderid`, composite `last_updated`), one bad item refused
 * and reported while the rest of its page is stored; acknowledgement bodies as information, never a
 * reason to refuse the acknowledgement itself (a deployed daemon ignores the status and would loop).
 */
import { createHash } from 'node:crypto';
import type { Dialect } from '../../contract/dialects';
import { entityOf } from '../../contract/entities';
import { readItem } from '../../contract/item-reader';
import type { StorageFailureReport } from '../../contract/messages';
import { hasForbiddenCharacter, MAX_ID_LENGTH, type Entity, type ItemOf } from '../../contract/webhook';

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
  readonly refused: RefusedItem[];
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

/**
 * Reads `{products: […]}` / `{orders: […]}`. The envelope must be right (400 otherwise); each item is
 * read on its own: the readable ones are returned, the others listed in `refused`.
 */
export function readPushPage<E extends Entity>(entity: E, body: unknown): BodyRead<PushPage<E>> {
  const list = isObject(body) ? body[entity] : undefined;
  if (!Array.isArray(list)) return { ok: false, error: `body: expected {${entity}: [ … ]}` };
  const items: ItemOf<E>[] = [];
  const refused: RefusedItem[] = [];
  let lastUpdated: number | string | undefined;
  list.forEach((raw: unknown, index) => {
    const name = nameOf(entity, raw) ?? `#${index}`;
    const sent = isObject(raw) ? raw.last_updated : undefined;
    const read = readItem(entity, raw, `${entity}.${index}`);
    if (!read.ok) {
      refused.push({ index, id: name, error: read.error });
      return;
    }
    items.push(read.item);
    if (typeof sent === 'number' || typeof sent === 'string') lastUpdated = sent;
  });
  return { ok: true, value: { items, refused, ...(lastUpdated !== undefined ? { lastUpdated } : {}) } };
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

/** The other ids a daemon may acknowledge an item by: a product's `sku`, an order's `orderid`. */
export function aliasesOf(entity: Entity, item: object): string[] {
  const alias = idText((item as Record<string, unknown>)[entityOf(entity).naturalKey]);
  return alias ? [alias] : [];
}

/**
 * Characters a deployed daemon can put raw in a URL path segment without changing its meaning: it
 * concatenates ids into paths unencoded (`#` would start a fragment, `/` a new segment, `%` an escape).
 */
const RAW_URL_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]+$/;

/** Whether an id survives being put raw in a URL path. */
export function isRawUrlSafe(id: string): boolean {
  return RAW_URL_SAFE.test(id);
}

/**
 * Under `click2sync`, an order is acknowledged by its `orderid`, put raw in the path. When the
 * store's `orderid` is not safe there (`#100000`), the service hands the order out the way the
 * deployed service does: `orderid` is the service's own key (the `_id`, or `o-` + a hash of it when
 * that is not safe either) and the store's order number travels in `otherids`. The daemon's
 * acknowledgement then names that key.
 */
export function withRawSafeOrderKey(dialect: Dialect, entity: Entity, item: Record<string, unknown>): Record<string, unknown> {
  if (dialect.ackId.orders !== 'orderid' || entity !== 'orders') return item;
  const out = withoutTextBuyerId(item);
  const orderid = out.orderid;
  if (typeof orderid !== 'string' || isRawUrlSafe(orderid)) return out;
  const id = String(out._id);
  const key = isRawUrlSafe(id) ? id : `o-${createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 24)}`;
  const otherids = Array.isArray(out.otherids) ? out.otherids : [];
  return { ...out, orderid: key, otherids: [...otherids, { id: orderid, connectiontype: 'storebridge' }] };
}

/**
 * A deployed daemon casts `(Long) buyer.id` and nothing catches the ClassCastException a string
 * causes (it would take the same order again and again). The dialect writes a numeric buyer id as
 * a number; one that is not a number (`buyer-00042`) is left out of the order handed out.
 */
function withoutTextBuyerId(item: Record<string, unknown>): Record<string, unknown> {
  const buyer = item.buyer;
  if (!isObject(buyer) || buyer.id === undefined || typeof buyer.id === 'number') return item;
  const { id: _text, ...rest } = buyer;
  return { ...item, buyer: rest };
}
