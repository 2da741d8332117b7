/**
 * Dialects: where the interface's text (`spec`) and the deployed Click2Sync system (`click2sync`)
 * disagree, a per-connection dialect chooses what the kit *emits*. What the kit *accepts* never
 * depends on the dialect: every form either peer sends is read (`readItem`, both key headers, ids
 * or natural keys in acknowledgements). docs/interface.md "Dialects" lists each difference with
 * its source.
 */
import { ConversionError } from './converters';
import { entityOf, type ReverseItemOf } from './entities';
import type { Entity, ItemOf, Order } from './webhook';

export const DIALECT_NAMES = ['spec', 'click2sync'] as const;
export type DialectName = (typeof DIALECT_NAMES)[number];
export const DEFAULT_DIALECT: DialectName = 'spec';

/** The member each dialect keys a reverse acknowledgement (`{P}/pull/{entity}/{id}/succeded`) by. */
export type AckIdMember<E extends Entity> = '_id' | (E extends 'products' ? 'sku' : 'orderid');

export interface Dialect {
  readonly name: DialectName;
  readonly summary: string;
  /** The header a caller presents the key in (a store accepts every name in `KEY_HEADERS`). */
  readonly keyHeader: (typeof KEY_HEADERS)[number];
  /**
   * How items handed out by the reverse `next` carry `quantity`, `number`, `unitPrice`: the
   * spec's strings, or the numbers the deployed daemons cast to (`(Long) quantity`).
   */
  readonly reverseNumbers: 'string' | 'number';
  /** How they carry `dateCreated`/`dateClosed`: ISO 8601 strings, or epoch-ms numbers (`0` when unset). */
  readonly reverseDates: 'iso' | 'epoch-ms';
  /** The member a daemon puts in the acknowledgement path. */
  readonly ackId: { readonly [E in Entity]: AckIdMember<E> };
}

/**
 * Names of the key header, in the order a store looks them up. The spec names `SvcKey`; the deployed
 * service sends `C2SKey`. Stores accept both by default and callers send both.
 */
export const KEY_HEADERS = ['SvcKey', 'C2SKey'] as const;

/**
 * The status members of `{P}/upstreamstatus`: the deployed daemons read `upstreamstatus`, the
 * spec and the public docs print `connectionstatus`. The service always answers both.
 */
export const UPSTREAM_STATUS_MEMBERS = ['upstreamstatus', 'connectionstatus'] as const;

export const DIALECTS: { readonly [N in DialectName]: Dialect } = {
  spec: {
    name: 'spec',
    summary: 'the interface as written: SvcKey, reverse items with string quantities and money and ISO dates, acknowledgements by _id',
    keyHeader: 'SvcKey',
    reverseNumbers: 'string',
    reverseDates: 'iso',
    ackId: { products: '_id', orders: '_id' },
  },
  click2sync: {
    name: 'click2sync',
    summary: 'Click2Sync as deployed: C2SKey, reverse items with numbers and epoch-ms dates, acknowledgements by sku / orderid',
    keyHeader: 'C2SKey',
    reverseNumbers: 'number',
    reverseDates: 'epoch-ms',
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

/** The reverse-form item a dialect's daemon reads from `next`. Throws `ConversionError` when a value cannot be carried. */
export function encodeReverseItem<E extends Entity>(dialect: Dialect, entity: E, item: ItemOf<E>): ReverseItemOf<E> | Record<string, unknown> {
  const d = entityOf(entity);
  const reverse = d.toReverse(item as never) as ReverseItemOf<E>;
  if (dialect.reverseNumbers === 'string' && dialect.reverseDates === 'iso') return reverse;
  // The reverse members with the webhook's numbers: the round trip keeps exactly the reverse form's members.
  const out = (dialect.reverseNumbers === 'number' ? d.toWebhook(reverse as never) : reverse) as Record<string, unknown>;
  if (entity !== 'orders') return out;
  const order = item as Order;
  if (dialect.reverseDates === 'epoch-ms') {
    for (const field of ['dateCreated', 'dateClosed'] as const) {
      if (order[field] !== undefined) out[field] = epochMsOf(order[field], field);
    }
  }
  if (dialect.reverseNumbers === 'number' && order.buyer) {
    // Deployed pulled orders carry the buyer's addresses and a numeric buyer id (a daemon casts `(Long) buyer.id`).
    const buyer: Record<string, unknown> = { ...(out.buyer as object) };
    if (typeof buyer.id === 'string' && /^\d{1,15}$/.test(buyer.id)) buyer.id = Number(buyer.id);
    if (order.buyer.billingaddress) buyer.billingaddress = { ...order.buyer.billingaddress };
    if (order.buyer.shipmentaddress) buyer.shipmentaddress = { ...order.buyer.shipmentaddress };
    out.buyer = buyer;
  }
  return out;
}

function epochMsOf(value: string, field: string): number {
  if (value === '') return 0;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ConversionError(`"${value}" is not an ISO 8601 date`, field);
  return ms;
}
