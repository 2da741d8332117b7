/**
 * The state one sync run carries from step to step: the connection's saved state and the run's
 * checkpoint, the request counters, the lists of quarantined items and anomalies, and the one way
 * to save and to emit. `sync-run.ts` opens and closes it; `sync-entity.ts` fills it page by page.
 */
import type { Entity } from '../contract/webhook';
import type { GuardedAdapter } from '../adapter-guard';
import type { WalkAnomaly } from '../client/catalog-walk';
import { totalNormalisations, type InvalidItem } from '../client/store-reply';
import type { EntityProgress, RunCheckpoint, SyncState } from './checkpoint-store';
import type { EntityReport, SyncEvent, SyncMode, SyncRunOptions } from './sync-run';

/** The first quarantined items and anomalies a report lists (counts are in the entity reports). */
export const MAX_LISTED = 100;

/** An entity report's `count` when the sink could not be counted (the run stopped on a sink failure). */
export const UNKNOWN_COUNT = -1;

export const emptyProgress = (): EntityProgress => ({ seen: 0, written: 0, unchanged: 0, duplicates: 0, invalid: 0, anomalies: 0, stubs: 0, fetchedById: 0, normalisations: {} });

export class RunContext {
  readonly invalidItems: InvalidItem[] = [];
  readonly anomalies: Array<WalkAnomaly & { entity: Entity }> = [];
  /** The store's last `itemsTotal` per entity. */
  readonly itemsTotal: Partial<Record<Entity, number>> = {};
  /** Entities whose walk reached its end in this run (or an earlier part of it). */
  readonly complete: Partial<Record<Entity, boolean>> = {};
  private readonly stats0: { requests: number; retries: number };
  /** Requests and retries of the run's earlier parts (a resumed run). */
  private readonly base: { requests: number; retries: number };

  private constructor(
    readonly options: SyncRunOptions,
    readonly sink: GuardedAdapter,
    readonly state: SyncState,
    readonly run: RunCheckpoint,
    readonly resumed: boolean,
    readonly started: number,
  ) {
    this.stats0 = { ...options.client.stats };
    this.base = { requests: run.requests, retries: run.retries };
    for (const e of run.done) this.complete[e] = true;
  }

  /** Loads the connection's state: resumes its checkpoint, or starts job `last + 1`. */
  static async open(options: SyncRunOptions, sink: GuardedAdapter): Promise<RunContext> {
    const started = (options.now ?? Date.now)();
    const state: SyncState = (await options.checkpoints.load(options.connectionId)) ?? { jobid: 0 };
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
    return new RunContext(options, sink, state, run, state.run !== undefined, started);
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

  /** Saves the checkpoint (the state with the run in progress). */
  async save(): Promise<void> {
    this.countRequests();
    this.state.jobid = Math.max(this.state.jobid, this.run.jobid);
    this.state.run = this.run;
    await this.options.checkpoints.save(this.options.connectionId, this.state);
  }

  /** The run is over: folds its high water into the state and drops the checkpoint. */
  async saveFinished(): Promise<void> {
    const highWater = { ...this.state.highWater };
    for (const [e, hw] of Object.entries(this.run.highWater) as Array<[Entity, number | undefined]>) {
      if (hw !== undefined) highWater[e] = Math.max(highWater[e] ?? 0, hw);
    }
    this.countRequests();
    await this.options.checkpoints.save(this.options.connectionId, { jobid: Math.max(this.state.jobid, this.run.jobid), highWater });
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
    const progress = this.run.progress[entity];
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
    };
  }
}
