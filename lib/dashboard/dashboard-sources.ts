/**
 * What the dashboard reads and acts on, as two small interfaces: a `SyncSource` (the sync
 * service's connections: last run, history, schedule; "Run now", pause, resume) and a
 * `ReverseSource` (a reverse service's connections and its queue). The core renders whatever
 * sources it is given; implementations live beside this file (Redis + BullMQ, a `--state` file,
 * a reverse service over HTTP). No source ever returns a key: connections are named.
 */
import type { SyncMode } from '../sync/sync-run';
import type { LastRun, RunRecord } from '../sync/sync-health';
import type { Entity } from '../contract/entities';

/** When a connection is scheduled (a BullMQ job scheduler), or why it is not. */
export interface ScheduleView {
  intervalMs: number;
  mode?: SyncMode;
  /** When the next run is due (Unix ms), if known. */
  next?: number;
}

/** A connection whose scheduler the dashboard removed ("Pause"), kept to restore it ("Resume"). */
export interface PausedView {
  intervalMs: number;
  mode?: SyncMode;
  /** When it was paused (ISO 8601). */
  pausedAt: string;
}

/** What a checkpoint file says about a connection (single-machine setups, `storebridge sync --state`). */
export interface CheckpointView {
  /** The last wire `jobid` used. */
  jobid: number;
  /** Highest `last_updated` synced per entity (Unix ms). */
  highWater?: { products?: number; orders?: number };
  /** A run that started and has not finished (in progress, or interrupted: the next run resumes it). */
  unfinished?: {
    jobid: number;
    mode: SyncMode;
    startedAt: number;
    entity?: string;
    products: { seen: number; written: number; duplicates: number; invalid: number };
    orders: { seen: number; written: number; duplicates: number; invalid: number };
  };
}

/** One row of the connections table. */
export interface SyncConnectionView {
  name: string;
  lastRun?: LastRun;
  schedule?: ScheduleView;
  paused?: PausedView;
  checkpoint?: CheckpointView;
}

/** What a source can do besides reading. */
export interface SyncCapabilities {
  runNow: boolean;
  pause: boolean;
}

/**
 * The sync side of the dashboard.
 *
 * @example A source over your own registry (read-only):
 * ```ts
 * const source: SyncSource = {
 *   label: 'my registry',
 *   capabilities: { runNow: false, pause: false },
 *   async connections() { return (await health.lastRuns()).map((r) => ({ name: r.connection, lastRun: r })); },
 *   async history(name, limit) { return health.history(name, limit); },
 * };
 * createDashboardRouter({ sync: source });
 * ```
 */
export interface SyncSource {
  /** Where the data comes from, shown on the page (never a URL with a password). */
  readonly label: string;
  readonly capabilities: SyncCapabilities;
  connections(): Promise<SyncConnectionView[]>;
  /** The connection's last runs, newest first (empty when the source keeps none). */
  history(name: string, limit: number): Promise<RunRecord[]>;
  /** Queues one run now; resolves with the job id. */
  runNow?(name: string): Promise<string>;
  /** Stops the connection's schedule; false when it was not scheduled. */
  pause?(name: string): Promise<boolean>;
  /** Restores a paused schedule; false when it was not paused. */
  resume?(name: string): Promise<boolean>;
  /** The BullMQ queue, for the raw jobs view (bull-board), when there is one. */
  readonly queue?: unknown;
  close?(): Promise<void>;
}

/** Per-entity counters of a reverse connection. */
export interface ReverseEntityCounts {
  delivered?: number;
  redelivered?: number;
  succeeded?: number;
  failed?: number;
  skipped?: number;
  received?: number;
  refused?: number;
  sampled?: number;
  /** Items the service gave up on after too many deliveries without an acknowledgement (also in `failed`). */
  unacknowledged?: number;
}

/** One pulled item and the id the store gave it (from `succeded`), when the service reports it. */
export interface IdMapping {
  entity: string;
  pulledId: string;
  storeId: string;
}

/** A reverse connection as the dashboard shows it (the service's status view, read tolerantly). */
export interface ReverseConnectionView {
  name: string;
  connectionstatus: string;
  mode: string;
  current: null | { transaction?: number; kind?: string; entity?: string; phase?: string; remaining?: number; leasedId?: string; leaseExpired?: boolean };
  queue: Array<{ kind: string; entity?: string }>;
  products: ReverseEntityCounts;
  orders: ReverseEntityCounts;
  failures: Array<{ transaction?: number; entity?: string; id?: string; source?: string; error: string; reasons: Array<{ message?: string; code?: string }>; at?: number }>;
  /**
   * Ended transactions, oldest first: the service's `{transaction, kind, entities, startedAt, endedAt,
   * outcome, items, remaining}` (`entity` and `finishedAt` are read too, from other services).
   */
  transactions: Array<{ transaction?: number; kind?: string; entity?: string; startedAt?: number; endedAt?: number; outcome?: string; remaining?: number; items?: number | { products?: number; orders?: number } }>;
  /** Pulled id → store id, when the service reports it. */
  idMap?: IdMapping[];
}

/** What "Fetch updates" and "Send updates" queue: a push, or a pull of one entity. */
export type ReverseQueueRequest = { kind: 'push' } | { kind: 'pull'; entity: Entity };

/**
 * The reverse side of the dashboard: one reverse service.
 *
 * @example A reverse service in the same process (no HTTP):
 * ```ts
 * const router = createReverseServiceRouter({ adapter, connections: [{ key: process.env.KEY!, name: 'erp-1' }] });
 * const local: ReverseSource = {
 *   label: 'this process',
 *   async connections() { return (await router.service.statuses()).map((v) => readReverseView(v)!); },
 *   async queue(name, request) { return router.service.enqueue(name, request); },
 * };
 * ```
 */
export interface ReverseSource {
  /** Shown on the page (the service's origin; never a key). */
  readonly label: string;
  connections(): Promise<ReverseConnectionView[]>;
  /** Queues a transaction for a connection (by name); resolves with its position (0 = next). */
  queue(name: string, request: ReverseQueueRequest): Promise<number>;
}
