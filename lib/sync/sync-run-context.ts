/**
 * The state one sync run carries from step to step: the connection's saved state and the run's
 * checkpoint, the request counters, the lists of quarantined items and anomalies, and the one way
 * to save and to emit. `sync-run.ts` opens and closes it; `sync-entity.ts` fills it page by page.
 */
import type { Entity } from '../contract/entities';
import { perEntity } from '../contract/entities';
import type { GuardedAdapter } from '../adapter-guard';
import type { WalkAnomaly } from '../client/catalog-walk';
import { totalNormalisations, type InvalidItem } from '../client/store-reply';
import type { EntityProgress, RunCheckpoint, SyncState } from './checkpoint-store';
import type { AbandonedJob, EntityReport, ResumeInfo, RunError, SyncEvent, SyncMode, SyncRunOptions } from './sync-types';

export type { AbandonedJob, ResumeInfo } from './sync-types';

/** The first quarantined items and anomalies a report lists (counts are in the entity reports). */
export const MAX_LISTED = 100;

/** Resumed runs of one job that may fail before the next run starts a fresh job (`maxResumes`). */
export const DEFAULT_MAX_RESUMES = 3;

/** An entity report's `count` when the sink could not be counted (the run stopped on a sink failure). */
export const UNKNOWN_COUNT = -1;

export const emptyProgress = (): EntityProgress => ({ seen: 0, written: 0, unchanged: 0, duplicates: 0, invalid: 0, anomalies: 0, stubs: 0, fetchedById: 0, normalisations: {} });

export class RunContext {
  readonly invalidItems: InvalidItem[] = [];
  readonly anomalies: Array<WalkAnomaly & { entity: Entity }> = [];
  /** The store's last `itemsTotal` per entity. */
  readonly itemsTotal: Partial<Record<Entity, number>> = {};
  /** Entities whose walk reached its end in this run. */
  readonly complete: Partial<Record<Entity, boolean>> = {};
  /** Why each entity that failed in this run stopped. */
  readonly errors: Partial<Record<Entity, RunError>> = {};
  /** A checkpoint save failed: the run stops (the next run could not resume consistently). */
  saveFailed = false;
  private readonly stats0: { requests: number; retries: number };
  /** Requests and retries of the run's earlier parts (a resumed run). */
  private readonly base: { requests: number; retries: number };

  private constructor(
    readonly options: SyncRunOptions,
    readonly sink: GuardedAdapter,
    readonly state: SyncState,
    readonly run: RunCheckpoint,
    /** The entities this run walks: the connection's (`options.entities`, else those its client covers). */
    readonly entities: readonly Entity[],
    readonly started: number,
    /** Set when this run continues a checkpoint. */
    readonly resume: ResumeInfo | undefined,
    /** Set when this run set a checkpoint aside to start a fresh job. */
    readonly abandoned: AbandonedJob | undefined,
  ) {
    this.stats0 = { ...options.client.stats };
    this.base = { requests: run.requests, retries: run.retries };
  }

  /**
   * Loads the connection's state and resumes its checkpoint (same job, same mode, each unfinished
   * entity from its position); or starts job `last + 1`, also when the checkpoint is of another
   * mode than the one asked for, or when `maxResumes` resumed runs have not completed it.
   */
  static async open(options: SyncRunOptions, sink: GuardedAdapter, entities: readonly Entity[]): Promise<RunContext> {
    const started = (options.now ?? Date.now)();
    const state: SyncState = (await options.checkpoints.load(options.connectionId)) ?? { jobid: 0 };
    const saved = state.run;
    const since = (run: RunCheckpoint) => new Date(run.startedAt).toISOString();
    const setAside = saved && whySetAside(saved, options);
    if (saved && !setAside) {
      if (saved.position && saved.entity) saved.positions = { [saved.entity]: saved.position, ...saved.positions };
      delete saved.position;
      saved.resumes = (saved.resumes ?? 0) + 1;
      return new RunContext(options, sink, state, saved, entities, started, { jobid: saved.jobid, since: since(saved), resumes: saved.resumes }, undefined);
    }
    const mode: SyncMode = options.mode ?? 'full';
    const run: RunCheckpoint = {
      jobid: state.jobid + 1,
      mode,
      startedAt: started,
      done: [],
      positions: {},
      progress: perEntity(() => emptyProgress()),
      highWater: {},
      stopBelow: mode === 'incremental' ? { ...state.highWater } : {},
      requests: 0,
      retries: 0,
    };
    const abandoned = saved && setAside ? { jobid: saved.jobid, since: since(saved), reason: setAside } : undefined;
    return new RunContext(options, sink, state, run, entities, started, undefined, abandoned);
  }

  /** Whether this run continues a checkpoint left by an earlier one. */
  get resumed(): boolean {
    return this.resume !== undefined;
  }

  get mode(): SyncMode {
    return this.run.mode;
  }

  get signal(): AbortSignal | undefined {
    return this.options.signal;
  }

  now(): number {
    return (this.options.now ?? Date.now)();
  }

  emit(event: SyncEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A progress callback must not break the run.
    }
  }

  /** Brings the run's request and retry counts up to date (this part's plus the earlier parts'). */
  countRequests(): void {
    const { stats } = this.options.client;
    this.run.requests = this.base.requests + stats.requests - this.stats0.requests;
    this.run.retries = this.base.retries + stats.retries - this.stats0.retries;
  }

  /** Saves the checkpoint (the state with the run in progress). A failure stops the run (`saveFailed`). */
  async save(): Promise<void> {
    this.countRequests();
    this.state.jobid = Math.max(this.state.jobid, this.run.jobid);
    this.state.run = this.run;
    try {
      await this.options.checkpoints.save(this.options.connectionId, this.state);
    } catch (err) {
      this.saveFailed = true;
      throw err;
    }
  }

  /**
   * Folds the run's high water of `entities` into the state: an entity whose walk is complete
   * moves its boundary at once, whatever the others do (an entity that keeps failing must not
   * hold the others' incremental boundary back).
   */
  foldHighWater(entities: readonly Entity[]): void {
    const highWater = { ...this.state.highWater };
    for (const e of entities) {
      const hw = this.run.highWater[e];
      if (hw !== undefined) highWater[e] = Math.max(highWater[e] ?? 0, hw);
    }
    this.state.highWater = highWater;
  }

  /** The run is over: folds its high water into the state and drops the checkpoint. */
  async saveFinished(): Promise<void> {
    this.foldHighWater(this.entities);
    this.countRequests();
    await this.options.checkpoints.save(this.options.connectionId, { jobid: Math.max(this.state.jobid, this.run.jobid), highWater: this.state.highWater ?? {} });
  }

  listInvalid(entity: Entity, item: InvalidItem): void {
    if (this.invalidItems.length < MAX_LISTED) this.invalidItems.push(item);
    this.emit({ type: 'invalid', entity, item });
  }

  listAnomaly(entity: Entity, anomaly: WalkAnomaly): void {
    if (this.anomalies.length < MAX_LISTED) this.anomalies.push({ ...anomaly, entity });
    this.emit({ type: 'anomaly', entity, anomaly });
  }

  /**
   * The entity's part of the report. With `onCountFailure`, a sink that cannot be counted (it is
   * down: the run's error is usually that very failure) gives `count: UNKNOWN_COUNT` and calls it,
   * instead of rejecting: a stopped run still reports what it did.
   */
  async entityReport(entity: Entity, onCountFailure?: (err: unknown) => void): Promise<EntityReport> {
    const progress = this.entities.includes(entity) ? this.run.progress[entity] : emptyProgress();
    const error = this.errors[entity];
    let count: number;
    try {
      count = await this.sink.entity(entity).count({ signal: new AbortController().signal });
    } catch (err) {
      if (!onCountFailure) throw err;
      onCountFailure(err);
      count = UNKNOWN_COUNT;
    }
    return {
      count,
      ...progress,
      normalised: totalNormalisations(progress.normalisations ?? {}),
      itemsTotal: this.itemsTotal[entity],
      complete: Boolean(this.complete[entity]),
      ...(error ? { error } : {}),
    };
  }
}

/** Why a saved checkpoint is not resumed (a fresh job starts instead), or `undefined` to resume it. */
function whySetAside(run: RunCheckpoint, options: SyncRunOptions): string | undefined {
  if (options.mode !== undefined && options.mode !== run.mode) return `mode ${options.mode} was asked for, the checkpoint's mode is ${run.mode}`;
  const max = options.maxResumes ?? DEFAULT_MAX_RESUMES;
  const resumes = run.resumes ?? 0;
  if (max === 0) return 'maxResumes is 0: a checkpoint is never resumed';
  if (resumes >= max) return `${resumes} resumed run${resumes === 1 ? '' : 's'} did not complete it (maxResumes ${max})`;
  return undefined;
}
