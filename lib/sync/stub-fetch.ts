/**
 * Ids-only lists: a store may list stubs (`{_id, last_updated}`, orders also `orderid`) and serve
 * each item by ID (`?id=`), so the service fetches only what changed (the deployed "list by id"
 * mode). A stub whose `last_updated` the sink already holds is current; every other stub (new,
 * changed, or without `last_updated`) is fetched by ID. A stub is never stored as the item.
 */
import type { Entity, ItemOf } from '../contract/webhook';
import { StoreContractError, StoreNotFoundError } from '../client/client-errors';
import { addNormalisations, type InvalidItem, type ItemStub, type NormalisationCounts } from '../client/store-reply';
import type { RunContext } from './sync-run-context';

/** By-ID reads in flight at once per run, by default. */
export const DEFAULT_BY_ID_CONCURRENCY = 8;
/** Sink look-ups in flight at once. */
const LOOKUP_CONCURRENCY = 16;

export interface StubResolution<T> {
  /** The items fetched by ID (valid), to write. */
  readonly items: T[];
  /** Stubs whose item could not be read (gone by the time it was asked for, or invalid): quarantined. */
  readonly failed: InvalidItem[];
  /** Stubs the sink already held at the same `last_updated`: nothing fetched. */
  readonly current: number;
  readonly normalisations: NormalisationCounts;
}

/** Runs `fn` over `items`, at most `limit` at a time; results in input order. Rejects with the first error. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Which stubs need their item: new to the sink, changed, or without a `last_updated` to compare. */
async function staleStubs(ctx: RunContext, entity: Entity, stubs: readonly ItemStub[], signal: AbortSignal): Promise<ItemStub[]> {
  const store = ctx.sink.entity(entity);
  const held = await mapLimit(stubs, LOOKUP_CONCURRENCY, (s) => (s.last_updated === undefined ? Promise.resolve(undefined) : store.get(s._id, { signal })));
  return stubs.filter((s, i) => s.last_updated === undefined || held[i]?.last_updated !== s.last_updated);
}

/**
 * Fetches the items of the stubs that are not current in the sink. A 404 or an unreadable answer
 * quarantines that one item (its stub was listed, so the run reports it); any other failure (network,
 * 5xx after retries, auth) stops the run like a failed page, and the next run resumes there.
 */
export async function resolveStubs<E extends Entity>(ctx: RunContext, entity: E, stubs: readonly ItemStub[], signal: AbortSignal): Promise<StubResolution<ItemOf<E>>> {
  const normalisations: NormalisationCounts = {};
  if (stubs.length === 0) return { items: [], failed: [], current: 0, normalisations };
  const stale = await staleStubs(ctx, entity, stubs, signal);
  const items: ItemOf<E>[] = [];
  const failed: InvalidItem[] = [];
  const limit = ctx.options.byIdConcurrency ?? DEFAULT_BY_ID_CONCURRENCY;
  await mapLimit(stale, limit, async (stub) => {
    try {
      const read = await ctx.options.client.readById(entity, stub._id, { signal });
      addNormalisations(normalisations, read.normalisations);
      items.push(read.item);
    } catch (err) {
      if (!(err instanceof StoreNotFoundError || err instanceof StoreContractError)) throw err;
      const why = err instanceof StoreNotFoundError ? 'listed, but its by-ID read answered 404' : `its by-ID read: ${err.detail}`;
      failed.push({ entity, index: stub.index, _id: stub._id, error: why });
    }
  });
  // Input order, so the sink sees the store's order (mapLimit finishes them in any order).
  const order = new Map(stale.map((s, i) => [s._id, i]));
  items.sort((a, b) => (order.get(a._id) ?? 0) - (order.get(b._id) ?? 0));
  return { items, failed, current: stubs.length - stale.length, normalisations };
}
