/**
 * Storing one pulled item in the store's adapter, and the reports the daemon sends about it. The item
 * is read with the contract's tolerant `readItem` (numbers or strings, epoch-ms dates, numeric ids;
 * an order with no `_id` is keyed by `orderid`). An order that arrives with no `_id` is new to the
 * store: it is inserted under a new store id, derived from its `orderid` so that a re-delivery of the
 * same order finds it instead of inserting it twice, and `succeded` reports that id.
 */
import { createHash } from 'node:crypto';
import type { GuardedAdapter } from '../../adapter-guard';
import { entityOf } from '../../contract/entities';
import { readItem } from '../../contract/item-reader';
import type { StorageFailureReport } from '../../contract/messages';
import type { Order, Product } from '../../contract/webhook';
import type { Entity, ItemOf } from '../../contract/entities';
import { StorageError } from '../../errors';
import { FAILURE_CODES } from './daemon-options';

export type StoreOutcome<E extends Entity> =
  | { readonly ok: true; readonly item: ItemOf<E>; /** Set when the store's id is not the pulled item's `_id`. */ readonly storeId?: string }
  | { readonly ok: false; readonly report: StorageFailureReport };

/** The store id of a pulled order that had no `_id`: `order-` and 24 hex digits of the SHA-256 of its `orderid`. */
export function newOrderId(orderid: string): string {
  return `order-${createHash('sha256').update(orderid, 'utf8').digest('hex').slice(0, 24)}`;
}

/**
 * Keeps what only the store's (webhook) form has — product `properties` and `variationid`s, order
 * `shipments`, `rating`, `feedback`, `messages`, buyer addresses — when a pulled item (reverse form,
 * which lacks them) replaces a stored one. Everything both forms carry comes from the service.
 */
export function keepStoreOnlyFields<E extends Entity>(entity: E, existing: ItemOf<E> | undefined, incoming: ItemOf<E>): ItemOf<E> {
  if (!existing) return incoming;
  if (entity === 'products') return keepProductFields(existing as Product, incoming as Product) as ItemOf<E>;
  return keepOrderFields(existing as Order, incoming as Order) as ItemOf<E>;
}

function keepProductFields(before: Product, incoming: Product): Product {
  const out: Product = { ...incoming };
  if (out.properties === undefined && before.properties !== undefined) out.properties = before.properties;
  if (out.variations && before.variations && out.variations.length === before.variations.length) {
    out.variations = out.variations.map((v, i) => (v.variationid === undefined && before.variations![i].variationid !== undefined ? { variationid: before.variations![i].variationid, ...v } : v));
  }
  return out;
}

function keepOrderFields(before: Order, incoming: Order): Order {
  const out: Order = { ...incoming };
  for (const k of ['shipments', 'rating', 'feedback', 'messages'] as const) {
    if (out[k] === undefined && before[k] !== undefined) (out as Record<string, unknown>)[k] = before[k];
  }
  if (out.buyer && before.buyer) {
    const buyer = { ...out.buyer };
    if (buyer.billingaddress === undefined && before.buyer.billingaddress !== undefined) buyer.billingaddress = before.buyer.billingaddress;
    if (buyer.shipmentaddress === undefined && before.buyer.shipmentaddress !== undefined) buyer.shipmentaddress = before.buyer.shipmentaddress;
    out.buyer = buyer;
  }
  return out;
}

const failure = (error: string, message: string, code: number): StoreOutcome<never> => ({ ok: false, report: { error, reasons: [{ message, code }] } });

/**
 * Reads, checks and stores a pulled item (`raw` as the service sent it; it is not changed). A failure
 * of the item is a storage failure report, not an exception: unreadable (1003), refused by the
 * store's check (1001, one reason per message), the adapter failing (1002; the kit's message, which
 * names the operation, never the adapter's internals). A failure of the store's storage itself
 * (`StorageError`: its database unreachable, its disk full) is thrown: the pass fails, the item comes again.
 */
export async function storePulledItem<E extends Entity>(adapter: GuardedAdapter, entity: E, raw: unknown, options: { readonly now: number; readonly signal: AbortSignal }): Promise<StoreOutcome<E>> {
  const noun = entityOf(entity).noun;
  const copy: unknown = raw === null || typeof raw !== 'object' ? raw : structuredClone(raw);
  const hadId = typeof copy === 'object' && copy !== null && (copy as { _id?: unknown })._id !== undefined && (copy as { _id?: unknown })._id !== null && (copy as { _id?: unknown })._id !== '';
  const read = readItem(entity, copy);
  if (!read.ok) return failure(`the ${noun} cannot be read into the store's form`, read.error, FAILURE_CODES.NOT_CONVERTIBLE);
  let item = read.item;
  let storeId: string | undefined;
  if (!hadId && entity === 'orders') {
    storeId = newOrderId((item as Order).orderid ?? item._id);
    item = { ...item, _id: storeId };
  }
  const store = adapter.entity(entity);
  try {
    const merged = keepStoreOnlyFields(entity, await store.get(item._id, { signal: options.signal }), item);
    const reasons = await store.check(merged, { signal: options.signal });
    if (reasons.length > 0) {
      return { ok: false, report: { error: `the store refused the ${noun}`, reasons: reasons.map((message) => ({ message, code: FAILURE_CODES.REFUSED_BY_STORE })) } };
    }
    // The service's last_updated is kept; an item that comes without one (a deployed service's new
    // `tmp-` order) is stamped now, as the store's own insert or change would be, instead of 0: it
    // then lists where a new item belongs and goes out with the next push, as a deployed ERP's does.
    const lastUpdated = merged.last_updated === undefined ? 'touch' : 'keep';
    const stored = (await store.upsert(merged, { lastUpdated, now: options.now, signal: options.signal })).item;
    return { ok: true, item: stored, ...(storeId ? { storeId } : {}) };
  } catch (err) {
    // The store's own storage failing (its database unreachable, its disk full) is not this item's
    // fault: reporting it `failed` would drop it from the pull. The pass fails instead, and the
    // service hands the item out again on the next one.
    if (err instanceof StorageError) throw err;
    return failure(`the store could not save the ${noun}`, err instanceof Error ? err.message : 'the data adapter failed', FAILURE_CODES.STORE_FAILED);
  }
}
