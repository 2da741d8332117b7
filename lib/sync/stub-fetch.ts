/**
 * Ids-only lists: a store may list stubs (`{_id, last_updated}`, orders also `orderid`) and serve
 * each item by ID (`?id=`), so the service fetches only what changed (the deployed "list by id"
 * mode). A stub whose `last_updated` the sink already holds is current; every other stub (new,
 * changed, or without `last_updated`) is fetched by ID, in batches when the store advertised the
 * batched by-ID read (`BY_IDS_HEADER`). A stub is never stored as the item.
 */
import type { Entity, ItemOf } from '../contract/entities';
import { AdapterError } from '../errors';
import { compareKeys, type SortKey } from '../adapter';
import { StoreBadRequestError, StoreContractError, StoreNotFoundError } from '../client/client-errors';
import { addNormalisations, type InvalidItem, type ItemStub, type NormalisationCounts } from '../client/store-reply';
import { linkedController } from '../client/linked-abort';
import type { RunContext } from './sync-run-context';

/** By-ID reads in flight at once per run, by default. */
export const DEFAULT_BY_ID_CONCURRENCY = 8;
/** Sink look-ups by id in flight at once (when a range scan does not fit). */
const LOOKUP_CONCURRENCY = 8;
/** Rows a range-scan page reads beyond the stubs' count (items the store has moved on since). */
const RANGE_SLACK = 16;

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

/**
 * The `last_updated` the sink holds for an item, or `undefined`. Read from the adapter itself, not
 * through the guard: only this one number is used, and an item the sink holds wrongly is simply
 * fetched again.
 */
async function heldLastUpdated(ctx: RunContext, entity: Entity, id: string, signal: AbortSignal): Promise<unknown> {
  try {
    const held: unknown = await ctx.sink.inner[entity].get(id, { signal });
    return held && typeof held === 'object' ? (held as { last_updated?: unknown }).last_updated : undefined;
  } catch (err) {
    if (signal.aborted) throw signal.reason ?? err;
    throw new AdapterError(`${entity}.get`, { cause: err });
  }
}

/**
 * The sink's `_id → last_updated` for every item whose sort key lies between the stubs' lowest and
 * highest keys: one keyset scan of the sink (its `listKeys`: the bundled adapters never read a
 * document for it) instead of one read per stub. A stub is current exactly when the sink holds its id at
 * its key, and that key is in the range. `undefined` when the range holds far more items than the
 * stubs (a store that does not sort its list): then each stub is looked up by id.
 */
async function heldInRange(ctx: RunContext, entity: Entity, keyed: readonly Required<Pick<ItemStub, '_id' | 'last_updated'>>[], signal: AbortSignal): Promise<Map<string, number> | undefined> {
  let lo = keyed[0];
  let hi = keyed[0];
  for (const k of keyed) {
    if (compareKeys(k, lo) < 0) lo = k;
    if (compareKeys(k, hi) > 0) hi = k;
  }
  const store = ctx.sink.entity(entity);
  const budget = 4 * keyed.length + 1_000;
  // About as many rows as stubs: an adapter without `listKeys` reads whole items, so a wider page costs.
  const limit = keyed.length + RANGE_SLACK;
  const held = new Map<string, number>();
  // Ids are never empty: (lo.last_updated, '') is just before every key at lo.last_updated.
  let after: SortKey = { last_updated: lo.last_updated, _id: '' };
  for (;;) {
    const rows = await store.listKeys({ sortorder: 'asc', limit, after, signal });
    for (const r of rows) {
      if (compareKeys(r, hi) > 0) return held;
      held.set(r._id, r.last_updated);
    }
    if (rows.length < limit) return held;
    if (held.size > budget) return undefined;
    after = rows[rows.length - 1];
  }
}

/** Which stubs need their item: new to the sink, changed, or without a `last_updated` to compare. */
async function staleStubs(ctx: RunContext, entity: Entity, stubs: readonly ItemStub[], signal: AbortSignal): Promise<ItemStub[]> {
  const keyed = stubs.filter((s): s is ItemStub & { last_updated: number } => s.last_updated !== undefined);
  let held: ReadonlyMap<string, unknown> | undefined = keyed.length > 0 ? await heldInRange(ctx, entity, keyed, signal) : new Map();
  if (!held) {
    const found = await mapLimit(keyed, LOOKUP_CONCURRENCY, (s) => heldLastUpdated(ctx, entity, s._id, signal));
    held = new Map(keyed.map((s, i) => [s._id, found[i]]));
  }
  return stubs.filter((s) => s.last_updated === undefined || held.get(s._id) !== s.last_updated);
}

/**
 * Fetches the items of the stubs that are not current in the sink. A 404 or an unreadable answer
 * quarantines that one item (its stub was listed, so the run reports it); any other failure (network,
 * 5xx after retries, auth) stops the run like a failed page, and the next run resumes there.
 *
 * `byIds`: the batch size the store advertised on its list page (`ListPage.byIds`). With it, the
 * stale stubs are read `byIds` at a time (`readByIds`, one request per batch, `byIdConcurrency`
 * batches in flight); without it (a deployed store), one request per id.
 */
export async function resolveStubs<E extends Entity>(ctx: RunContext, entity: E, stubs: readonly ItemStub[], signal: AbortSignal, byIds?: number): Promise<StubResolution<ItemOf<E>>> {
  const normalisations: NormalisationCounts = {};
  if (stubs.length === 0) return { items: [], failed: [], current: 0, normalisations };
  const stale = await staleStubs(ctx, entity, stubs, signal);
  const items: ItemOf<E>[] = [];
  const failed: InvalidItem[] = [];
  const limit = ctx.options.byIdConcurrency ?? DEFAULT_BY_ID_CONCURRENCY;
  // The reads in flight each listen to the signal: give them one of their own, sized for them, so
  // Node does not warn of a listener leak at a high `byIdConcurrency`.
  const batch = linkedController(signal, 2 * limit + 8);
  const readOne = async (stub: ItemStub) => {
    try {
      const read = await ctx.options.client.readById(entity, stub._id, { signal: batch.controller.signal });
      addNormalisations(normalisations, read.normalisations);
      items.push(read.item);
    } catch (err) {
      if (!(err instanceof StoreNotFoundError || err instanceof StoreContractError)) throw err;
      const why = err instanceof StoreNotFoundError ? 'listed, but its by-ID read answered 404' : `its by-ID read: ${err.detail}`;
      failed.push({ entity, index: stub.index, _id: stub._id, error: why });
    }
  };
  const readBatch = async (group: readonly ItemStub[]) => {
    let read;
    try {
      read = await ctx.options.client.readByIds(entity, group.map((s) => s._id), { signal: batch.controller.signal });
    } catch (err) {
      // A store that advertised the batched read but refuses or garbles it: read the batch one by one.
      if (!(err instanceof StoreBadRequestError || err instanceof StoreNotFoundError || err instanceof StoreContractError)) throw err;
      for (const stub of group) await readOne(stub);
      return;
    }
    addNormalisations(normalisations, read.normalisations);
    items.push(...read.items);
    const missing = new Set(read.missing);
    const unanswered = new Set(read.unanswered);
    for (const stub of group) {
      if (missing.has(stub._id)) failed.push({ entity, index: stub.index, _id: stub._id, error: 'listed, but its batched by-ID read found none' });
      else if (unanswered.has(stub._id)) await readOne(stub);
    }
  };
  const groups: ItemStub[][] = [];
  if (byIds !== undefined && byIds > 1 && stale.length > 1) for (let i = 0; i < stale.length; i += byIds) groups.push(stale.slice(i, i + byIds));
  const work = groups.length > 0 ? mapLimit(groups, limit, readBatch) : mapLimit(stale, limit, readOne);
  await work.finally(() => batch.release());
  // Input order, so the sink sees the store's order (mapLimit finishes them in any order).
  const order = new Map(stale.map((s, i) => [s._id, i]));
  items.sort((a, b) => (order.get(a._id) ?? 0) - (order.get(b._id) ?? 0));
  return { items, failed, current: stubs.length - stale.length, normalisations };
}
