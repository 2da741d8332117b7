/**
 * One sync run: copies a connection's products and orders from the store (through the caller)
 * into a sink adapter, page by page, checkpointing after every page. The steps: open the run
 * (`RunContext.open`: resume a checkpoint or start the next job), walk each entity
 * (`syncEntity`), close the run (fold the high water in, build the report).
 */
import { ENTITIES, type Entity } from '../contract/entities';
import { guardAdapter, type GuardedAdapter } from '../adapter-guard';
import type { StoreAdapter } from '../adapter';
import { z } from 'zod';
import { AdapterError, InvalidOptionError } from '../errors';
import { defineOptions, opt } from '../options';
import { messageChain } from '../logger';
import type { StoreClient } from '../client/store-client';
import type { WalkAnomaly, WalkPosition } from '../client/catalog-walk';
import { StoreAuthError, StoreBadRequestError } from '../client/client-errors';
import { addNormalisations, type InvalidItem, type NormalisationCounts } from '../client/store-reply';
import type { CheckpointStore, EntityProgress } from './checkpoint-store';
import { SyncBusyError } from './sync-errors';
import { RunContext, type AbandonedJob, type ResumeInfo } from './sync-run-context';
import { syncEntity } from './sync-entity';

export type { SyncMode, EntityReport, SyncReport, RunError, SyncEvent, SyncRunOptions } from './sync-types';
import type { EntityReport, SyncReport, RunError, SyncRunOptions } from './sync-types';

const running = new WeakMap<CheckpointStore, Set<string>>();

function errorSummary(err: unknown): RunError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const { code, status, retryable } = err as { code?: unknown; status?: unknown; retryable?: unknown };
  return {
    name: err.name,
    code: typeof code === 'string' ? code : undefined,
    // The guard's AdapterError keeps the sink's failure as its cause (hidden from a store's answers);
    // the run's report is the operator's, so it says what failed.
    message: err instanceof AdapterError ? messageChain(err) : err.message,
    ...(typeof status === 'number' ? { status } : {}),
    ...(typeof retryable === 'boolean' ? { retryable } : {}),
  };
}

/**
 * `runSync`'s options, through the toolkit (`lib/options.ts`). The walk's own options (`strategy`,
 * `concurrency`) and the sink are checked where they are used (the client's walk, `guardAdapter`).
 */
const CONNECTION_ID = 'must be a non-empty string of at most 200 characters';
const checkOptions = defineOptions('runSync', {
  connectionId: z.string({ error: CONNECTION_ID }).min(1, CONNECTION_ID).max(200, CONNECTION_ID),
  client: opt.object<StoreClient>('a StoreClient', (c) => typeof (c as Partial<StoreClient>).walk === 'function'),
  sink: z.custom<StoreAdapter | GuardedAdapter>(() => true),
  checkpoints: opt.object<CheckpointStore>('a CheckpointStore', (c) => typeof (c as Partial<CheckpointStore>).load === 'function' && typeof (c as Partial<CheckpointStore>).save === 'function'),
  mode: opt.oneOf(['full', 'incremental']).optional(),
  entities: z.custom<Entity[]>((v) => Array.isArray(v) && v.every((e) => (ENTITIES as readonly unknown[]).includes(e)), { error: `must list ${ENTITIES.map((e) => `"${e}"`).join(', ').replace(/, ([^,]*)$/, ' and/or $1')}` }).optional(),
  maxResumes: opt.int({ min: 0, max: 1000 }).optional(),
  strategy: z.custom<SyncRunOptions['strategy']>(() => true).optional(),
  concurrency: z.custom<number>(() => true).optional(),
  byIdConcurrency: opt.int({ min: 1, max: 64 }).optional(),
  signal: z.custom<AbortSignal>(() => true).optional(),
  onEvent: opt.fn<NonNullable<SyncRunOptions['onEvent']>>().optional(),
  now: opt.fn<() => number>().optional(),
});

/** The entities a run walks: those asked for, each one the client must cover; else those the client covers. */
function entitiesOf(o: SyncRunOptions): readonly Entity[] {
  const covered = o.client.config?.entities ?? ENTITIES;
  if (o.entities === undefined) return covered;
  const missing = o.entities.find((e) => !covered.includes(e));
  if (missing) throw new InvalidOptionError('entities', `"${missing}" is not covered by the client (give its list URL, or a base URL)`);
  return ENTITIES.filter((e) => o.entities!.includes(e));
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

/**
 * Walks each entity in turn. An entity that fails does not hold the others back: its error is
 * kept (the report's `error` is the first one) and the next entity is walked. Only an abort, a
 * refused key (the same key goes to every entity) or a checkpoint that cannot be saved stops the
 * run at once.
 */
async function execute(options: SyncRunOptions, sink: GuardedAdapter): Promise<SyncReport> {
  const ctx = await RunContext.open(options, sink, entitiesOf(options));
  await ctx.save(); // the new jobid is persisted before the first request carries it
  ctx.emit({ type: 'run-start', connection: options.connectionId, jobid: ctx.run.jobid, mode: ctx.mode, resumed: ctx.resumed });
  let error: SyncReport['error'];
  for (const entity of ctx.entities) {
    try {
      await walkEntity(ctx, entity);
    } catch (err) {
      if (options.signal?.aborted) {
        error = { name: 'AbortError', message: 'the run was aborted; the next run resumes from its checkpoint' };
        break;
      }
      ctx.errors[entity] = errorSummary(err);
      error ??= ctx.errors[entity];
      // The same key goes to every entity, and a checkpoint that cannot be saved cannot be resumed.
      if (ctx.saveFailed || err instanceof StoreAuthError) break;
    }
  }
  return closeRun(ctx, error);
}

/**
 * Walks one entity: an unfinished one from its saved position, any other from its start — also
 * one the resumed job had finished, so a resume never serves that entity's data frozen at the
 * job's first run (in incremental mode that walk stops at the entity's latest high water). Then
 * marks it done, folds its high water in and reports it.
 */
async function walkEntity(ctx: RunContext, entity: Entity): Promise<void> {
  const { run } = ctx;
  const start = run.positions?.[entity];
  if (run.done.includes(entity)) {
    run.done = run.done.filter((e) => e !== entity);
    const hw = ctx.state.highWater?.[entity];
    if (ctx.mode === 'incremental' && hw !== undefined) run.stopBelow[entity] = hw;
  }
  try {
    await syncEntity(ctx, entity, start);
  } catch (err) {
    // A cursor from a checkpoint may have expired (store restarted with a new secret): the
    // walk starts that entity again; the sink's upserts make re-reading harmless.
    if (!(start && err instanceof StoreBadRequestError && !ctx.signal?.aborted)) throw err;
    await syncEntity(ctx, entity, undefined);
  }
  run.done.push(entity);
  run.entity = undefined;
  if (run.positions) delete run.positions[entity];
  ctx.complete[entity] = true;
  ctx.foldHighWater([entity]);
  await ctx.save();
  ctx.emit({ type: 'entity-end', entity, report: await ctx.entityReport(entity) });
}

/** Saves the end of the run (or, after an error, its checkpoint) and builds the report. */
async function closeRun(ctx: RunContext, error: SyncReport['error']): Promise<SyncReport> {
  // A sink that fails here too (the database went away) stops the run, with the report.
  const countFailed = (err: unknown) => void (error ??= errorSummary(err));
  const reports = {} as Record<Entity, EntityReport>;
  for (const entity of ENTITIES) reports[entity] = await ctx.entityReport(entity, countFailed);
  if (!error) await ctx.saveFinished();
  else await ctx.save().catch(() => undefined);
  const troubles = (r: EntityProgress) => r.invalid + r.duplicates + r.anomalies;
  const all = ENTITIES.map((e) => reports[e]);
  const report: SyncReport = {
    ok: !error && all.every((r) => troubles(r) === 0),
    connection: ctx.options.connectionId,
    jobid: ctx.run.jobid,
    mode: ctx.mode,
    resumed: ctx.resumed,
    ...(ctx.resume ? { resume: ctx.resume } : {}),
    ...(ctx.abandoned ? { abandoned: ctx.abandoned } : {}),
    entities: [...ctx.entities],
    ...reports,
    requests: ctx.run.requests,
    retries: ctx.run.retries,
    durationMs: ctx.now() - ctx.started,
    invalidItems: ctx.invalidItems,
    anomalies: ctx.anomalies,
    normalisations: all.reduce((sum, r) => addNormalisations(sum, r.normalisations), {}),
    ...(error ? { error } : {}),
  };
  ctx.emit({ type: 'run-end', report });
  return report;
}
