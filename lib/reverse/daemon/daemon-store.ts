/**
 * Storing one pulled item in the store's adapter, and the reports the daemon sends about it. The item
 * is read with the contract's tolerant `readItem` (numbers or strings, epoch-ms dates, numeric ids;
 * an order with no `_id` is keyed by `orderid`). An item that arrives with no `_id`, of an entity
 * whose registry entry says `storeAssignsId` (orders), is new to the store: it is inserted under a
 * new store id derived from its natural key (`newStoreId`), so that a re-delivery finds it instead of
 * inserting it twice, and `succeded` reports that id. A replaced item keeps what only the webhook
 * form has (the registry's `keepWebhookOnly`).
 */
import { createHash } from 'node:crypto';
import type { GuardedAdapter } from '../../adapter-guard';
import { entityOf } from '../../contract/entities';
import { readItem } from '../../contract/item-reader';
import type { StorageFailureReport } from '../../contract/messages';
import type { Entity, ItemOf } from '../../contract/entities';
import { StorageError } from '../../errors';
import { FAILURE_CODES } from './daemon-options';

export type StoreOutcome<E extends Entity> =
  | { readonly ok: true; readonly item: ItemOf<E>; /** Set when the store's id is not the pulled item's `_id`. */ readonly storeId?: string }
  | { readonly ok: false; readonly report: StorageFailureReport };

/**
 * The store id of a pulled item that had no `_id` (an entity whose `storeAssignsId`: a deployed
 * service's new order): its noun and 24 hex digits of the SHA-256 of its natural key (`order-…`),
 * so that a re-delivery of the same item finds it instead of inserting it twice.
 */
export function newStoreId(entity: Entity, naturalKey: string): string {
  return `${entityOf(entity).noun}-${createHash('sha256').update(naturalKey, 'utf8').digest('hex').slice(0, 24)}`;
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
  const d = entityOf(entity);
  if (!hadId && d.storeAssignsId) {
    const key = (item as Record<string, unknown>)[d.naturalKey];
    storeId = newStoreId(entity, typeof key === 'string' && key !== '' ? key : item._id);
    item = { ...item, _id: storeId };
  }
  const store = adapter.entity(entity);
  try {
    const existing = await store.get(item._id, { signal: options.signal });
    const merged = existing ? d.keepWebhookOnly(existing, item) : item;
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
