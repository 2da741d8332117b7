/**
 * One sync run: copies a connection's products and orders from the store (through the caller)
 * into a sink adapter, page by page, checkpointing after every page.
 */
import { ENTITIES, type Entity } from '../contract/webhook';
import { guardAdapter, type GuardedAdapter } from '../adapter-guard';
import type { StoreAdapter } from '../adapter';
import { InvalidOptionError } from '../errors';
import type { StoreClient } from '../client/store-client';
import type { InvalidItem, WalkAnomaly, WalkPosition } from '../client/catalog-walk';
import { StoreBadRequestError } from '../client/client-errors';
import type { CheckpointStore, EntityProgress, RunCheckpoint, SyncState } from './checkpoint-store';
import { SyncBusyError } from './sync-errors';
import { ReadAhead } from './read-ahead';

export type SyncMode = 'full' | 'incremental';

export interface EntityReport extends EntityProgress {
  /** Distinct items now in the sink. */
  count: number;
  /** The store's last `itemsTotal`. */
  itemsTotal?: number;
  /** Whether the walk reached its end (or, incremental, its boundary). */
  complete: boolean;
}

export interface SyncReport {
  /** Completed, and the store behaved: no invalid item, duplicate or paging anomaly. */
  ok: boolean;
  connection: string;
  jobid: number;
  mode: SyncMode;
  /** This run continued a checkpoint left by an earlier one. */
  resumed: boolean;
  products: EntityReport;
  orders: EntityReport;
  /** HTTP requests (every attempt) and retries, over the whole run including resumed parts. */
  requests: number;
  retries: number;
  durationMs: number;
  /** The first quarantined items (at most 100; counts are in the entity reports). */
  invalidItems: InvalidItem[];
  /** The first anomalies (at most 100). */
  anomalies: Array<WalkAnomaly & { entity: Entity }>;
  /** Why the run stopped early; its checkpoint is kept, the next run resumes from it. */
  error?: { name: string; code?: string; message: string };
}

export type SyncEvent =
  | { type: 'run-start'; connection: string; jobid: number; mode: SyncMode; resumed: boolean }
  | { type: 'page'; entity: Entity; seen: number; itemsTotal: number; written: number; position: WalkPosition | undefined }
  | { type: 'invalid'; entity: Entity; item: InvalidItem }
  | { type: 'anomaly'; entity: Entity; anomaly: WalkAnomaly }
  | { type: 'entity-end'; entity: Entity; report: EntityReport }
  | { type: 'run-end'; report: SyncReport };

export interface SyncRunOptions {
  /** Names the connection's state in the checkpoint store. */
  connectionId: string;
  client: StoreClient;
  sink: StoreAdapter | GuardedAdapter;
  checkpoints: CheckpointStore;
  /** `full` (default): walk everything `asc`. `incremental`: walk `desc` down to the high water. */
  mode?: SyncMode;
  /** Default: both, products first. */
  entities?: readonly Entity[];
  strategy?: 'auto' | 'offset' | 'cursor';
  /** Parallel offset pages (default 1). */
  concurrency?: number;
  signal?: AbortSignal;
  onEvent?: (event: SyncEvent) => void;
  /** Clock (Unix ms), for tests. */
  now?: () => number;
}

const MAX_LISTED = 100;
const running = new WeakMap<CheckpointStore, Set<string>>();

const emptyProgress = (): EntityProgress => ({ seen: 0, written: 0, unchanged: 0, duplicates: 0, invalid: 0, anomalies: 0 });

function errorSummary(err: unknown): { name: string; code?: string; message: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, code: typeof code === 'string' ? code : undefined, message: err.message };
  }
  return { name: 'Error', message: String(err) };
}

function checkOptions(o: SyncRunOptions): void {
  if (typeof o.connectionId !== 'string' || o.connectionId === '' || o.connectionId.length > 200) {
    throw new InvalidOptionError('connectionId', 'must be a non-empty string of at most 200 characters');
  }
  if (!o.client || typeof o.client.walk !== 'function') throw new InvalidOptionError('client', 'must be a StoreClient');
  if (!o.checkpoints || typeof o.checkpoints.load !== 'function' || typeof o.checkpoints.save !== 'function') {
    throw new InvalidOptionError('checkpoints', 'must be a CheckpointStore');
  }
  if (o.mode !== undefined && o.mode !== 'full' && o.mode !== 'incremental') throw new InvalidOptionError('mode', 'must be "full" or "incremental"');
  if (o.entities !== undefined && (!Array.isArray(o.entities) || o.entities.some((e) => !ENTITIES.includes(e)))) {
    throw new InvalidOptionError('entities', 'must list "products" and/or "orders"');
  }
}

/**
 * Runs one sync of a connection. Never rejects for store or sink failures: the report says what
 * happened (`ok`, `error`), and the checkpoint lets the next run resume. Rejects only for invalid
 * options, a checkpoint store failing before the run starts, or `SyncBusyError` when this
 * connection already has a run in this process.
 *
 * @example
 * ```ts
 * const report = await runSync({ connectionId: 'shop-1', client, sink: createMemoryAdapter(), checkpoints: new MemoryCheckpointStore() });
 * console.log(report.products.count, report.orders.count, report.ok);
 * ```
 */
export async function runSync(options: SyncRunOptions): Promise<SyncReport> {
  checkOptions(options);
  const { connectionId, client, checkpoints } = options;
  let busy = running.get(checkpoints);
  if (!busy) running.set(checkpoints, (busy = new Set()));
  if (busy.has(connectionId)) throw new SyncBusyError(connectionId);
  busy.add(connectionId);
  try {
    // The client has validated every item with the contract schema, and the run uses only
    // `changed` of a write's result: the sink's returned items are checked by key only.
    return await execute(options, guardAdapter(options.sink, { validateWrites: 'keys' }));
  } finally {
    busy.delete(connectionId);
  }
}

async function execute(options: SyncRunOptions, sink: GuardedAdapter): Promise<SyncReport> {
  const { connectionId, client, checkpoints, signal } = options;
  const now = options.now ?? Date.now;
  const emit = (e: SyncEvent) => {
    try {
      options.onEvent?.(e);
    } catch {
      // A progress callback must not break the run.
    }
  };
  const started = now();
  const entities = options.entities ?? ENTITIES;
  const stats0 = { requests: client.stats.requests, retries: client.stats.retries };
  const state: SyncState = (await checkpoints.load(connectionId)) ?? { jobid: 0 };
  const resumed = state.run !== undefined;
  const mode: SyncMode = state.run?.mode ?? options.mode ?? 'full';
  const run: RunCheckpoint = state.run ?? {
    jobid: state.jobid + 1,
    mode,
    startedAt: started,
    done: [],
    progress: { products: emptyProgress(), orders: emptyProgress() },
    highWater: {},
    stopBelow: mode === 'incremental' ? { ...state.highWater } : {},
    requests: 0,
    retries: 0,
  };
  const base = { requests: run.requests, retries: run.retries };
  const save = async () => {
    run.requests = base.requests + client.stats.requests - stats0.requests;
    run.retries = base.retries + client.stats.retries - stats0.retries;
    state.jobid = Math.max(state.jobid, run.jobid);
    state.run = run;
    await checkpoints.save(connectionId, state);
  };
  await save(); // the new jobid is persisted before the first request carries it
  emit({ type: 'run-start', connection: connectionId, jobid: run.jobid, mode, resumed });

  const invalidItems: InvalidItem[] = [];
  const anomalies: Array<WalkAnomaly & { entity: Entity }> = [];
  const itemsTotal: Partial<Record<Entity, number>> = {};
  const complete: Partial<Record<Entity, boolean>> = {};
  for (const e of run.done) complete[e] = true;
  let error: SyncReport['error'];
  const entityReport = async (entity: Entity): Promise<EntityReport> => ({
    count: await sink.entity(entity).count({ signal: new AbortController().signal }),
    ...run.progress[entity],
    itemsTotal: itemsTotal[entity],
    complete: Boolean(complete[entity]),
  });

  try {
    for (const entity of entities) {
      if (run.done.includes(entity)) continue;
      const start = run.entity === entity ? run.position : undefined;
      try {
        await syncEntity(entity, start);
      } catch (err) {
        // A cursor from a checkpoint may have expired (store restarted with a new secret): the
        // walk starts that entity again; the sink's upserts make re-reading harmless.
        if (!(start && err instanceof StoreBadRequestError && !signal?.aborted)) throw err;
        await syncEntity(entity, undefined);
      }
      run.done.push(entity);
      run.entity = undefined;
      run.position = undefined;
      complete[entity] = true;
      await save();
      emit({ type: 'entity-end', entity, report: await entityReport(entity) });
    }
  } catch (err) {
    error = errorSummary(signal?.aborted ? signal.reason ?? err : err);
    if (signal?.aborted) error = { name: 'AbortError', message: 'the run was aborted; the next run resumes from its checkpoint' };
  }

  async function syncEntity(entity: Entity, start: WalkPosition | undefined): Promise<void> {
    const progress = run.progress[entity];
    // A walk from the start counts everything again (a restart after an expired cursor, or a crash
    // between the last page and the entity's end): never add to counts of an earlier walk.
    if (!start) Object.assign(progress, emptyProgress());
    const store = sink.entity(entity);
    const boundary = run.stopBelow[entity];
    // Aborts a page fetched ahead when the run stops (a failed write, an error, the boundary).
    // (A linked controller, not AbortSignal.any: the package supports Node 20.0, which lacks it.)
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal!.reason);
    const walk = client.walk(entity, {
      jobid: run.jobid,
      sortorder: mode === 'incremental' ? 'desc' : 'asc',
      strategy: options.strategy,
      concurrency: options.concurrency,
      start,
      signal: stop.signal,
    });
    run.entity = entity;
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const pages = new ReadAhead(walk.pages());
    const writeOptions = () => ({ lastUpdated: 'keep' as const, now: now(), signal: signal ?? new AbortController().signal });
    try {
      for (let next = await pages.next(); !next.done; next = await pages.next()) {
        const page = next.value;
        let items = page.fresh;
        let reachedBoundary = false;
        if (boundary !== undefined) {
          const cut = items.findIndex((item) => (item.last_updated ?? 0) < boundary);
          if (cut >= 0) {
            items = items.slice(0, cut);
            reachedBoundary = true;
          }
        }
        // Page n + 1 is fetched while page n is written; its checkpoint is saved only after the
        // write, so a crash or a failed write resumes after the last page written whole.
        if (!reachedBoundary) {
          pages.prefetch();
          // Let that request leave before writing: a synchronous sink (better-sqlite3) holds the
          // event loop for the whole write, and node:http sends on a later tick.
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        const results = items.length > 0 ? await store.upsertMany(items as never[], writeOptions()) : [];
        // Counted into a copy and committed with the checkpoint, so a crash mid-page counts nothing twice.
        const p = { ...progress };
        let hw = run.highWater[entity];
        for (let i = 0; i < items.length; i++) {
          p.seen++;
          if (results[i].changed) p.written++;
          else p.unchanged++;
          hw = Math.max(hw ?? 0, items[i].last_updated ?? 0);
        }
        for (const item of page.invalid) {
          p.invalid++;
          if (invalidItems.length < MAX_LISTED) invalidItems.push(item);
          emit({ type: 'invalid', entity, item });
        }
        for (const anomaly of page.anomalies) {
          if (anomaly.kind === 'duplicate') p.duplicates++;
          else p.anomalies++;
          if (anomalies.length < MAX_LISTED) anomalies.push({ ...anomaly, entity });
          emit({ type: 'anomaly', entity, anomaly });
        }
        Object.assign(progress, p);
        if (hw !== undefined) run.highWater[entity] = hw;
        run.position = reachedBoundary ? undefined : page.position;
        itemsTotal[entity] = page.paging.itemsTotal;
        await save();
        emit({ type: 'page', entity, seen: progress.seen, itemsTotal: page.paging.itemsTotal, written: progress.written, position: run.position });
        if (reachedBoundary) break;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stop.abort();
      await pages.close();
    }
    // A total mismatch is noted when the walk ends, after its last page.
    for (const anomaly of walk.summary.anomalies) {
      if (anomaly.kind === 'items-total-mismatch') {
        progress.anomalies++;
        if (anomalies.length < MAX_LISTED) anomalies.push({ ...anomaly, entity });
        emit({ type: 'anomaly', entity, anomaly });
      }
    }
  }

  const products = await entityReport('products');
  const orders = await entityReport('orders');
  if (!error) {
    // The run is over: fold its high water in and drop the checkpoint.
    const highWater = { ...state.highWater };
    for (const e of ENTITIES) {
      const hw = run.highWater[e];
      if (hw !== undefined) highWater[e] = Math.max(highWater[e] ?? 0, hw);
    }
    run.requests = base.requests + client.stats.requests - stats0.requests;
    run.retries = base.retries + client.stats.retries - stats0.retries;
    await checkpoints.save(connectionId, { jobid: Math.max(state.jobid, run.jobid), highWater });
  } else {
    await save().catch(() => undefined);
  }
  const troubles = (r: EntityReport) => r.invalid + r.duplicates + r.anomalies;
  const report: SyncReport = {
    ok: !error && troubles(products) + troubles(orders) === 0,
    connection: connectionId,
    jobid: run.jobid,
    mode,
    resumed,
    products,
    orders,
    requests: run.requests,
    retries: run.retries,
    durationMs: now() - started,
    invalidItems,
    anomalies,
    ...(error ? { error } : {}),
  };
  emit({ type: 'run-end', report });
  return report;
}
