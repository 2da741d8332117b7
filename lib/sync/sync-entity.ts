/**
 * One entity of a sync run: walk the store's list, and for each page write its items into the sink
 * (fetching the new or changed items of an ids-only list by ID first), count what happened, and
 * save the checkpoint. Page n + 1 is fetched while page n is written (`ReadAhead`).
 */
import type { Entity, ItemOf } from '../contract/entities';
import type { WalkPage, WalkPosition, WalkSummary } from '../client/catalog-walk';
import { addNormalisations, type InvalidItem, type ItemStub } from '../client/store-reply';
import { linkedController } from '../client/linked-abort';
import type { EntityProgress } from './checkpoint-store';
import { ReadAhead } from './read-ahead';
import { emptyProgress, type RunContext } from './sync-run-context';
import { resolveStubs } from './stub-fetch';
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageError } from '../errors';
import { backoffDelay, retryPolicy } from '../http/retry';

/** A page as far as the run takes it: cut at the incremental boundary. */
interface PagePart<T> {
  readonly page: WalkPage<T>;
  readonly items: T[];
  readonly stubs: ItemStub[];
  /** The page crossed the incremental boundary: the walk stops after it. */
  readonly reachedBoundary: boolean;
}

/** Keeps the entries at or above `boundary` (a desc walk: everything after the first one below it is older). */
function cutAtBoundary<T extends { last_updated?: number }>(page: WalkPage<T>, boundary: number | undefined): PagePart<T> {
  if (boundary === undefined) return { page, items: page.fresh, stubs: page.freshStubs, reachedBoundary: false };
  const below = (x: { last_updated?: number }) => (x.last_updated ?? 0) < boundary;
  const itemCut = page.fresh.findIndex(below);
  const stubCut = page.freshStubs.findIndex(below);
  return {
    page,
    items: itemCut < 0 ? page.fresh : page.fresh.slice(0, itemCut),
    stubs: stubCut < 0 ? page.freshStubs : page.freshStubs.slice(0, stubCut),
    reachedBoundary: itemCut >= 0 || stubCut >= 0,
  };
}

/**
 * Walks one entity from `start` (or its beginning) to its end, or to the incremental boundary.
 * Throws what the walk or the sink throws; the checkpoint then holds the last page written whole.
 */
export async function syncEntity<E extends Entity>(ctx: RunContext, entity: E, start: WalkPosition | undefined): Promise<void> {
  const { run, options } = ctx;
  // A walk from the start counts everything again (a restart after an expired cursor, or a crash
  // between the last page and the entity's end): never add to counts of an earlier walk.
  if (!start) run.progress[entity] = emptyProgress();
  // Aborts a page fetched ahead when the run stops (a failed write, an error, the boundary).
  const stop = linkedController(ctx.signal);
  const walk = options.client.walk(entity, {
    jobid: run.jobid,
    sortorder: ctx.mode === 'incremental' ? 'desc' : 'asc',
    strategy: options.strategy,
    concurrency: options.concurrency,
    start,
    signal: stop.controller.signal,
  });
  run.entity = entity;
  const pages = new ReadAhead(walk.pages());
  try {
    for (let next = await pages.next(); !next.done; next = await pages.next()) {
      const part = cutAtBoundary(next.value, run.stopBelow[entity]);
      // Page n + 1 is fetched while page n is written; its checkpoint is saved only after the
      // write, so a crash or a failed write resumes after the last page written whole.
      if (!part.reachedBoundary) {
        pages.prefetch();
        // Let that request leave before writing: a synchronous sink (better-sqlite3) holds the
        // event loop for the whole write, and node:http sends on a later tick.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await applyPage(ctx, entity, part);
      if (part.reachedBoundary) break;
    }
  } finally {
    stop.release();
    stop.controller.abort();
    await pages.close();
  }
  noteWalkEnd(ctx, entity, walk.summary);
}

/** Writes one page's items (and the fetched items of its stubs), then counts and checkpoints it. */
async function applyPage<E extends Entity>(ctx: RunContext, entity: E, part: PagePart<ItemOf<E>>): Promise<void> {
  const { run } = ctx;
  const signal = ctx.signal ?? new AbortController().signal;
  const fetched = await resolveStubs(ctx, entity, part.stubs, signal, part.page.byIds);
  const items = fetched.items.length ? [...part.items, ...fetched.items] : part.items;
  const store = ctx.sink.entity(entity);
  const results = items.length > 0 ? await retryingSink(signal, () => store.upsertMany(items, { lastUpdated: 'keep', now: ctx.now(), signal })) : [];
  // Counted into a copy and committed with the checkpoint, so a crash mid-page counts nothing twice.
  const before = run.progress[entity];
  const p: Required<EntityProgress> = { ...before, stubs: before.stubs ?? 0, fetchedById: before.fetchedById ?? 0, normalisations: { ...before.normalisations } };
  // A stub whose item could not be read is counted invalid, not seen.
  p.seen += part.items.length + part.stubs.length - fetched.failed.length;
  p.stubs += part.stubs.length;
  p.fetchedById += fetched.items.length + fetched.failed.length;
  p.unchanged += fetched.current;
  for (const r of results) r.changed ? p.written++ : p.unchanged++;
  addNormalisations(addNormalisations(p.normalisations, part.page.normalisations), fetched.normalisations);
  let hw = run.highWater[entity];
  for (const x of [...part.items, ...part.stubs]) hw = Math.max(hw ?? 0, x.last_updated ?? 0);
  quarantine(ctx, entity, p, [...part.page.invalid, ...fetched.failed]);
  for (const anomaly of part.page.anomalies) {
    if (anomaly.kind === 'duplicate') p.duplicates++;
    else p.anomalies++;
    ctx.listAnomaly(entity, anomaly);
  }
  run.progress[entity] = p;
  if (hw !== undefined) run.highWater[entity] = hw;
  const position = part.reachedBoundary ? undefined : part.page.position;
  run.positions ??= {};
  if (position) run.positions[entity] = position;
  else delete run.positions[entity];
  // A placeholder or a value that is not a count is no total: the report leaves it out.
  ctx.itemsTotal[entity] = part.page.totalKnown ? part.page.paging.itemsTotal : undefined;
  await ctx.save();
  ctx.emit({ type: 'page', entity, seen: p.seen, itemsTotal: part.page.paging.itemsTotal, totalKnown: part.page.totalKnown, written: p.written, position });
}

/**
 * Waits before each new attempt of a page write whose sink was unreachable or locked: about 15 s in
 * all, so a database restart or a network blip does not stop a long run. Upserts with
 * `lastUpdated: 'keep'` are idempotent, so a write that did commit before its connection broke is
 * harmless to repeat. Other failures (disk full, read-only, a bug) stop the run at once.
 */
const SINK_RETRY = retryPolicy({ limit: 5, delay: (n) => 500 * 2 ** (n - 1), backoffLimit: 8_000, jitter: false });

async function retryingSink<R>(signal: AbortSignal, write: () => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      const transient = err instanceof StorageError && (err.failure === 'unreachable' || err.failure === 'locked');
      if (!transient || attempt > SINK_RETRY.limit || signal.aborted) throw err;
      await sleep(backoffDelay(SINK_RETRY, attempt), undefined, { signal });
    }
  }
}

function quarantine(ctx: RunContext, entity: Entity, p: EntityProgress, invalid: readonly InvalidItem[]): void {
  for (const item of invalid) {
    p.invalid++;
    ctx.listInvalid(entity, item);
  }
}

/** What the walk notes only at its end: a total that did not match, a placeholder total. */
function noteWalkEnd(ctx: RunContext, entity: Entity, summary: WalkSummary): void {
  const progress = ctx.run.progress[entity];
  for (const anomaly of summary.anomalies) {
    if (anomaly.kind !== 'items-total-mismatch') continue;
    progress.anomalies++;
    ctx.listAnomaly(entity, anomaly);
  }
  const placeholder = summary.normalisations['items-total-placeholder'];
  if (placeholder) progress.normalisations = addNormalisations({ ...progress.normalisations }, { 'items-total-placeholder': placeholder });
}
