/**
 * Where the sync engine keeps each connection's state between runs: the last `jobid`, the
 * high-water `last_updated` per entity (incremental mode), and — while a run is under way — the
 * run's checkpoint, saved after every page written to the sink, so a run that dies resumes where
 * it stopped.
 */
import { z } from 'zod';
import type { Entity } from '../contract/entities';
import type { WalkPosition } from '../client/catalog-walk';
import type { NormalisationCounts } from '../client/store-reply';
import { KeyedMutex } from '../adapter';
import { readJsonEntries, writeJsonFileAtomically } from './json-file';
import { EntitySchema, perEntity } from '../contract/entities';

export interface EntityProgress {
  /** Items received (duplicates excluded), stubs of an ids-only list included. */
  seen: number;
  /** Items the sink stored (new or changed). */
  written: number;
  /** Items the sink already held as received (stubs whose `last_updated` the sink already had included). */
  unchanged: number;
  duplicates: number;
  invalid: number;
  anomalies: number;
  /** Of `seen`, the stubs of an ids-only list (only id and `last_updated`). The engine always sets it. */
  stubs?: number;
  /** Stubs that were new or changed, so their item was fetched by ID. The engine always sets it. */
  fetchedById?: number;
  /** What the tolerant reader normalised, by kind (each one a warning, none a failure). The engine always sets it. */
  normalisations?: NormalisationCounts;
}

/** The checkpoint of a run in progress. */
export interface RunCheckpoint {
  jobid: number;
  mode: 'full' | 'incremental';
  startedAt: number;
  /** Entities finished in this job (a resumed run walks them again: their data must not freeze). */
  done: Entity[];
  /** The entity being walked. */
  entity?: Entity;
  /** Where each unfinished entity's walk resumes (absent: from its start). */
  positions?: Partial<Record<Entity, WalkPosition>>;
  /** Written by older versions: where `entity`'s walk resumes. Read as `positions[entity]`. */
  position?: WalkPosition;
  /** Resumed runs started on this job; a run that finds `maxResumes` of them starts a fresh job. */
  resumes?: number;
  progress: Record<Entity, EntityProgress>;
  /** Highest `last_updated` written so far in this run. */
  highWater: Partial<Record<Entity, number>>;
  /** Incremental mode: the boundary this run stops at (kept so a resumed run uses the same). */
  stopBelow: Partial<Record<Entity, number>>;
  requests: number;
  retries: number;
}

export interface SyncState {
  /** The last job id used (0: never ran). */
  jobid: number;
  highWater?: Partial<Record<Entity, number>>;
  /** Present while a run is in progress (or died). */
  run?: RunCheckpoint;
}

/**
 * Persistence for sync state, one record per connection. Implement it over any store (a table, a
 * key-value store); `save` must replace the record atomically.
 *
 * @example A checkpoint store over a Map:
 * ```ts
 * const map = new Map<string, string>();
 * const checkpoints: CheckpointStore = {
 *   async load(id) { const s = map.get(id); return s ? JSON.parse(s) : undefined; },
 *   async save(id, state) { map.set(id, JSON.stringify(state)); },
 * };
 * ```
 */
export interface CheckpointStore {
  load(connectionId: string): Promise<SyncState | undefined>;
  save(connectionId: string, state: SyncState): Promise<void>;
}

/** Keeps state in memory (copies in and out, so callers cannot change it behind its back). */
export class MemoryCheckpointStore implements CheckpointStore {
  private readonly states = new Map<string, string>();
  async load(connectionId: string): Promise<SyncState | undefined> {
    const s = this.states.get(connectionId);
    return s === undefined ? undefined : (JSON.parse(s) as SyncState);
  }
  async save(connectionId: string, state: SyncState): Promise<void> {
    this.states.set(connectionId, JSON.stringify(state));
  }
}

const ProgressSchema = z.object({
  seen: z.number(),
  written: z.number(),
  unchanged: z.number(),
  duplicates: z.number(),
  invalid: z.number(),
  anomalies: z.number(),
  // Checkpoints written before ids-only lists and normalisation counts existed lack these.
  stubs: z.number().default(0),
  fetchedById: z.number().default(0),
  normalisations: z.record(z.string(), z.number()).default({}),
});
/** A member per entity of the registry. */
const perEntityObject = <T extends z.ZodType>(schema: T) => z.object(perEntity(() => schema));
const EntityNumbers = perEntityObject(z.number().optional());
const PositionSchema = z.union([z.object({ offset: z.number().int().nonnegative() }), z.object({ next: z.string() })]);
const StateSchema = z.object({
  jobid: z.number().int().nonnegative(),
  highWater: EntityNumbers.optional(),
  run: z
    .object({
      jobid: z.number().int().nonnegative(),
      mode: z.enum(['full', 'incremental']),
      startedAt: z.number(),
      done: z.array(EntitySchema),
      entity: EntitySchema.optional(),
      positions: perEntityObject(PositionSchema.optional()).optional(),
      position: PositionSchema.optional(),
      resumes: z.number().int().nonnegative().optional(),
      progress: perEntityObject(ProgressSchema),
      highWater: EntityNumbers,
      stopBelow: EntityNumbers,
      requests: z.number(),
      retries: z.number(),
    })
    .optional(),
});

/** Validates a stored `SyncState` (for checkpoint stores that read JSON written elsewhere). */
export function parseSyncState(value: unknown): SyncState | undefined {
  const parsed = StateSchema.safeParse(value);
  return parsed.success ? (parsed.data as SyncState) : undefined;
}

/**
 * Keeps every connection's state in one JSON file, replaced atomically (write to a temporary file,
 * then rename), so a crash mid-save leaves the previous state intact.
 */
export class JsonFileCheckpointStore implements CheckpointStore {
  private readonly lock = new KeyedMutex();
  constructor(readonly file: string) {}

  /** Every connection's state (none while the file does not exist), each one validated. */
  readAll(): Promise<Record<string, SyncState>> {
    return readJsonEntries(this.file, parseSyncState, `checkpoint file ${this.file} is not a storebridge checkpoint file`);
  }

  async load(connectionId: string): Promise<SyncState | undefined> {
    const all = await this.readAll();
    return Object.prototype.hasOwnProperty.call(all, connectionId) ? all[connectionId] : undefined;
  }

  async save(connectionId: string, state: SyncState): Promise<void> {
    await this.lock.run('file', async () => {
      const all = await this.readAll();
      const next = Object.assign(Object.create(null) as Record<string, SyncState>, all, { [connectionId]: state });
      await writeJsonFileAtomically(this.file, next);
    });
  }
}
