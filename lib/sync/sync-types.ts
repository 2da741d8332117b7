/**
 * The sync run's public types: its options, report and events. Their own module so that the run's
 * parts (`sync-run-context`, `sync-entity`, `sync-errors`) name them without importing the run
 * itself (no import cycle in lib/sync; test/architecture/surface.test.ts).
 */
import type { Entity } from '../contract/entities';
import type { StoreAdapter } from '../adapter';
import type { GuardedAdapter } from '../adapter-guard';
import type { StoreClient } from '../client/store-client';
import type { WalkAnomaly, WalkPosition } from '../client/catalog-walk';
import type { InvalidItem, NormalisationCounts } from '../client/store-reply';
import type { CheckpointStore, EntityProgress } from './checkpoint-store';

export type SyncMode = 'full' | 'incremental';

export interface EntityReport extends EntityProgress {
  /** Distinct items now in the sink; -1 when the run stopped on a sink failure and the sink could not be counted either. */
  count: number;
  /** How many normalisations in all (the sum of `normalisations`): the `--json` line's member. The engine always sets it. */
  normalised?: number;
  /** The store's last `itemsTotal`; absent when unknown (a placeholder such as 999, or not a count). */
  itemsTotal?: number;
  /** Whether the walk reached its end (or, incremental, its boundary). */
  complete: boolean;
  /** Why this entity's walk stopped in this run (the other entities were walked all the same). */
  error?: RunError;
}

export interface SyncReport {
  /** Completed, and the store behaved: no invalid item, duplicate or paging anomaly (normalisations are warnings, not failures). */
  ok: boolean;
  connection: string;
  jobid: number;
  mode: SyncMode;
  /** This run continued a checkpoint left by an earlier one (`resume` says which). */
  resumed: boolean;
  /** The job this run resumed: its `jobid`, since when (ISO 8601), and which resume this is (1: the first). */
  resume?: ResumeInfo;
  /** A checkpoint this run set aside to start a fresh job (another mode was asked for, or `maxResumes` resumes failed), and why. */
  abandoned?: AbandonedJob;
  /** The entities the connection covers, which this run walked (a products-only store: `['products']`). The engine always sets it. */
  entities?: Entity[];
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
  /** Both entities' normalisations, by kind: what the tolerant reader changed, each one a warning. The engine always sets it. */
  normalisations?: NormalisationCounts;
  /** Why the run stopped early; its checkpoint is kept, the next run resumes from it. */
  error?: RunError;
}

/** Why a run stopped early: the error's name, code and message (never the key), and what a retry policy needs. */
export interface RunError {
  name: string;
  code?: string;
  message: string;
  /** The store's HTTP status, when the store answered. */
  status?: number;
  /** False when another attempt cannot help (an untrusted certificate, a refused port). */
  retryable?: boolean;
}

export type SyncEvent =
  | { type: 'run-start'; connection: string; jobid: number; mode: SyncMode; resumed: boolean }
  /** `totalKnown: false`: the store's `itemsTotal` is a placeholder or not a count, and `itemsTotal` means nothing. */
  | { type: 'page'; entity: Entity; seen: number; itemsTotal: number; totalKnown?: boolean; written: number; position: WalkPosition | undefined }
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
  /** Default: those the client covers (`client.config.entities`; both, products first, with a base URL). */
  entities?: readonly Entity[];
  /**
   * Resumed runs of one job that may fail before the next run starts a fresh job instead (default
   * 3; 0: never resume). A resumed run walks the entities the job had finished again, so no data
   * freezes; a fresh job also drops a checkpoint that keeps failing (a position the store no longer
   * serves).
   */
  maxResumes?: number;
  strategy?: 'auto' | 'offset' | 'cursor';
  /** Parallel offset pages (default 1). */
  concurrency?: number;
  /** By-ID reads in flight at once when an ids-only list's stubs are fetched (default 8). */
  byIdConcurrency?: number;
  signal?: AbortSignal;
  onEvent?: (event: SyncEvent) => void;
  /** Clock (Unix ms), for tests. */
  now?: () => number;
}

/** The job a resumed run continues: its `jobid`, since when (ISO 8601), and which resume this is (1: the first). */
export interface ResumeInfo {
  jobid: number;
  since: string;
  resumes: number;
}

/** A job's checkpoint that this run set aside to start a fresh job, and why. */
export interface AbandonedJob {
  jobid: number;
  since: string;
  reason: string;
}
