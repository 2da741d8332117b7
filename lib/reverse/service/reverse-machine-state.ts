/**
 * The state of one reverse connection, as plain JSON: what the service keeps in its state store
 * (`reverse-state-store.ts`) so that a restarted service resumes every transaction where it was.
 * The large, append-only parts (a pull's item ids, the ids a push received, failure records, the
 * pulled-id → store-id map) are separate records, written once; this object stays small.
 */
import type { ConnectionStatus, StorageFailureReport } from '../../contract/messages';
import type { Entity } from '../../contract/entities';
import { ENTITIES, perEntity } from '../../contract/entities';

/** A transaction the operator (or code) asks the daemon to run. */
export type TransactionRequest =
  | {
      readonly kind: 'pull';
      /** One entity; without it the pull covers every entity in registry order: products, then orders (the deployed service's "Send updates"). */
      readonly entity?: Entity;
      /** Only these `_id`s (needs `entity`; default: every item of the entity). */
      readonly ids?: readonly string[];
    }
  | {
      readonly kind: 'push';
      /** Push everything: `cursoroffset` answers 0 for this push until a page of the entity arrives. */
      readonly full?: boolean;
    }
  | { readonly kind: 'pingsample' };

export type TransactionKind = TransactionRequest['kind'];
export type PushKind = 'push' | 'pingsample';
export type Outcome = 'succeded' | 'failed';

/** A queued transaction as stored (a pull names its entities). */
export type QueuedTransaction =
  | { readonly kind: 'pull'; readonly entities: readonly Entity[]; readonly ids?: readonly string[] }
  | { readonly kind: 'push'; readonly full: boolean }
  | { readonly kind: 'pingsample' };

/** Per-entity counters, cumulative over the connection's life. */
export interface EntityCounts {
  /** Distinct items handed out by `next` (a re-delivery of the same item is not counted again). */
  delivered: number;
  /** Extra deliveries of an item already handed out (daemon restart, lease expiry). */
  redelivered: number;
  succeeded: number;
  failed: number;
  /** Items of a pull the service could not hand out (gone from its store, unconvertible). */
  skipped: number;
  /** Distinct items received by normal push pages (per transaction). */
  received: number;
  /** Items of push pages refused (unreadable); the rest of their page is stored. */
  refused: number;
  /** Distinct items received by sample push pages (never written to the store). */
  sampled: number;
  /** `succeded` acknowledgements that carried a new store id (recorded in the id map). */
  mapped: number;
  /**
   * Items the service gave up on after `maxDeliveries` deliveries without an acknowledgement (a
   * daemon that crashes on them); also counted in `failed`.
   */
  unacknowledged: number;
}

export type FailureSource =
  /** A `failed` report of the daemon. */
  | 'daemon'
  /** The service skipped an item of a pull (gone from its store, not writable in reverse form) or gave up on it (never acknowledged). */
  | 'service'
  /** An item of a push page the service could not read; the rest of the page was stored. */
  | 'push';

export interface FailureRecord {
  readonly transaction: number;
  readonly entity: Entity;
  /** The item's id (for a refused push item: its `_id`, `sku` or `orderid` when readable, else `#<index>`). */
  readonly id: string;
  readonly source: FailureSource;
  readonly error: string;
  readonly reasons: StorageFailureReport['reasons'];
  readonly at: number;
}

/** A `succeded` whose body carried another id: the store keeps the pulled item under `storeId`. */
export interface IdMapping {
  readonly transaction: number;
  readonly entity: Entity;
  /** The item's `_id` in the service's store (the id handed out by `next`). */
  readonly pulledId: string;
  /** The id the daemon put in the acknowledgement path (`_id`, `sku` or `orderid`). */
  readonly pathId: string;
  /** The id the store gave the item (the body's `_id`, else its `sku` / `orderid`). */
  readonly storeId: string;
  readonly at: number;
}

export type TransactionOutcome = 'finished' | 'expired' | 'cancelled';

export interface TransactionSummary {
  readonly transaction: number;
  readonly kind: TransactionKind;
  /** A pull's entities. */
  readonly entities?: readonly Entity[];
  readonly startedAt: number;
  readonly endedAt: number;
  readonly outcome: TransactionOutcome;
  /** Pull: items acknowledged per entity; push: distinct items received per entity. */
  readonly items: Readonly<Record<Entity, number>>;
  /** Pull: items of the entity in progress not acknowledged when it ended (expired or cancelled). */
  readonly remaining?: number;
}

/** The cycle of the pull entity in progress. `ready`: expecting `next`; `leased`: the head item is out; `acked`: expecting `readyfornext`. */
export type PullPhase = 'ready' | 'leased' | 'acked';

export interface PullState {
  readonly kind: 'pull';
  readonly transaction: number;
  readonly startedAt: number;
  touchedAt: number;
  readonly entities: readonly Entity[];
  /** Explicit `_id`s (a pull of one entity queued with `ids`). */
  readonly given?: readonly string[];
  /** Index in `entities` of the entity in progress. */
  index: number;
  /** Items of the entity in progress (their ids are a separate record). */
  total: number;
  /** Item count of every entity listed so far (its id record is removed when the pull ends). */
  readonly listed: Partial<Record<Entity, number>>;
  /** Index of the head item (everything before it is acknowledged or skipped). */
  pos: number;
  phase: PullPhase;
  /** Whether the head item has been handed out at least once. */
  headDelivered: boolean;
  /** How often the head item has been handed out without an acknowledgement (the service gives up at `maxDeliveries`). */
  deliveries?: number;
  /** The id of the daemon's store the head item went out under (from the id map), when it has one. */
  storeId?: string;
  leaseUntil: number;
  /** The head item's other ids a daemon may acknowledge it by (`sku` / `orderid`), set when handed out. */
  aliases: string[];
  /** The last item acknowledged: a repeat of its acknowledgement is a duplicate. */
  last: { readonly id: string; readonly aliases: readonly string[]; readonly outcome: Outcome } | null;
  /** Whether the entity in progress is finished (`pull/{entity}/finish`). */
  entityFinished: boolean;
  /** Acknowledged items per entity. */
  readonly acknowledged: Record<Entity, number>;
}

export interface PushState {
  readonly kind: PushKind;
  readonly transaction: number;
  readonly startedAt: number;
  touchedAt: number;
  readonly full: boolean;
  /** The entity whose pages are expected now (registry order, `pushPhaseAfter`); `done` once every entity's finish is in. */
  phase: Entity | 'done';
  /** Pages received per entity (their new ids are separate records, one per page). */
  readonly pages: Record<Entity, number>;
  /** Distinct items received per entity. */
  readonly received: Record<Entity, number>;
}

export interface MachineState {
  readonly version: 1;
  status: ConnectionStatus;
  queue: QueuedTransaction[];
  current: PullState | PushState | null;
  /** The last transaction number used. */
  transactions: number;
  readonly counts: Record<Entity, EntityCounts>;
  /** Per entity: the `last_updated` of the last item a normal push received, exactly as sent (0 before any). */
  readonly cursors: Record<Entity, number | string>;
  readonly history: TransactionSummary[];
  /** Sequence numbers of the failure records and id mappings written so far. */
  failureSeq: number;
  mappingSeq: number;
  /**
   * A transaction finished and `upstreamstatus` has not said `finished` yet: the status stays
   * `finished` until it is read once (deployed daemons read it right after their finish and log
   * anything else as "Unknown upstreamstatus"), even with the next transaction queued.
   */
  finishedUnread?: boolean;
}

export function emptyCounts(): EntityCounts {
  return { delivered: 0, redelivered: 0, succeeded: 0, failed: 0, skipped: 0, received: 0, refused: 0, sampled: 0, mapped: 0, unacknowledged: 0 };
}

export function initialState(): MachineState {
  return {
    version: 1,
    status: 'waiting',
    queue: [],
    current: null,
    transactions: 0,
    counts: perEntity(emptyCounts),
    cursors: perEntity(() => 0),
    history: [],
    failureSeq: 0,
    mappingSeq: 0,
  };
}

/** A state read back from a store: checked enough that a foreign or corrupt record fails loudly, not later. */
export function parseState(text: string): MachineState {
  const s = JSON.parse(text) as MachineState;
  if (!s || typeof s !== 'object' || s.version !== 1 || !Array.isArray(s.queue) || !s.counts || !s.cursors || !Array.isArray(s.history)) {
    throw new Error('the stored reverse-connection state is not a version 1 state');
  }
  // Counters added in later versions of the kit start at 0, and so does an entity registered since.
  for (const e of ENTITIES) {
    s.counts[e] = { ...emptyCounts(), ...s.counts[e] };
    s.cursors[e] ??= 0;
    if (s.current && s.current.kind !== 'pull') {
      s.current.pages[e] ??= 0;
      s.current.received[e] ??= 0;
    }
  }
  return s;
}

/** Per-entity zeros (a transaction's page and item counts start so). */
export const zeroPerEntity = (): Record<Entity, number> => perEntity(() => 0);

/**
 * The phase a push moves to once `entity`'s finish is in: the next entity in registry order
 * (`ENTITIES`: products, then orders, then any registered one), else `done`.
 */
export function pushPhaseAfter(entity: Entity): Entity | 'done' {
  return ENTITIES[ENTITIES.indexOf(entity) + 1] ?? 'done';
}
