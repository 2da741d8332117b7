/**
 * Seeding a store with the demo catalog: what `storebridge serve --demo N`, `storebridge demo` and
 * `storebridge reverse-service --demo N` run, on any adapter.
 */
import { setMaxListeners } from 'node:events';
import type { StoreAdapter, WriteOptions } from '../adapter';
import { guardAdapter, type GuardedEntityStore } from '../adapter-guard';
import type { Entity, ItemOf } from '../contract/entities';
import { demoOrder, demoOrderCount, demoProduct } from './demo-data';

/** Demo items generated and written per `upsertMany` call while seeding. */
const SEED_BATCH = 2000;

/** Concurrent `get` calls while seeding a store that already holds items. */
const SEED_LOOKUPS = 16;

/**
 * Writes the demo catalog (`demoCatalog(count)`: products first, then orders) through the guarded
 * adapter's `upsertMany` (the adapter's own batch write when it has one, else `upsert` per item),
 * keeping the demo's own `last_updated` values. Returned items are checked by key only: the demo
 * data is valid by construction. Items are generated and written in batches of 2,000, yielding to
 * the event loop between batches, so memory stays flat and a signal handler can run; `signal`
 * stops the seed between batches (rejecting with its reason).
 *
 * Only items the store does not hold yet are written: re-run on a persistent store (`sqlite:FILE`,
 * a database), the seed adds what is missing and never overwrites an item, so an edit made through
 * the write webhooks survives and no `last_updated` goes back in time. (An empty store, the usual
 * case, skips the lookups.)
 */
export async function seedDemo(adapter: StoreAdapter, count: number, signal?: AbortSignal): Promise<{ products: number; orders: number }> {
  const guarded = guardAdapter(adapter, { validateWrites: 'keys' });
  const stop = signal ?? new AbortController().signal;
  const options: WriteOptions = { lastUpdated: 'keep', now: Date.now(), signal: stop };
  const orderCount = demoOrderCount(count);
  const seed = async <E extends Entity>(entity: E, total: number, make: (i: number) => ItemOf<E>) => {
    const store = guarded.entity(entity);
    const empty = total === 0 || (await store.count({ signal: stop })) === 0;
    for (let start = 0; start < total; start += SEED_BATCH) {
      stop.throwIfAborted();
      let items = Array.from({ length: Math.min(SEED_BATCH, total - start) }, (_, k) => make(start + k));
      if (!empty) items = await missingOnly(store, items, stop);
      if (items.length > 0) await store.upsertMany(items, options);
      // Let timers, I/O and signal handlers run: adapters like SQLite's answer synchronously.
      await new Promise((resolve) => setImmediate(resolve));
    }
    stop.throwIfAborted();
  };
  await seed('products', count, (i) => demoProduct(i));
  await seed('orders', orderCount, (i) => demoOrder(i, count));
  return { products: count, orders: orderCount };
}

/** The items whose `_id` the store does not hold. */
async function missingOnly<E extends Entity>(store: GuardedEntityStore<E>, items: ItemOf<E>[], signal: AbortSignal): Promise<ItemOf<E>[]> {
  // The lookups share one signal, each listening to it while it runs: give them their own, with
  // room for that many listeners (Node warns past 10), following the caller's.
  const lookups = new AbortController();
  setMaxListeners(4 * SEED_LOOKUPS, lookups.signal);
  const forward = () => lookups.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  const present = new Array<boolean>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      present[i] = (await store.get(items[i]._id, { signal: lookups.signal })) !== undefined;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(SEED_LOOKUPS, items.length) }, worker));
  } finally {
    signal.removeEventListener('abort', forward);
  }
  return items.filter((_, i) => !present[i]);
}
