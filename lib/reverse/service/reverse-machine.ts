/**
 * The state machine of one reverse connection, pure and synchronous: no I/O, no framework, the
 * clock passed in. The service (`reverse-service.ts`) feeds it the item ids of a pull and does the
 * store reads and writes around it; everything about *whether* a call is allowed now, and what it
 * changes, is decided here. Every refused call returns `{ok: false, status: 409, error}` and leaves
 * the machine exactly as it was.
 *
 * Connection status: `waiting → initialized → finishing → finished → waiting` (the last move when
 * a transaction is queued). Pull item cycle: `hasmore` (waiting | ready | done) → `next` →
 * `succeded` / `failed` → `readyfornext` → `hasmore` … See docs/reverse-connection.md.
 */
import type { ConnectionStatus, HasMore, Mode, StorageFailureReport } from '../../contract/messages';
import type { Entity } from '../../contract/webhook';

/** A transaction the service wants the daemon to run. */
export type TransactionRequest =
  | { readonly kind: 'pull'; readonly entity: Entity; /** Only these `_id`s (default: every item of the entity). */ readonly ids?: readonly string[] }
  | { readonly kind: 'push' }
  | { readonly kind: 'pingsample' };

export type TransactionKind = TransactionRequest['kind'];
export type Outcome = 'succeded' | 'failed';

export type MachineResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly status: 409; readonly error: string };

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
  /** Distinct items received by normal push pages. */
  received: number;
  /** Distinct items received by sample push pages (never written to the store). */
  sampled: number;
}

export interface FailureRecord {
  readonly transaction: number;
  readonly entity: Entity;
  readonly id: string;
  /** `daemon`: a `failed` report; `service`: the service skipped the item (see `skip`). */
  readonly source: 'daemon' | 'service';
  readonly error: string;
  readonly reasons: StorageFailureReport['reasons'];
  readonly at: number;
}

export interface TransactionSummary {
  readonly transaction: number;
  readonly kind: TransactionKind;
  readonly entity?: Entity;
  readonly startedAt: number;
  readonly finishedAt: number;
  /** Pull: items in the transaction; push: distinct items received per entity. */
  readonly items: number | { readonly products: number; readonly orders: number };
}

interface PullState {
  readonly kind: 'pull';
  readonly transaction: number;
  readonly entity: Entity;
  readonly startedAt: number;
  readonly ids: readonly string[];
  /** Index of the item the cycle is at (everything before it is acknowledged or skipped). */
  pos: number;
  /** `ready`: expecting `next`; `leased`: item `ids[pos]` is out; `acked`: expecting `readyfornext`. */
  phase: 'ready' | 'leased' | 'acked';
  /** Whether `ids[pos]` has been handed out at least once. */
  headDelivered: boolean;
  leaseUntil: number;
  readonly outcomes: Map<string, Outcome | 'skipped'>;
  entityFinished: boolean;
}

interface PushState {
  readonly kind: 'push' | 'pingsample';
  readonly transaction: number;
  readonly startedAt: number;
  /** The entity whose pages are expected now; `done` once both entity finishes are in. */
  phase: Entity | 'done';
  readonly pages: Record<Entity, number>;
  readonly received: Record<Entity, Set<string>>;
}

export interface MachineConfig {
  /** How long an item handed out stays reserved for the daemon (ms). */
  readonly leaseMs: number;
  /** Failure records kept (oldest dropped first). */
  readonly maxFailures: number;
  /** Transaction summaries kept. */
  readonly maxHistory: number;
}

export const DEFAULT_MACHINE_CONFIG: MachineConfig = { leaseMs: 60_000, maxFailures: 1000, maxHistory: 50 };

const ok = <T>(value: T): MachineResult<T> => ({ ok: true, value });
const conflict = (error: string): MachineResult<never> => ({ ok: false, status: 409, error });

/** A snapshot of the current transaction, for the status view. */
export interface CurrentView {
  readonly transaction: number;
  readonly kind: TransactionKind;
  readonly entity?: Entity;
  readonly phase: string;
  readonly remaining?: number;
  readonly leasedId?: string;
  readonly leaseExpired?: boolean;
}

/**
 * One connection's state machine.
 *
 * @example
 * ```ts
 * const m = new ReverseConnectionMachine();
 * m.enqueue({ kind: 'pull', entity: 'products' });
 * m.initializePull('products', ['p1'], Date.now());
 * m.next('products', Date.now());            // {ok: true, value: {id: 'p1', redelivery: false}}
 * m.acknowledge('products', 'p1', 'succeded', undefined, Date.now());
 * m.readyForNext('products', Date.now());    // {ok: true, value: true}
 * m.hasMore('products', Date.now());         // {ok: true, value: 'done'}
 * ```
 */
export class ReverseConnectionMachine {
  private statusValue: ConnectionStatus = 'waiting';
  private readonly queue: TransactionRequest[] = [];
  private current: PullState | PushState | undefined;
  private transactionSeq = 0;
  readonly counts: Record<Entity, EntityCounts> = { products: emptyCounts(), orders: emptyCounts() };
  readonly failures: FailureRecord[] = [];
  readonly history: TransactionSummary[] = [];
  /** Per entity: the `last_updated` of the last item received by a normal push, exactly as sent (0 before any). */
  private readonly cursors: Record<Entity, number | string> = { products: 0, orders: 0 };
  private readonly config: MachineConfig;

  constructor(config: Partial<MachineConfig> = {}) {
    this.config = { ...DEFAULT_MACHINE_CONFIG, ...config };
  }

  // ---- reads ------------------------------------------------------------------------------

  get status(): ConnectionStatus {
    return this.statusValue;
  }

  /** What the service wants now: the running transaction's kind, else the queue head's, else idle. */
  mode(): Mode {
    return this.current?.kind ?? this.queue[0]?.kind ?? 'idle';
  }

  /** `GET ping`: `fetchingremote` when a push is wanted, `pulling` when a pull is, else `idle`. */
  ping(): 'fetchingremote' | 'pulling' | 'idle' {
    const kind = this.mode();
    return kind === 'idle' ? 'idle' : kind === 'pull' ? 'pulling' : 'fetchingremote';
  }

  /** `GET strategy`: the kind of push wanted (the running one's, else the queue head's; `push` otherwise). */
  strategy(): 'push' | 'pingsample' {
    return this.mode() === 'pingsample' ? 'pingsample' : 'push';
  }

  /** `GET cursoroffset`: where an incremental push of the current entity starts. */
  cursorOffset(): number | string {
    const e = this.entity();
    return this.cursors[e.ok ? e.value : 'products'];
  }

  /** The queued transactions (not the running one). */
  queued(): readonly TransactionRequest[] {
    return this.queue.map((t) => (t.kind === 'pull' ? { kind: 'pull', entity: t.entity, ...(t.ids ? { ids: [...t.ids] } : {}) } : { ...t }));
  }

  /**
   * The entity of the running transaction (a push: the one whose pages are expected now), else
   * the one the queued transaction starts with. 409 when nothing is queued, and when a push has
   * finished both entities (only the general finish is left).
   */
  entity(): MachineResult<Entity> {
    const c = this.current;
    if (c?.kind === 'pull') return ok(c.entity);
    if (c) return c.phase === 'done' ? conflict(`both entities of this ${c.kind} are finished: call the general finish`) : ok(c.phase);
    const head = this.queue[0];
    if (!head) return conflict('no transaction is queued for this connection');
    return ok(head.kind === 'pull' ? head.entity : 'products');
  }

  currentView(now: number): CurrentView | null {
    const c = this.current;
    if (!c) return null;
    if (c.kind === 'pull') {
      const leased = c.phase === 'leased';
      return {
        transaction: c.transaction,
        kind: 'pull',
        entity: c.entity,
        phase: c.entityFinished ? 'entity finished' : c.phase,
        remaining: c.ids.length - c.pos,
        ...(leased ? { leasedId: c.ids[c.pos], leaseExpired: now >= c.leaseUntil } : {}),
      };
    }
    return { transaction: c.transaction, kind: c.kind, phase: c.phase };
  }

  // ---- the queue --------------------------------------------------------------------------

  /** Adds a transaction; returns its position in the queue (0 = next). */
  enqueue(request: TransactionRequest): number {
    const copy: TransactionRequest =
      request.kind === 'pull' ? { kind: 'pull', entity: request.entity, ...(request.ids ? { ids: [...new Set(request.ids)] } : {}) } : { kind: request.kind };
    this.queue.push(copy);
    // DESIGN.md: the service moves `finished` back to `waiting` once it has the next transaction.
    if (this.statusValue === 'finished') this.statusValue = 'waiting';
    return this.queue.length - 1;
  }

  // ---- initialize -------------------------------------------------------------------------

  /** Which pull `initializePull` would start (checked before the service lists the item ids). */
  pullToInitialize(entity: Entity | undefined): MachineResult<{ entity: Entity; ids?: readonly string[]; repeat?: true }> {
    const c = this.current;
    if (this.statusValue === 'initialized' && c?.kind === 'pull' && (entity === undefined || entity === c.entity)) return ok({ entity: c.entity, repeat: true });
    if (this.statusValue !== 'waiting') return conflict(`pull/initialize needs connectionstatus "waiting", it is "${this.statusValue}"`);
    const head = this.queue[0];
    if (!head) return conflict('no transaction is queued for this connection');
    if (head.kind !== 'pull') return conflict(`the queued transaction is a ${head.kind}, not a pull (see GET mode)`);
    if (entity !== undefined && entity !== head.entity) return conflict(`the queued pull is of ${head.entity}, not ${entity} (see GET entity)`);
    return ok({ entity: head.entity, ...(head.ids ? { ids: head.ids } : {}) });
  }

  /** Starts the queued pull with the given item ids (in delivery order). */
  initializePull(entity: Entity | undefined, ids: readonly string[], now: number): MachineResult<ConnectionStatus> {
    const check = this.pullToInitialize(entity);
    if (!check.ok) return check;
    if (check.value.repeat) return ok(this.statusValue);
    this.queue.shift();
    this.current = {
      kind: 'pull',
      transaction: ++this.transactionSeq,
      entity: check.value.entity,
      startedAt: now,
      ids: [...new Set(ids)],
      pos: 0,
      phase: 'ready',
      headDelivered: false,
      leaseUntil: 0,
      outcomes: new Map(),
      entityFinished: false,
    };
    this.statusValue = 'initialized';
    return ok(this.statusValue);
  }

  /** Starts the queued push (`push/initialize`) or sample push (`pingsample/initialize`); a repeat on the running one changes nothing. */
  initializePush(kind: 'push' | 'pingsample', now: number): MachineResult<ConnectionStatus> {
    if (this.statusValue === 'initialized' && this.current?.kind === kind) return ok(this.statusValue);
    if (this.statusValue !== 'waiting') return conflict(`${kind}/initialize needs connectionstatus "waiting", it is "${this.statusValue}"`);
    const head = this.queue[0];
    if (!head) return conflict('no transaction is queued for this connection');
    if (head.kind !== kind) return conflict(`the queued transaction is a ${head.kind}, not a ${kind} (see GET ping and GET strategy)`);
    this.queue.shift();
    this.current = {
      kind: head.kind,
      transaction: ++this.transactionSeq,
      startedAt: now,
      phase: 'products',
      pages: { products: 0, orders: 0 },
      received: { products: new Set(), orders: new Set() },
    };
    this.statusValue = 'initialized';
    return ok(this.statusValue);
  }

  // ---- the pull item cycle ----------------------------------------------------------------

  private pull(entity: Entity, call: string): MachineResult<PullState> {
    const c = this.current;
    if (this.statusValue !== 'initialized' || c?.kind !== 'pull') return conflict(`${call}: no pull transaction is initialized`);
    if (c.entity !== entity) return conflict(`${call}: the pull in progress is of ${c.entity}, not ${entity}`);
    return ok(c);
  }

  /** A lease that ran out puts its item back at the head of the transaction, to be handed out again. */
  private expireLease(c: PullState, now: number): void {
    if (c.phase === 'leased' && now >= c.leaseUntil) c.phase = 'ready';
  }

  hasMore(entity: Entity, now: number): MachineResult<HasMore> {
    const r = this.pull(entity, `pull/${entity}/hasmore`);
    if (!r.ok) return r;
    const c = r.value;
    this.expireLease(c, now);
    if (c.entityFinished) return ok('done');
    if (c.phase === 'acked') return ok('waiting');
    return ok(c.phase === 'leased' || c.pos < c.ids.length ? 'ready' : 'done');
  }

  /**
   * Hands out the item at the head of the transaction under a lease. While that item is not
   * acknowledged, every `next` returns it again (renewing the lease): a daemon that died mid-item
   * gets the same item, so nothing is lost or doubled.
   */
  next(entity: Entity, now: number): MachineResult<{ id: string; redelivery: boolean }> {
    const r = this.pull(entity, `pull/${entity}/next`);
    if (!r.ok) return r;
    const c = r.value;
    if (c.entityFinished) return conflict(`pull/${entity}/next: the ${entity} pull is finished`);
    if (c.phase === 'acked') return conflict(`pull/${entity}/next: the previous item is acknowledged but readyfornext was not read yet`);
    if (c.pos >= c.ids.length) return conflict(`pull/${entity}/next: no item left (hasmore is "done")`);
    const id = c.ids[c.pos];
    const redelivery = c.headDelivered;
    if (redelivery) this.counts[entity].redelivered++;
    else this.counts[entity].delivered++;
    c.headDelivered = true;
    c.phase = 'leased';
    c.leaseUntil = now + this.config.leaseMs;
    return ok({ id, redelivery });
  }

  /**
   * `succeded` / `failed` for an item. Accepted once, for the item handed out (also after its
   * lease ran out, as long as no other item was handed out since). A repeat with the same outcome
   * is answered `{duplicate: true}` and changes nothing; a repeat with the other outcome, or an
   * acknowledgement of an item not handed out, is a 409.
   */
  acknowledge(entity: Entity, id: string, outcome: Outcome, report: StorageFailureReport | undefined, now: number): MachineResult<{ duplicate: boolean }> {
    const call = `pull/${entity}/{id}/${outcome}`;
    const r = this.pull(entity, call);
    if (!r.ok) return r;
    const c = r.value;
    const previous = c.outcomes.get(id);
    if (previous !== undefined) {
      if (previous === outcome) return ok({ duplicate: true });
      return conflict(`${call}: this item was already acknowledged as ${previous}`);
    }
    if (c.pos >= c.ids.length || c.ids[c.pos] !== id || !c.headDelivered || c.entityFinished) {
      return conflict(`${call}: this item is not the item handed out by next`);
    }
    c.outcomes.set(id, outcome);
    c.pos++;
    c.phase = 'acked';
    c.headDelivered = false;
    if (outcome === 'succeded') this.counts[entity].succeeded++;
    else {
      this.counts[entity].failed++;
      this.recordFailure({ transaction: c.transaction, entity, id, source: 'daemon', error: report?.error ?? '', reasons: report?.reasons ?? [], at: now });
    }
    return ok({ duplicate: false });
  }

  /**
   * The service could not hand out the leased item (gone from its store, not convertible): it is
   * recorded as skipped, with the reason, and the cycle moves on without a `readyfornext`.
   */
  skip(entity: Entity, id: string, reason: string, now: number): MachineResult<void> {
    const r = this.pull(entity, 'skip');
    if (!r.ok) return r;
    const c = r.value;
    if (c.phase !== 'leased' || c.ids[c.pos] !== id) return conflict('skip: this item is not the item handed out');
    c.outcomes.set(id, 'skipped');
    c.pos++;
    c.phase = 'ready';
    c.headDelivered = false;
    this.counts[entity].skipped++;
    this.recordFailure({ transaction: c.transaction, entity, id, source: 'service', error: reason, reasons: [], at: now });
    return ok(undefined);
  }

  /** `true` once the last acknowledgement is processed (it closes it); `false` while an item is out. */
  readyForNext(entity: Entity, now: number): MachineResult<boolean> {
    const r = this.pull(entity, `pull/${entity}/readyfornext`);
    if (!r.ok) return r;
    const c = r.value;
    this.expireLease(c, now);
    if (c.phase === 'acked') c.phase = 'ready';
    return ok(c.phase !== 'leased');
  }

  /** `pull/{entity}/finish`: every item acknowledged. A repeat is answered `{duplicate: true}`. */
  finishPullEntity(entity: Entity): MachineResult<{ duplicate: boolean }> {
    const r = this.pull(entity, `pull/${entity}/finish`);
    if (!r.ok) return r;
    const c = r.value;
    if (c.entityFinished) return ok({ duplicate: true });
    const open = c.ids.length - c.pos;
    if (open > 0) return conflict(`pull/${entity}/finish: ${open} item(s) not acknowledged yet (hasmore is not "done")`);
    c.entityFinished = true;
    c.phase = 'ready';
    return ok({ duplicate: false });
  }

  /** `pull/finish`: ends the pull transaction (status `finishing`; `complete` makes it `finished`). */
  finishPull(): MachineResult<ConnectionStatus> {
    const c = this.current;
    if (this.statusValue !== 'initialized' || c?.kind !== 'pull') return conflict('pull/finish: no pull transaction is initialized');
    if (!c.entityFinished) return conflict(`pull/finish: call pull/${c.entity}/finish first`);
    this.statusValue = 'finishing';
    return ok(this.statusValue);
  }

  // ---- push -------------------------------------------------------------------------------

  private push(kind: 'push' | 'pingsample', call: string): MachineResult<PushState> {
    const c = this.current;
    if (this.statusValue !== 'initialized' || !c || c.kind === 'pull') return conflict(`${call}: no push transaction is initialized`);
    if (c.kind !== kind) return conflict(`${call}: the transaction in progress is a ${c.kind}, use its ${c.kind} paths`);
    return ok(c);
  }

  /** Whether a page of `entity` may be received now (checked before the body is stored). */
  pageAllowed(kind: 'push' | 'pingsample', entity: Entity): MachineResult<void> {
    const call = `${kind}/${entity}`;
    const r = this.push(kind, call);
    if (!r.ok) return r;
    const c = r.value;
    if (c.phase !== entity) {
      return conflict(c.phase === 'done' || entity === 'products' ? `${call}: the ${entity} part of this ${kind} is finished` : `${call}: finish the products first`);
    }
    return ok(undefined);
  }

  /** Records a received page (after the service has stored it). */
  recordPage(kind: 'push' | 'pingsample', entity: Entity, ids: readonly string[], lastUpdated?: number | string): MachineResult<{ received: number }> {
    const allowed = this.pageAllowed(kind, entity);
    if (!allowed.ok) return allowed;
    const c = this.current as PushState;
    c.pages[entity]++;
    if (kind === 'push' && lastUpdated !== undefined) this.cursors[entity] = lastUpdated;
    for (const id of ids) {
      if (c.received[entity].has(id)) continue;
      c.received[entity].add(id);
      if (kind === 'push') this.counts[entity].received++;
      else this.counts[entity].sampled++;
    }
    return ok({ received: ids.length });
  }

  /**
   * An entity's push finish. `path` is the entity in the URL. The spec prints
   * `push/products/finish` for the normal order finish too: that path finishes the products while
   * products are expected, and the orders once the products are finished. A repeat of a finish
   * already done is answered `{duplicate: true}`.
   */
  finishPushEntity(kind: 'push' | 'pingsample', path: Entity): MachineResult<{ finished: Entity; duplicate: boolean }> {
    const call = `${kind}/${path}/finish`;
    const r = this.push(kind, call);
    if (!r.ok) return r;
    const c = r.value;
    if (c.phase === 'done') return ok({ finished: path, duplicate: true });
    if (c.phase === 'products') {
      if (path === 'orders') return conflict(`${call}: finish the products first`);
      c.phase = 'orders';
      return ok({ finished: 'products', duplicate: false });
    }
    // phase orders
    if (path === 'products' && kind === 'pingsample') return ok({ finished: 'products', duplicate: true });
    c.phase = 'done';
    return ok({ finished: 'orders', duplicate: false });
  }

  /** `push/finish` / `pingsample/finish`: ends the push (status `finishing`). */
  finishPush(kind: 'push' | 'pingsample'): MachineResult<ConnectionStatus> {
    const call = `${kind}/finish`;
    const r = this.push(kind, call);
    if (!r.ok) return r;
    if (r.value.phase !== 'done') return conflict(`${call}: finish the ${r.value.phase} first`);
    this.statusValue = 'finishing';
    return ok(this.statusValue);
  }

  // ---- completion -------------------------------------------------------------------------

  /**
   * Completes a finalization: `finishing → finished`, and on to `waiting` when another
   * transaction is queued.
   */
  complete(now: number): MachineResult<ConnectionStatus> {
    const c = this.current;
    if (this.statusValue !== 'finishing' || !c) return conflict('nothing is finishing');
    const summary: TransactionSummary =
      c.kind === 'pull'
        ? { transaction: c.transaction, kind: 'pull', entity: c.entity, startedAt: c.startedAt, finishedAt: now, items: c.ids.length }
        : { transaction: c.transaction, kind: c.kind, startedAt: c.startedAt, finishedAt: now, items: { products: c.received.products.size, orders: c.received.orders.size } };
    this.history.push(summary);
    if (this.history.length > this.config.maxHistory) this.history.shift();
    this.current = undefined;
    this.statusValue = this.queue.length > 0 ? 'waiting' : 'finished';
    return ok(this.statusValue);
  }

  private recordFailure(f: FailureRecord): void {
    this.failures.push(f);
    if (this.failures.length > this.config.maxFailures) this.failures.shift();
  }
}

function emptyCounts(): EntityCounts {
  return { delivered: 0, redelivered: 0, succeeded: 0, failed: 0, skipped: 0, received: 0, sampled: 0 };
}
