/**
 * Dialects, one object per side. The reverse side: where the interface's text (`spec`) and the
 * deployed Click2Sync system (`click2sync`) disagree, a per-connection dialect (`DIALECTS`)
 * chooses what the kit *emits*. The store side (`STORE_DIALECT`): every answer serves both peers,
 * so the differences are emitted in both forms. What the kit *accepts* never
 * depends on the dialect: every form either peer sends is read (`readItem`, both key headers, ids
 * or natural keys in acknowledgements). docs/interface.md "Dialects" lists each difference with
 * its source; docs/reverse-connection.md "What the dialect sends" lists, member by member, the
 * cast a deployed daemon reads it with and what each dialect sends.
 *
 * Every difference is data in the dialect object (`DIALECTS`), read by the encoders below: no code
 * elsewhere branches on a dialect's name.
 */
import { createHash } from 'node:crypto';
import { ConversionError } from './converters';
import { entityOf, type NaturalKeyOf, type ReverseItemOf } from './entities';
import type { Order } from './webhook';
import type { Entity, ItemOf } from './entities';

export const DIALECT_NAMES = ['spec', 'click2sync'] as const;
export type DialectName = (typeof DIALECT_NAMES)[number];
export const DEFAULT_DIALECT: DialectName = 'spec';

/** The member each dialect keys a reverse acknowledgement (`{P}/pull/{entity}/{id}/succeded`) by. */
export type AckIdMember<E extends Entity> = '_id' | NaturalKeyOf<E>;

/** How items handed out by the reverse `next` are written (what a daemon of the dialect reads). */
export interface PulledItemForm {
  /** `quantity`, `number`, `unitPrice`: the spec's strings, or the numbers the deployed daemons cast to (`(Long) quantity`). */
  readonly numbers: 'string' | 'number';
  /** `dateCreated`/`dateClosed`: ISO 8601 strings, or epoch-ms numbers (`0` when unset: SAI casts `(long) dateCreated`). */
  readonly dates: 'iso' | 'epoch-ms';
  /**
   * `buyer.id`: the stored text, or always a JSON integer (ECC casts `(Long) buyer.id` and nothing
   * catches the exception): a canonical integer below `MAPPED_BUYER_ID_MIN` goes as itself, any
   * other id (text, leading zeros, none) as a stable integer kept in the connection's id map, so
   * that a push back restores the original. An order with no buyer gets one with that id.
   */
  readonly buyerId: 'text' | 'integer';
  /** Buyer `billingaddress`/`shipmentaddress`: left out (the spec's reverse form lacks them) or included (deployed pulled orders carry them). */
  readonly buyerAddresses: boolean;
  /**
   * Every order carries `otherids: [{connectionid, id, connectiontype}]` naming the store's order
   * number (B1 reads its reference from `otherids[0].id` and logs "Could not extract referenceid"
   * without it).
   */
  readonly otherids: boolean;
  /** `connectiontype` of that entry (B1 prefixes known marketplaces' types to the reference; this one gets none). */
  readonly otheridsType: string;
  /**
   * An item the daemon's store keeps under an id of its own (it said so in `succeded`) is handed
   * out under that id as `_id` from then on (B1 updates a document whose number it is given and
   * inserts anything else: the service's own id would be inserted again).
   */
  readonly storeIds: boolean;
  /** Order lines name products as the daemon's store knows them: the id it gave the product, else its SKU (B1 refuses an item code it does not know). */
  readonly lineProductsAsStoreKnows: boolean;
  /** An `orderid` a daemon cannot put raw in a URL path (`#100000`) goes out as the service's key, the number staying in `otherids`. */
  readonly rawSafeOrderIds: boolean;
}

export interface Dialect {
  readonly name: DialectName;
  readonly summary: string;
  readonly pulled: PulledItemForm;
  /** The member a daemon puts in the acknowledgement path. */
  readonly ackId: { readonly [E in Entity]: AckIdMember<E> };
}

/**
 * Names of the key header, in the order a store looks them up. The spec names `SvcKey`; the deployed
 * service sends `C2SKey`. Stores accept both by default and callers send both.
 */
export const KEY_HEADERS = ['SvcKey', 'C2SKey'] as const;

/**
 * The store side's dialect (the webhooks). Unlike the reverse side it is one object, not a choice:
 * a store cannot tell who calls, so wherever the spec's form and the deployed one differ it emits
 * both, and a caller sends what either kind of store reads. Each such rule is a member here.
 */
export const STORE_DIALECT = {
  /** The headers a caller sends the key in, and a store reads it from, in this order (both: `KEY_HEADERS`). */
  keyHeaders: KEY_HEADERS,
  /** A write failure reason in both forms: the spec's `{msg}` and the deployed stores' `{message, code}`. */
  reason: (text: string, code: number): { msg: string; message: string; code: number } => ({ msg: text, message: text, code }),
  /**
   * Characters no id the kit makes holds, and a write that introduces one is warned about: the
   * deployed daemons concatenate ids into URLs unencoded (`#` starts a fragment, `?` a query, `/` a
   * segment, `%` an escape; a space makes Java's `HttpPost` throw).
   */
  urlUnsafeIdCharacters: '#?/% ',
} as const;

/**
 * The interface text prints `push/products/finish` for the normal *order* finish too (a slip; the
 * deployed daemons call `push/orders/finish`). A reverse service accepts both, whatever the
 * connection's dialect: while a push expects the `finishes` entity, a finish on `path` finishes it
 * (docs/reverse-connection.md "Push"). A sample push (`pingsample`) has no such slip.
 */
export const PUSH_FINISH_SLIP: { readonly kind: 'push'; readonly path: Entity; readonly finishes: Entity } = { kind: 'push', path: 'products', finishes: 'orders' };

export const DIALECTS: { readonly [N in DialectName]: Dialect } = {
  spec: {
    name: 'spec',
    summary: 'the interface as written: reverse items with string quantities and money and ISO dates, acknowledgements by _id',
    pulled: { numbers: 'string', dates: 'iso', buyerId: 'text', buyerAddresses: false, otherids: false, otheridsType: 'storebridge', storeIds: false, lineProductsAsStoreKnows: false, rawSafeOrderIds: false },
    ackId: { products: '_id', orders: '_id' },
  },
  click2sync: {
    name: 'click2sync',
    summary: 'Click2Sync as deployed: reverse items with numbers, epoch-ms dates, integer buyer ids and otherids, items under the ids the ERP gave them, acknowledgements by sku / orderid',
    pulled: { numbers: 'number', dates: 'epoch-ms', buyerId: 'integer', buyerAddresses: true, otherids: true, otheridsType: 'storebridge', storeIds: true, lineProductsAsStoreKnows: true, rawSafeOrderIds: true },
    ackId: { products: 'sku', orders: 'orderid' },
  },
};

/** The dialect of a name; throws a `RangeError` naming the choices for anything else. */
export function dialectOf(name: string): Dialect {
  if (!Object.prototype.hasOwnProperty.call(DIALECTS, name)) {
    throw new RangeError(`unknown dialect ${JSON.stringify(name)}; expected ${DIALECT_NAMES.join(' or ')}`);
  }
  return DIALECTS[name as DialectName];
}

/**
 * The id a daemon of this dialect puts in an acknowledgement path for `item`: its `_id`, or its
 * `sku`/`orderid` under `click2sync` (falling back to `_id` when the item has none).
 */
export function ackIdOf<E extends Entity>(dialect: Dialect, entity: E, item: { readonly _id?: string; readonly sku?: string; readonly orderid?: string }): string | undefined {
  const member = dialect.ackId[entity];
  const preferred = member === '_id' ? undefined : item[member as 'sku' | 'orderid'];
  return typeof preferred === 'string' && preferred !== '' ? preferred : item._id;
}

// ---- buyer ids as integers ----------------------------------------------------------------

/**
 * Buyer ids mapped to integers (`buyerId: 'integer'`) are in `[MAPPED_BUYER_ID_MIN, 2^53 − 1]`;
 * a buyer id that is a canonical integer below it goes out as itself. So a number in that range
 * coming back in a push is always looked up in the id map, and no stored numeric id is ever
 * mistaken for a mapped one.
 */
export const MAPPED_BUYER_ID_MIN = 2 ** 52;
const CANONICAL_INTEGER = /^(0|[1-9]\d{0,15})$/;

/** A buyer id that goes out as the integer it writes (`"223369408"` → 223369408), or `undefined` when it must be mapped. */
export function buyerIdAsInteger(id: string): number | undefined {
  if (!CANONICAL_INTEGER.test(id)) return undefined;
  const n = Number(id);
  return n < MAPPED_BUYER_ID_MIN ? n : undefined;
}

/**
 * Whether an integer a daemon sent back is in the mapped range (to be looked up in the id map): a
 * number, or the canonical decimal text the reader made of it (`"4503599627370496"`).
 */
export function isMappedBuyerId(n: number | string): boolean {
  if (typeof n === 'string') return CANONICAL_INTEGER.test(n) && isMappedBuyerId(Number(n));
  return Number.isSafeInteger(n) && n >= MAPPED_BUYER_ID_MIN;
}

/**
 * The integer a buyer id that is not one is mapped to: the first 52 bits of the SHA-256 of the
 * id (and `attempt`, for the rare id whose integer another id holds already) in the mapped range.
 * Stable: the same id always yields the same integer on every service.
 */
export function mappedBuyerId(id: string, attempt = 0): number {
  const digest = createHash('sha256').update(attempt === 0 ? id : `${id}\u0000${attempt}`, 'utf8').digest();
  const high = digest.readUInt32BE(0) & 0xfffff; // 20 bits
  const low = digest.readUInt32BE(4); // 32 bits
  return MAPPED_BUYER_ID_MIN + high * 2 ** 32 + low;
}

// ---- encoding a pulled item ---------------------------------------------------------------

/** What the service knows beside the stored item, for the dialects that use it (`storeIds`, `buyerId: 'integer'`, …). */
export interface HandOut {
  /** The id the daemon's store keeps the item under (from the connection's id map), when it gave one. */
  readonly storeId?: string;
  /** The mapped integer of a buyer id that is not a canonical integer (or of a missing one). */
  readonly buyerId?: number;
  /** Per order line, the product as the daemon's store knows it (`undefined`: the line as stored). */
  readonly lineProducts?: ReadonlyArray<string | undefined>;
  /** The connection's name (`otherids[].connectionid`). */
  readonly connection?: string;
}

/** The reverse-form item a dialect's daemon reads from `next`. Throws `ConversionError` when a value cannot be carried. */
export function encodeReverseItem<E extends Entity>(dialect: Dialect, entity: E, item: ItemOf<E>, handOut: HandOut = {}): ReverseItemOf<E> | Record<string, unknown> {
  const d = entityOf(entity);
  const form = dialect.pulled;
  const reverse = d.toReverse(item as never) as ReverseItemOf<E>;
  // The reverse members with the webhook's numbers: the round trip keeps exactly the reverse form's members.
  const out = (form.numbers === 'number' ? d.toWebhook(reverse as never) : reverse) as Record<string, unknown>;
  if (form.storeIds && handOut.storeId !== undefined) out._id = handOut.storeId;
  if (entity !== 'orders') return out;
  const order = item as Order;
  if (form.dates === 'epoch-ms') {
    for (const field of ['dateCreated', 'dateClosed'] as const) {
      if (order[field] !== undefined) out[field] = epochMsOf(order[field], field);
    }
  }
  if (form.lineProductsAsStoreKnows && handOut.lineProducts && Array.isArray(out.orderItems)) {
    out.orderItems = (out.orderItems as Record<string, unknown>[]).map((line, i) => (handOut.lineProducts![i] !== undefined ? { ...line, id: handOut.lineProducts![i] } : line));
  }
  encodeBuyer(form, order, out, handOut);
  return form.otherids || form.rawSafeOrderIds ? withOrderKeys(form, order, out, handOut.connection) : out;
}

function encodeBuyer(form: PulledItemForm, order: Order, out: Record<string, unknown>, handOut: HandOut): void {
  if (form.buyerId === 'text' && !form.buyerAddresses) return;
  const buyer: Record<string, unknown> = { ...(out.buyer as object | undefined) };
  if (form.buyerAddresses && order.buyer?.billingaddress) buyer.billingaddress = { ...order.buyer.billingaddress };
  if (form.buyerAddresses && order.buyer?.shipmentaddress) buyer.shipmentaddress = { ...order.buyer.shipmentaddress };
  // Without its mapped integer (the daemon writing back what it stored), a text id stays text: the service reads either.
  const id = form.buyerId === 'integer' ? (buyerIdAsInteger(order.buyer?.id ?? '') ?? handOut.buyerId) : undefined;
  if (id !== undefined) buyer.id = id;
  if (order.buyer || id !== undefined) out.buyer = buyer;
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
 * `otherids` naming the store's order number, and an `orderid` safe raw in a URL: when the store's
 * number is not (`#100000`), the order goes out the way the deployed service hands out its `tmp-`
 * ids: `orderid` is the service's own key (the `_id`, or `o-` + a hash of it when that is not safe
 * either) and the number stays in `otherids` (this kit's daemon restores it from there).
 */
function withOrderKeys(form: PulledItemForm, order: Order, out: Record<string, unknown>, connection = ''): Record<string, unknown> {
  const number = order.orderid;
  const safe = !form.rawSafeOrderIds || number === undefined || isRawUrlSafe(number);
  const key = isRawUrlSafe(order._id) ? order._id : `o-${createHash('sha256').update(order._id, 'utf8').digest('hex').slice(0, 24)}`;
  const result = safe ? out : { ...out, orderid: key };
  if (!form.otherids && safe) return result;
  return { ...result, otherids: [{ connectionid: connection, id: number ?? order._id, connectiontype: form.otheridsType }] };
}

function epochMsOf(value: string, field: string): number {
  if (value === '') return 0;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ConversionError(`"${value}" is not an ISO 8601 date`, field);
  return ms;
}
