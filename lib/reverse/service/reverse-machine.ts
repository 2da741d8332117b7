/**
 * The state machine of one reverse connection, pure and synchronous: no I/O, no framework, the
 * clock passed in. The service (`reverse-service.ts`) feeds it the item ids of a pull and does the
 * store reads and writes around it; whether a call is allowed now, and what it changes, is decided
 * here. Every refused call returns `{ok: false, status: 409, error}` and leaves the machine as it was.
 *
 * Its whole state is `MachineState` (plain JSON) plus two in-memory indexes rebuilt from records on
 * restore: the item ids of the pull entity in progress, and the ids a push received. Every change
 * that must outlive the process is also queued as an effect (`drain()`), which the service writes
 * to its state store in one batch with the state before it answers.
 *
 * Connection status: `waiting → initialized → finishing → finished → waiting` (the last move when a
 * transaction is queued). Pull item cycle: `hasmore` (ready | done; it closes an acknowledgement left open) → `next` →
 * `succeded` / `failed` → `readyfornext` → `hasmore` … See docs/reverse-connection.md.
 */
import { REVERSE_FAILURE_CODES, type ConnectionStatus, type HasMore, type Mode, type PingStatus, type PushStrategy, type StorageFailureReport } from '../../contract/messages';
import type { Entity } from '../../contract/entities';
import {
  initialState,
  pushPhaseAfter,
  zeroPerEntity,
  type EntityCounts,
  type FailureRecord,
  type IdMapping,
  type MachineState,
  type Outcome,
  type PullPhase,
  type PullState,
  type PushKind,
  type PushState,
  type QueuedTransaction,
  type TransactionOutcome,
  type TransactionRequest,
  type TransactionSummary,
} from './reverse-machine-state';
import { PUSH_FINISH_SLIP } from '../../contract/dialects';
import { ENTITIES, perEntity } from '../../contract/entities';

export * from './reverse-machine-state';

export type MachineResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly status: 409; readonly error: string };

/** A change to persist beside the state (see `drain`). */
export type MachineEffect =
  | { readonly type: 'pull-items'; readonly transaction: number; readonly entity: Entity; readonly ids: readonly string[] }
  | { readonly type: 'received'; readonly transaction: number; readonly entity: Entity; readonly page: number; readonly ids: readonly string[] }
  | { readonly type: 'failure'; readonly seq: number; readonly record: FailureRecord }
  | { readonly type: 'mapping'; readonly seq: number; readonly record: IdMapping }
  /** A transaction ended: its records (item lists, received pages) can go. */
  | { readonly type: 'ended'; readonly transaction: number; readonly listed: Partial<Record<Entity, number>>; readonly pages: Partial<Record<Entity, number>> };

export interface MachineConfig {
  /** How long an item handed out stays reserved for the daemon (ms). */
  readonly leaseMs: number;
  /** A running transaction with no daemon call for this long ends as `expired` (ms). */
  readonly transactionIdleMs: number;
  /** Transaction summaries kept. */
  readonly maxHistory: number;
  /**
   * An item handed out this many times without an acknowledgement is given up: recorded as failed
   * by the service (`source: "service"`, code 1004) and the pull moves on. Deployed daemons retry at
   * once, with no pause, after an exception they do not catch: without this, an item one of them
   * cannot digest is handed out forever.
   */
  readonly maxDeliveries: number;
}

export const DEFAULT_MACHINE_CONFIG: MachineConfig = { leaseMs: 60_000, transactionIdleMs: 900_000, maxHistory: 50, maxDeliveries: 5 };

/** What a restored machine needs beside its state: the records of the running transaction. */
export interface MachineRecords {
  /** The item ids of the pull entity in progress. */
  readonly pullIds?: readonly string[];
  /** The ids received so far by the running push, per entity. */
  readonly received?: Partial<Record<Entity, readonly string[]>>;
}

/** A queued transaction as the status view shows it. */
export type QueuedView =
  | { readonly kind: 'pull'; readonly entities: readonly Entity[]; readonly entity?: Entity; readonly ids?: readonly string[] }
  | { readonly kind: 'push'; readonly full?: boolean }
  | { readonly kind: 'pingsample' };

/** A snapshot of the running transaction, for the status view. */
export interface CurrentView {
  readonly transaction: number;
  readonly kind: TransactionRequest['kind'];
  readonly entities?: readonly Entity[];
  /** The entity in progress (a push: the one whose pages are expected; absent once every entity is finished). */
  readonly entity?: Entity;
  readonly phase: string;
  readonly startedAt: number;
  /** The last daemon call of this transaction. */
  readonly touchedAt: number;
  /** When it ends as `expired` if no daemon call comes. */
  readonly expiresAt: number;
  readonly remaining?: number;
  readonly leasedId?: string;
  readonly leaseExpired?: boolean;
  readonly received?: Readonly<Record<Entity, number>>;
}

const ok = <T>(value: T): MachineResult<T> => ({ ok: true, value });
const conflict = (error: string): MachineResult<never> => ({ ok: false, status: 409, error });
const ENTITIES_IN_ORDER: readonly Entity[] = ENTITIES;
/** Per entity, the ids a push has received (one empty set per registered entity). */
const noneReceived = (): Record<Entity, Set<string>> => perEntity(() => new Set<string>());

function copyRequest(request: TransactionRequest): QueuedTransaction {
  if (request.kind === 'pull') {
    const entities = request.entity ? [request.entity] : [...ENTITIES_IN_ORDER];
    return request.ids ? { kind: 'pull', entities, ids: [...new Set(request.ids)] } : { kind: 'pull', entities };
  }
  return request.kind === 'push' ? { kind: 'push', full: request.full === true } : { kind: 'pingsample' };
}

/**
 * One connection's state machine.
 *
 * @example
 * ```ts
 * const m = new ReverseConnectionMachine();
 * m.enqueue({ kind: 'pull', entity: 'products' });
 * m.initializePull('products', ['p1'], Date.now());
 * m.next('products', Date.now());                      // {ok: true, value: {id: 'p1', redelivery: false}}
 * m.acknowledge('products', ['p1'], 'succeded', {}, Date.now());
 * m.readyForNext('products', Date.now());              // {ok: true, value: true}
 * m.hasMore('products', Date.now());                   // {ok: true, value: 'done'}
 * ```
 */
export class ReverseConnectionMachine {
  private readonly s: MachineState;
  private readonly config: MachineConfig;
  /** Ids of the pull entity in progress. */
  private ids: readonly string[] = [];
  /** Ids received by the running push, per entity. */
  private received: Record<Entity, Set<string>> = noneReceived();
  private effects: MachineEffect[] = [];

  constructor(config: Partial<MachineConfig> = {}, state?: MachineState, records: MachineRecords = {}) {
    this.config = { ...DEFAULT_MACHINE_CONFIG, ...config };
    this.s = state ?? initialState();
    if (this.s.current?.kind === 'pull') this.ids = records.pullIds ?? [];
    else if (this.s.current) {
      for (const e of ENTITIES_IN_ORDER) this.received[e] = new Set(records.received?.[e] ?? []);
    }
  }

  /** The state (plain JSON; the live object: serialize it, do not keep it) and the effects since the last drain. */
  drain(): { readonly state: MachineState; readonly effects: MachineEffect[] } {
    const effects = this.effects;
    this.effects = [];
    return { state: this.s, effects };
  }

  // ---- reads ------------------------------------------------------------------------------

  /** The state (the live object: read it, do not change or keep it). */
  get state(): Readonly<MachineState> {
    return this.s;
  }

  get status(): ConnectionStatus {
    return this.s.status;
  }

  get counts(): MachineState['counts'] {
    return this.s.counts;
  }

  /** A copy of the counters of every registered entity, by entity (the status view's per-entity members). */
  countsByEntity(): Record<Entity, EntityCounts> {
    return perEntity((e) => ({ ...this.s.counts[e] }));
  }

  get history(): readonly TransactionSummary[] {
    return this.s.history;
  }

  /** Per entity, the `last_updated` of the last item a normal push received, as sent (0 before any). */
  get cursors(): Readonly<Record<Entity, number | string>> {
    return this.s.cursors;
  }

  /**
   * `GET upstreamstatus`: the status. After a finish it says `finished` at least once, also with the
   * next transaction queued (deployed daemons read it once right after their finish); that read
   * moves the connection on to `waiting` for the next one.
   */
  readUpstreamStatus(): ConnectionStatus {
    const status = this.s.status;
    if (this.s.finishedUnread) {
      this.s.finishedUnread = false;
      if (this.s.queue.length > 0 && status === 'finished') this.s.status = 'waiting';
    }
    return status;
  }

  /**
   * The status an initialize is judged by: `finished` with a transaction queued is `waiting` (the
   * daemon asking to start has seen the finish, or does not read it).
   */
  private startable(): ConnectionStatus {
    return this.s.status === 'finished' && this.s.queue.length > 0 ? 'waiting' : this.s.status;
  }

  /** What the service wants now: the running transaction's kind, else the queue head's, else idle. */
  mode(): Mode {
    return this.s.current?.kind ?? this.s.queue[0]?.kind ?? 'idle';
  }

  /** `GET ping`: `fetchingremote` when a push is wanted, `pulling` when a pull is, else `idle`. */
  ping(): PingStatus {
    const kind = this.mode();
    return kind === 'idle' ? 'idle' : kind === 'pull' ? 'pulling' : 'fetchingremote';
  }

  /** `GET strategy`: the kind of push wanted (the running one's, else the queue head's); `push` otherwise. */
  strategy(): PushStrategy {
    return this.mode() === 'pingsample' ? 'pingsample' : 'push';
  }

  /** The queued transactions (not the running one); a pull of one entity also names it as `entity`. */
  queued(): readonly QueuedView[] {
    return this.s.queue.map((t): QueuedView => {
      if (t.kind === 'pull') return { ...t, entities: [...t.entities], ...(t.entities.length === 1 ? { entity: t.entities[0] } : {}) };
      return t.kind === 'push' && !t.full ? { kind: 'push' } : { ...t };
    });
  }

  /**
   * The entity of the running transaction (a push: the one whose pages are expected now), else the
   * one the queued transaction starts with (a push starts with the first entity of the registry).
   * 409 when nothing is queued, and during a push whose entities are all finished (only the
   * general finish is left).
   */
  entity(): MachineResult<Entity> {
    const c = this.s.current;
    if (c?.kind === 'pull') return ok(c.entities[c.index]);
    if (c) return c.phase === 'done' ? conflict(`every entity of this ${c.kind} is finished: call the general finish`) : ok(c.phase);
    const head = this.s.queue[0];
    if (!head) return conflict('no transaction is queued for this connection');
    return ok(head.kind === 'pull' ? head.entities[0] : ENTITIES_IN_ORDER[0]);
  }

  /**
   * `GET cursoroffset`: where an incremental push of the current entity (the first, products, when none) starts:
   * the `last_updated` of the last item a normal push received, exactly as it was sent, or 0. A
   * `full` push answers 0 for an entity until a page of it arrives.
   */
  cursorOffset(): number | string {
    const e = this.entity();
    const entity = e.ok ? e.value : ENTITIES_IN_ORDER[0];
    const c = this.s.current;
    const head = this.s.queue[0];
    const full = c ? c.kind === 'push' && c.full && c.pages[entity] === 0 : head?.kind === 'push' && head.full;
    return full ? 0 : this.s.cursors[entity];
  }

  currentView(now: number): CurrentView | null {
    const c = this.s.current;
    if (!c) return null;
    const common = { transaction: c.transaction, kind: c.kind, startedAt: c.startedAt, touchedAt: c.touchedAt, expiresAt: c.touchedAt + this.config.transactionIdleMs };
    if (c.kind !== 'pull') {
      return { ...common, ...(c.phase !== 'done' ? { entity: c.phase } : {}), phase: c.phase === 'done' ? 'entities finished' : `${c.phase} pages`, received: { ...c.received } };
    }
    const leased = c.phase === 'leased';
    return {
      ...common,
      entities: [...c.entities],
      entity: c.entities[c.index],
      phase: c.entityFinished ? 'entity finished' : c.phase,
      remaining: c.total - c.pos,
      ...(leased ? { leasedId: this.ids[c.pos], leaseExpired: now >= c.leaseUntil } : {}),
    };
  }

  // ---- the queue, cancel, expiry ----------------------------------------------------------

  /** Adds a transaction; returns its position in the queue (0 = next). */
  enqueue(request: TransactionRequest): number {
    this.s.queue.push(copyRequest(request));
    // The service moves `finished` back to `waiting` once it has the next transaction (and the finish was read).
    if (this.s.status === 'finished' && !this.s.finishedUnread) this.s.status = 'waiting';
    return this.s.queue.length - 1;
  }

  /** Ends the running transaction as `cancelled` (the operator's queue). `transaction`, when given, must be the running one. */
  cancel(now: number, transaction?: number): MachineResult<number> {
    const c = this.s.current;
    if (!c) return conflict('no transaction is running on this connection');
    if (transaction !== undefined && transaction !== c.transaction) return conflict(`transaction ${transaction} is not the running one (${c.transaction})`);
    this.end('cancelled', now);
    return ok(c.transaction);
  }

  /** Ends the running transaction as `expired` when no daemon call came for `transactionIdleMs`; returns it. */
  expire(now: number): TransactionSummary | undefined {
    const c = this.s.current;
    if (!c || now - c.touchedAt < this.config.transactionIdleMs) return undefined;
    return this.end('expired', now);
  }

  /** A daemon call of the running transaction: it is alive (see `expire`). */
  private touch(c: PullState | PushState, now: number): void {
    if (now > c.touchedAt) c.touchedAt = now;
  }

  // ---- initialize -------------------------------------------------------------------------

  /** Which pull `initializePull` would start (checked before the service lists the item ids). `repeat`: it is running already. */
  pullToInitialize(entity: Entity | undefined): MachineResult<{ entity: Entity; ids?: readonly string[]; repeat?: true }> {
    const c = this.s.current;
    if (this.s.status === 'initialized' && c?.kind === 'pull' && (entity === undefined || c.entities.includes(entity))) {
      return ok({ entity: c.entities[c.index], repeat: true });
    }
    if (this.startable() !== 'waiting') return conflict(`pull/initialize needs connectionstatus "waiting", it is "${this.s.status}"`);
    const head = this.s.queue[0];
    if (!head) return conflict('no transaction is queued for this connection');
    if (head.kind !== 'pull') return conflict(`the queued transaction is a ${head.kind}, not a pull (see GET ping)`);
    if (entity !== undefined && entity !== head.entities[0]) return conflict(`the queued pull starts with ${head.entities[0]}, not ${entity} (see GET entity)`);
    return ok({ entity: head.entities[0], ...(head.ids ? { ids: head.ids } : {}) });
  }

  /** Starts the queued pull with the item ids of its first entity (in delivery order); a repeat changes nothing. */
  initializePull(entity: Entity | undefined, ids: readonly string[], now: number): MachineResult<ConnectionStatus> {
    const check = this.pullToInitialize(entity);
    if (!check.ok) return check;
    if (check.value.repeat) {
      this.touch(this.s.current!, now);
      return ok(this.s.status);
    }
    const head = this.s.queue.shift() as Extract<QueuedTransaction, { kind: 'pull' }>;
    const pull: PullState = {
      kind: 'pull',
      transaction: ++this.s.transactions,
      startedAt: now,
      touchedAt: now,
      entities: [...head.entities],
      ...(head.ids ? { given: head.ids } : {}),
      index: 0,
      total: 0,
      listed: {},
      pos: 0,
      phase: 'ready',
      headDelivered: false,
      leaseUntil: 0,
      aliases: [],
      last: null,
      entityFinished: false,
      acknowledged: zeroPerEntity(),
    };
    this.s.current = pull;
    this.setPullItems(pull, ids);
    this.s.status = 'initialized';
    this.s.finishedUnread = false;
    return ok(this.s.status);
  }

  private setPullItems(c: PullState, ids: readonly string[]): void {
    const unique = [...new Set(ids)];
    const entity = c.entities[c.index];
    this.ids = unique;
    c.total = unique.length;
    c.listed[entity] = unique.length;
    this.effects.push({ type: 'pull-items', transaction: c.transaction, entity, ids: unique });
  }

  /** Starts the queued push (`push/initialize`) or sample push (`pingsample/initialize`); a repeat on the running one changes nothing. */
  initializePush(kind: PushKind, now: number): MachineResult<ConnectionStatus> {
    const c = this.s.current;
    if (this.s.status === 'initialized' && c?.kind === kind) {
      this.touch(c, now);
      return ok(this.s.status);
    }
    if (this.startable() !== 'waiting') return conflict(`${kind}/initialize needs connectionstatus "waiting", it is "${this.s.status}"`);
    const head = this.s.queue[0];
    if (!head) return conflict('no transaction is queued for this connection');
    if (head.kind !== kind) return conflict(`the queued transaction is a ${head.kind}, not a ${kind} (see GET ping and GET strategy)`);
    this.s.queue.shift();
    this.s.current = {
      kind,
      transaction: ++this.s.transactions,
      startedAt: now,
      touchedAt: now,
      full: head.kind === 'push' && head.full,
      phase: ENTITIES_IN_ORDER[0],
      pages: zeroPerEntity(),
      received: zeroPerEntity(),
    };
    this.received = noneReceived();
    this.s.status = 'initialized';
    this.s.finishedUnread = false;
    return ok(this.s.status);
  }

  // ---- the pull item cycle ----------------------------------------------------------------

  private pull(entity: Entity, call: string, now: number): MachineResult<PullState> {
    const c = this.s.current;
    if (this.s.status !== 'initialized' || c?.kind !== 'pull') return conflict(`${call}: no pull transaction is initialized`);
    if (c.entities[c.index] !== entity) {
      const position = c.entities.indexOf(entity);
      if (position === -1) return conflict(`${call}: the pull in progress is of ${c.entities.join(' and ')}, not ${entity}`);
      if (position > c.index) return conflict(`${call}: the pull is at ${c.entities[c.index]} (see GET entity); ${entity} come after`);
    }
    this.touch(c, now);
    return ok(c);
  }

  /** Whether `entity` is an entity this pull has finished already (its calls answer as finished). */
  private finishedEarlier(c: PullState, entity: Entity): boolean {
    return c.entities.indexOf(entity) < c.index;
  }

  /** A lease that ran out puts its item back at the head of the transaction, to be handed out again. */
  private expireLease(c: PullState, now: number): void {
    if (c.phase === 'leased' && now >= c.leaseUntil) c.phase = 'ready';
  }

  /**
   * `ready` while an item is out or left, else `done`. A `hasmore` after an acknowledgement closes
   * it, as `readyfornext` does: the acknowledgement is fully processed when it is answered, and a
   * deployed daemon whose reply to it was lost (or a service restarted after saving it) never reads
   * `readyfornext` for it; it starts its next pass with `hasmore`, and `waiting` there would end
   * the entity early, for ever (its finish is refused while items are left).
   */
  hasMore(entity: Entity, now: number): MachineResult<HasMore> {
    const r = this.pull(entity, `pull/${entity}/hasmore`, now);
    if (!r.ok) return r;
    const c = r.value;
    if (this.finishedEarlier(c, entity) || c.entityFinished) return ok('done');
    this.expireLease(c, now);
    if (c.phase === 'acked') c.phase = 'ready';
    this.giveUpIfUndeliverable(c, entity, now);
    return ok(c.phase === 'leased' || c.pos < c.total ? 'ready' : 'done');
  }

  /**
   * Hands out the item at the head of the transaction under a lease. While that item is not
   * acknowledged, every `next` returns it again (renewing the lease): a daemon that died mid-item
   * gets the same item, so nothing is lost or doubled.
   */
  next(entity: Entity, now: number): MachineResult<{ id: string; redelivery: boolean }> {
    const r = this.pull(entity, `pull/${entity}/next`, now);
    if (!r.ok) return r;
    const c = r.value;
    if (this.finishedEarlier(c, entity) || c.entityFinished) return conflict(`pull/${entity}/next: the ${entity} of this pull are finished`);
    if (c.phase === 'acked') return conflict(`pull/${entity}/next: the previous item is acknowledged but readyfornext was not read yet`);
    this.giveUpIfUndeliverable(c, entity, now);
    if (c.pos >= c.total) return conflict(`pull/${entity}/next: no item left (hasmore is "done")`);
    const redelivery = c.headDelivered;
    if (redelivery) this.s.counts[entity].redelivered++;
    else this.s.counts[entity].delivered++;
    c.headDelivered = true;
    c.deliveries = (c.deliveries ?? 0) + 1;
    c.phase = 'leased';
    c.leaseUntil = now + this.config.leaseMs;
    return ok({ id: this.ids[c.pos], redelivery });
  }

  /**
   * The head item, handed out `maxDeliveries` times and never acknowledged, is given up: recorded
   * as failed by the service (a daemon that crashes on it asks for it again at once, for ever) and
   * the pull moves on. A late `failed` for it is then a duplicate; a late `succeded` a 409.
   */
  private giveUpIfUndeliverable(c: PullState, entity: Entity, now: number): void {
    if (c.phase === 'acked' || !c.headDelivered || (c.deliveries ?? 0) < this.config.maxDeliveries || c.pos >= c.total) return;
    const id = this.ids[c.pos];
    const message = `not acknowledged after ${c.deliveries} deliveries`;
    c.last = { id, aliases: c.aliases, outcome: 'failed' };
    this.advance(c, 'ready');
    this.s.counts[entity].failed++;
    this.s.counts[entity].unacknowledged++;
    this.recordFailure({ transaction: c.transaction, entity, id, source: 'service', error: message, reasons: [{ message, code: REVERSE_FAILURE_CODES.NOT_ACKNOWLEDGED }], at: now });
  }

  /** Moves past the head item. */
  private advance(c: PullState, phase: PullPhase): void {
    c.pos++;
    this.resetHead(c, phase);
  }

  /** A new head item: not handed out yet. */
  private resetHead(c: PullState, phase: PullPhase): void {
    c.phase = phase;
    c.headDelivered = false;
    c.deliveries = 0;
    c.aliases = [];
    delete c.storeId;
  }

  /**
   * Records the ids of the item just handed out by which a daemon may acknowledge it (`aliases`:
   * the `_id` it went out under, its `sku` / `orderid`) and, when it went out under the id the
   * daemon's store gave it, that id (`storeId`: a `succeded` naming it maps nothing new).
   */
  handedOut(id: string, aliases: readonly string[], storeId?: string): void {
    const c = this.s.current;
    if (c?.kind !== 'pull' || c.phase !== 'leased' || this.ids[c.pos] !== id) return;
    c.aliases = [...new Set(aliases.filter((a) => a !== '' && a !== id))];
    if (storeId !== undefined) c.storeId = storeId;
    else delete c.storeId;
  }

  /**
   * `succeded` / `failed` for an item, named by any id in `pathIds` (the raw path segment and its
   * decoding): its `_id` or the alias it was handed out with. Accepted once, for the item handed out
   * (also after its lease ran out, as long as no other item was handed out since). A repeat for the
   * last item with the same outcome is answered `{duplicate: true}` and changes nothing; with the
   * other outcome, or for an item not handed out, it is a 409. A `succeded` naming another
   * `storeId` records the mapping.
   */
  acknowledge(
    entity: Entity,
    pathIds: readonly string[],
    outcome: Outcome,
    detail: { readonly report?: StorageFailureReport; readonly storeId?: string },
    now: number,
  ): MachineResult<{ duplicate: boolean; id: string; mapping?: IdMapping }> {
    const call = `pull/${entity}/{id}/${outcome}`;
    const r = this.pull(entity, call, now);
    if (!r.ok) return r;
    const c = r.value;
    const names = (id: string, aliases: readonly string[]) => pathIds.some((p) => p === id || aliases.includes(p));
    const headId = this.ids[c.pos];
    const isHead = !this.finishedEarlier(c, entity) && !c.entityFinished && c.pos < c.total && c.headDelivered && c.phase !== 'acked' && names(headId, c.aliases);
    if (!isHead) {
      if (c.last && names(c.last.id, c.last.aliases)) {
        return c.last.outcome === outcome ? ok({ duplicate: true, id: c.last.id }) : conflict(`${call}: this item was already acknowledged as ${c.last.outcome}`);
      }
      return conflict(`${call}: this item is not the item handed out by next`);
    }
    c.last = { id: headId, aliases: c.aliases, outcome };
    const knownStoreId = c.storeId;
    this.advance(c, 'acked');
    c.acknowledged[entity]++;
    if (outcome === 'succeded') {
      this.s.counts[entity].succeeded++;
      const storeId = detail.storeId;
      if (storeId !== undefined && storeId !== headId && storeId !== knownStoreId) {
        const mapping: IdMapping = { transaction: c.transaction, entity, pulledId: headId, pathId: pathIds[0], storeId, at: now };
        this.recordMapping(mapping);
        return ok({ duplicate: false, id: headId, mapping });
      }
    } else {
      this.s.counts[entity].failed++;
      const report = detail.report ?? { error: '', reasons: [] };
      this.recordFailure({ transaction: c.transaction, entity, id: headId, source: 'daemon', error: report.error, reasons: report.reasons, at: now });
    }
    return ok({ duplicate: false, id: headId });
  }

  /**
   * The service could not hand out the leased item (gone from its store, not convertible): it is
   * recorded as skipped, with the reason, and the cycle moves on without a `readyfornext`.
   */
  skip(entity: Entity, id: string, reason: { readonly message: string; readonly code: number }, now: number): MachineResult<void> {
    const r = this.pull(entity, 'skip', now);
    if (!r.ok) return r;
    const c = r.value;
    if (c.phase !== 'leased' || this.ids[c.pos] !== id) return conflict('skip: this item is not the item handed out');
    this.advance(c, 'ready');
    this.s.counts[entity].skipped++;
    this.recordFailure({ transaction: c.transaction, entity, id, source: 'service', error: reason.message, reasons: [reason], at: now });
    return ok(undefined);
  }

  /** `true` once the last acknowledgement is processed (it closes it); `false` while an item is out. */
  readyForNext(entity: Entity, now: number): MachineResult<boolean> {
    const r = this.pull(entity, `pull/${entity}/readyfornext`, now);
    if (!r.ok) return r;
    const c = r.value;
    if (this.finishedEarlier(c, entity)) return ok(true);
    this.expireLease(c, now);
    if (c.phase === 'acked') c.phase = 'ready';
    return ok(c.phase !== 'leased');
  }

  /**
   * `pull/{entity}/finish`: every item acknowledged. A repeat is answered `{duplicate: true}`. When
   * the pull has another entity, `next` names it: the service lists its items and calls
   * `startPullEntity` (`GET entity` then names it).
   */
  finishPullEntity(entity: Entity, now: number): MachineResult<{ duplicate: boolean; next?: { entity: Entity; ids?: readonly string[] } }> {
    const r = this.pull(entity, `pull/${entity}/finish`, now);
    if (!r.ok) return r;
    const c = r.value;
    if (this.finishedEarlier(c, entity) || c.entityFinished) return ok({ duplicate: true });
    const open = c.total - c.pos;
    if (open > 0) return conflict(`pull/${entity}/finish: ${open} item(s) not acknowledged yet (hasmore is not "done")`);
    if (c.phase === 'acked') c.phase = 'ready';
    if (c.index + 1 < c.entities.length) return ok({ duplicate: false, next: { entity: c.entities[c.index + 1], ...(c.given ? { ids: c.given } : {}) } });
    c.entityFinished = true;
    return ok({ duplicate: false });
  }

  /** Moves a pull to its next entity, with that entity's item ids (after `finishPullEntity` named it). */
  startPullEntity(entity: Entity, ids: readonly string[]): MachineResult<void> {
    const c = this.s.current;
    if (c?.kind !== 'pull' || c.entities[c.index + 1] !== entity || c.pos < c.total) return conflict(`the pull cannot move on to ${entity} now`);
    c.index++;
    c.pos = 0;
    this.resetHead(c, 'ready');
    c.last = null;
    this.setPullItems(c, ids);
    return ok(undefined);
  }

  /** `pull/finish`: ends the pull transaction (status `finishing`; `complete` makes it `finished`). */
  finishPull(now: number): MachineResult<ConnectionStatus> {
    const c = this.s.current;
    if (this.s.status !== 'initialized' || c?.kind !== 'pull') return conflict('pull/finish: no pull transaction is initialized');
    this.touch(c, now);
    if (!c.entityFinished) return conflict(`pull/finish: call pull/${c.entities[c.index]}/finish first${c.index + 1 < c.entities.length ? ' (see GET entity)' : ''}`);
    this.s.status = 'finishing';
    return ok(this.s.status);
  }

  // ---- push -------------------------------------------------------------------------------

  private push(kind: PushKind, call: string, now: number): MachineResult<PushState> {
    const c = this.s.current;
    if (this.s.status !== 'initialized' || !c || c.kind === 'pull') return conflict(`${call}: no push transaction is initialized`);
    if (c.kind !== kind) return conflict(`${call}: the transaction in progress is a ${c.kind}, use its ${c.kind} paths`);
    this.touch(c, now);
    return ok(c);
  }

  /** Whether a page of `entity` may be received now (checked before the body is stored). */
  pageAllowed(kind: PushKind, entity: Entity, now: number): MachineResult<void> {
    const call = `${kind}/${entity}`;
    const r = this.push(kind, call, now);
    if (!r.ok) return r;
    const c = r.value;
    if (c.phase !== entity) {
      return conflict(c.phase === 'done' || ENTITIES.indexOf(entity) < ENTITIES.indexOf(c.phase) ? `${call}: the ${entity} part of this ${kind} is finished` : `${call}: finish the ${c.phase} first`);
    }
    return ok(undefined);
  }

  /**
   * Records a received page (after the service has stored it): `ids` are the items stored, in page
   * order; `lastUpdated` the `last_updated` of its last one exactly as sent (a normal push moves
   * `cursoroffset` to it; an empty page leaves it). Returns the distinct items new to this push.
   */
  recordPage(kind: PushKind, entity: Entity, ids: readonly string[], lastUpdated: number | string | undefined, now: number): MachineResult<{ received: number }> {
    const allowed = this.pageAllowed(kind, entity, now);
    if (!allowed.ok) return allowed;
    const c = this.s.current as PushState;
    const seen = this.received[entity];
    const fresh = [...new Set(ids)].filter((id) => !seen.has(id));
    for (const id of fresh) seen.add(id);
    c.pages[entity]++;
    c.received[entity] += fresh.length;
    this.s.counts[entity][kind === 'push' ? 'received' : 'sampled'] += fresh.length;
    if (kind === 'push' && lastUpdated !== undefined) this.s.cursors[entity] = lastUpdated;
    this.effects.push({ type: 'received', transaction: c.transaction, entity, page: c.pages[entity], ids: fresh });
    return ok({ received: fresh.length });
  }

  /** Items of a push page the service could not read (the rest of the page is stored): all counted, the `listed` ones recorded. */
  refusePushItems(entity: Entity, listed: ReadonlyArray<{ readonly id: string; readonly error: string }>, count: number, now: number): void {
    const c = this.s.current;
    this.s.counts[entity].refused += count;
    for (const r of listed) this.recordFailure({ transaction: c?.transaction ?? 0, entity, id: r.id, source: 'push', error: r.error, reasons: [], at: now });
  }

  /**
   * An entity's push finish. `path` is the entity in the URL. The entities finish in registry order
   * (`ENTITIES`): the finish of the entity expected now moves the push on to the next one (after
   * the last, `done`); the finish of a later one is 409; a repeat of a finish already done is
   * answered `{duplicate: true}`. The interface's slip (`PUSH_FINISH_SLIP`): it prints
   * `push/products/finish` for the normal order finish too, so that path finishes the products
   * while products are expected, and the orders once they are expected.
   */
  finishPushEntity(kind: PushKind, path: Entity, now: number): MachineResult<{ finished: Entity; duplicate: boolean }> {
    const call = `${kind}/${path}/finish`;
    const r = this.push(kind, call, now);
    if (!r.ok) return r;
    const c = r.value;
    if (c.phase === 'done') return ok({ finished: path, duplicate: true });
    const expected = c.phase;
    const slip = kind === PUSH_FINISH_SLIP.kind && path === PUSH_FINISH_SLIP.path && expected === PUSH_FINISH_SLIP.finishes;
    if (path === expected || slip) {
      c.phase = pushPhaseAfter(expected);
      return ok({ finished: expected, duplicate: false });
    }
    if (ENTITIES.indexOf(path) > ENTITIES.indexOf(expected)) return conflict(`${call}: finish the ${expected} first`);
    return ok({ finished: path, duplicate: true });
  }

  /** `push/finish` / `pingsample/finish`: ends the push (status `finishing`). */
  finishPush(kind: PushKind, now: number): MachineResult<ConnectionStatus> {
    const call = `${kind}/finish`;
    const r = this.push(kind, call, now);
    if (!r.ok) return r;
    if (r.value.phase !== 'done') return conflict(`${call}: finish the ${r.value.phase} first`);
    this.s.status = 'finishing';
    return ok(this.s.status);
  }

  // ---- ending -----------------------------------------------------------------------------

  /** Completes a finalization: `finishing → finished`, and on to `waiting` when another transaction is queued. */
  complete(now: number): MachineResult<ConnectionStatus> {
    if (this.s.status !== 'finishing' || !this.s.current) return conflict('nothing is finishing');
    this.end('finished', now);
    return ok(this.s.status);
  }

  private end(outcome: TransactionOutcome, now: number): TransactionSummary {
    const c = this.s.current!;
    const summary: TransactionSummary =
      c.kind === 'pull'
        ? {
            transaction: c.transaction,
            kind: 'pull',
            entities: [...c.entities],
            startedAt: c.startedAt,
            endedAt: now,
            outcome,
            items: { ...c.acknowledged },
            ...(outcome !== 'finished' ? { remaining: c.total - c.pos } : {}),
          }
        : { transaction: c.transaction, kind: c.kind, startedAt: c.startedAt, endedAt: now, outcome, items: { ...c.received } };
    this.s.history.push(summary);
    if (this.s.history.length > this.config.maxHistory) this.s.history.shift();
    this.effects.push({ type: 'ended', transaction: c.transaction, listed: c.kind === 'pull' ? { ...c.listed } : {}, pages: c.kind === 'pull' ? {} : { ...c.pages } });
    this.s.current = null;
    this.ids = [];
    this.received = noneReceived();
    // A finish is reported: `finished` until `upstreamstatus` says it once. An expiry or a cancel
    // is nothing the daemon waits to read: the next queued transaction is `waiting` at once.
    this.s.finishedUnread = outcome === 'finished';
    this.s.status = this.s.queue.length > 0 && outcome !== 'finished' ? 'waiting' : 'finished';
    return summary;
  }

  private recordFailure(record: FailureRecord): void {
    this.effects.push({ type: 'failure', seq: ++this.s.failureSeq, record });
  }

  private recordMapping(record: IdMapping): void {
    this.s.counts[record.entity].mapped++;
    this.effects.push({ type: 'mapping', seq: ++this.s.mappingSeq, record });
  }
}
