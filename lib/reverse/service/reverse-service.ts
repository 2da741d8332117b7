/**
 * The service side of the reverse connection, framework-agnostic: `handle()` takes one daemon call
 * (method, connection key, path after the key, parsed body) and answers `{status, body}`; the
 * bindings (`lib/reverse/bindings/`) only read bodies and send answers.
 *
 * A call is matched to its route in the contract's `REVERSE_ROUTES` and run by the handler of that
 * name (`reverse-handlers.ts`) against the connection's state machine. Per connection, calls are
 * serialized; each call reads the connection's state record from the state store (the machine in
 * memory is reused while the record is unchanged), and what the call changed is written back, in
 * one batch guarded by that record, before it is answered: services over one state store serve the
 * same connections (replicas; `withConnection`). A call that fails (store or state store) answers
 * 500 and leaves the connection as last saved: it is read back on the next call.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { KeyedMutex } from '../../adapter';
import type { DialectName } from '../../contract/dialects';
import { deeperThan, INTERFACE_LIMITS, MAX_JSON_DEPTH } from '../../contract/limits';
import { ENTITIES } from '../../contract/entities';
import { z } from 'zod';
import { opt, readOption } from '../../options';
import type { ConnectionStatus, Mode, PingStatus, PushStrategy } from '../../contract/messages';
import { matchReverseRoute, type ReverseRoute } from '../../contract/reverse-routes';
import { FORBIDDEN_CHARACTERS, hasForbiddenCharacter } from '../../contract/webhook';
import type { Entity } from '../../contract/entities';
import { ReverseConflictError, ReverseStateError, UnknownConnectionError } from '../reverse-errors';
import { badRequest, ROUTE_HANDLERS, type CallContext, type ReverseResponse } from './reverse-handlers';
import type { CurrentView, EntityCounts, FailureRecord, IdMapping, QueuedView, TransactionRequest, TransactionSummary } from './reverse-machine';
import { ConnectionPersistence, type LoadedConnection, type SampleRecord } from './reverse-persistence';
import type { StateChange } from './reverse-state-store';
import { CallThrottle, type ThrottleCounts } from './reverse-throttle';
import { connectionsOf, digestOf, parseServiceOptions, type ConnectionConfig, type ReverseConnectionOption, type ReverseServiceOptions, type ServiceConfig } from './reverse-service-options';
import { guardAdapter, type GuardedAdapter } from '../../adapter-guard';

export { REVERSE_BASE_PATH } from '../../contract/reverse-routes';
export type { ReverseResponse } from './reverse-handlers';
export type { SampleRecord } from './reverse-persistence';
export type { ConnectionInfo, ReverseConnectionOption, ReverseServiceOptions } from './reverse-service-options';

/** One daemon call, framework-free. */
export interface ReverseRequest {
  readonly method: string;
  /** The `{connection_key}` path segment, decoded. */
  readonly key: string;
  /** The rest of the path after the key, e.g. `/pull/products/next` (segments as received, not decoded). */
  readonly path: string;
  /** The parsed JSON body (`undefined` when there was none). */
  readonly body?: unknown;
}

/** The operator's view of one connection (`GET /connections/:name/status`). The key never appears in it. */
export interface ConnectionStatusView {
  readonly connection: string;
  readonly dialect: DialectName;
  readonly connectionstatus: ConnectionStatus;
  /** What `GET ping` answers now. */
  readonly ping: PingStatus;
  readonly strategy: PushStrategy;
  readonly mode: Mode;
  /** Per entity, the `last_updated` of the last item a normal push received, as sent. */
  readonly cursoroffset: { readonly products: number | string; readonly orders: number | string };
  readonly current: CurrentView | null;
  readonly queue: readonly QueuedView[];
  readonly products: EntityCounts;
  readonly orders: EntityCounts;
  /** The last failure records (daemon reports, items the service skipped, push items refused), oldest first. */
  readonly failures: readonly FailureRecord[];
  /** The latest links of the id map (`succeded` bodies that carried another id, oldest first, the last `keepMappings`); the map keeps all. */
  readonly idMap: readonly IdMapping[];
  /** The pace of this connection's calls in this process: answers delayed (and for how long in all, ms), calls refused for waiting too long. */
  readonly throttle: ThrottleCounts & { readonly maxCallsPerSecond: number };
  readonly lastSample: SampleRecord | null;
  /** The last transactions that ended (finished, expired or cancelled), oldest first. */
  readonly transactions: readonly TransactionSummary[];
}

/** The service side of the reverse connection. */
export interface ReverseService {
  /** Items a push page may hold (`maxPushPageItems`): the bindings refuse a longer array before parsing a body. */
  readonly maxPushPageItems: number;
  /** Answers one daemon call. Never rejects: failures become a 500 `{error}`. */
  handle(request: ReverseRequest): Promise<ReverseResponse>;
  /**
   * Queues a transaction for a connection (by name); resolves with its position (0 = next). The
   * deployed service's buttons: "Fetch updates" queues `{kind: "push"}`, "Send updates" queues
   * `{kind: "pull"}` (products, then orders). A bad request throws `InvalidOptionError` at once.
   */
  enqueue(connection: string, request: TransactionRequest): Promise<number>;
  /** Ends the running transaction as `cancelled` (`transaction`, when given, must be it); resolves with its number. */
  cancel(connection: string, transaction?: number): Promise<number>;
  /** The operator view of a connection, by name. */
  status(connection: string): Promise<ConnectionStatusView>;
  /** The operator view of every connection, in the order they were configured. */
  statuses(): Promise<ConnectionStatusView[]>;
  /** The name of the connection `ref` names: a name, or a key (constant-time lookup). */
  connectionOf(ref: string): string | undefined;
  /** Whether a connection has this key (constant-time lookup). */
  knows(key: string): boolean;
  /** The names of the connections served. */
  connectionNames(): string[];
  /**
   * Replaces the connections served (the registry changed): new ones are served at once, changed
   * keys or dialects apply to the next call, and a removed connection's running transaction ends
   * as `cancelled`; its daemon's calls are then answered 404 with the members a deployed daemon
   * reads as "nothing to do" (`connectionstatus: "idle"`, `hasmore: "done"`, …; the kit's daemon
   * stops at a 404). Its state stays in the state store: added again under the same name, it
   * resumes its queue and counters. Throws `InvalidOptionError` (changing nothing) on a bad list.
   * Resolves once the removed connections are wound down.
   */
  setConnections(connections: ReadonlyArray<string | ReverseConnectionOption>): Promise<void>;
  /** Waits for the calls in progress and closes the state store when the service created it. */
  close(): Promise<void>;
}

interface Runtime {
  config: ConnectionConfig;
  readonly persistence: ConnectionPersistence;
  loaded?: LoadedConnection;
  /** `progressOf` as this process last saw it. */
  progress?: number;
  /** The connection's own store (`adapterFor`), opened on first use. */
  adapter?: Promise<GuardedAdapter>;
}

/** Runs of one call when other services keep changing its connection meanwhile (each run re-reads the state). */
const MAX_ATTEMPTS = 20;
const NOT_FOUND: ReverseResponse = { status: 404, body: { error: 'not found' } };
/**
 * The answer to a daemon of a removed connection: 404 (the kit's daemon stops at once) whose body
 * also carries, for the calls deployed daemons poll, the member they read as "nothing to do"
 * (they ignore status codes and read members: spec/click2sync-as-deployed.md §2.1): `ping` idle,
 * `upstreamstatus` finished, `hasmore` done, `readyfornext` true, `mode` idle.
 */
const REMOVED_ERROR = 'this connection was removed from the service';
const REMOVED_MEMBERS: Partial<Record<string, Record<string, unknown>>> = {
  ping: { connectionstatus: 'idle' },
  mode: { mode: 'idle' },
  upstreamstatus: { upstreamstatus: 'finished', connectionstatus: 'finished' },
  hasmore: { hasmore: 'done' },
  readyfornext: { ready: true },
};
const FAILED_STORE = "the service's store failed; try the call again";
const FAILED_STATE = "the service could not read or save the connection's state; try the call again";

/** The ids a raw `{id}` path segment may mean: as sent, and percent-decoded (deployed daemons send ids raw). */
function pathIdsOf(raw: string): { ok: true; ids: string[] } | { ok: false; error: string } {
  let decoded: string | undefined;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    decoded = undefined; // a raw `%` in an id: only the raw form can match
  }
  const ids = decoded !== undefined && decoded !== raw ? [raw, decoded] : [raw];
  if (ids.some(hasForbiddenCharacter)) return { ok: false, error: `the item id in the path must not contain ${FORBIDDEN_CHARACTERS}` };
  return { ok: true, ids };
}

/** The answer to a call of a removed connection (see `REMOVED_MEMBERS`). */
function removedAnswer(request: ReverseRequest): ReverseResponse {
  const match = matchReverseRoute(String(request.method).toUpperCase(), String(request.path));
  const members = match.ok ? REMOVED_MEMBERS[match.route.name] : undefined;
  return { status: 404, body: { error: REMOVED_ERROR, ...members } };
}

/**
 * How far a connection's transactions have moved, from its shared state: items acknowledged by
 * the daemon (not those the service gave up) and items new to a push. The pace's progress credit
 * (`reverse-throttle.ts`) is given when it grows, whichever replica's call made it grow: each
 * replica reads it from the state its calls load, so a daemon alternating between replicas earns
 * its credit on both.
 */
function progressOf(loaded: LoadedConnection | undefined): number | undefined {
  if (!loaded) return undefined;
  let p = 0;
  for (const c of Object.values(loaded.machine.counts)) p += c.succeeded + c.failed - c.unacknowledged + c.received + c.sampled;
  return p;
}

/** A queued pull's ids: the contract's id text (non-empty, at most 1,024 characters, no forbidden character). */
const QUEUED_IDS_RULE = `expected an array of non-empty ids without ${FORBIDDEN_CHARACTERS}`;
const QUEUED_ID = z
  .string({ error: QUEUED_IDS_RULE })
  .min(1, QUEUED_IDS_RULE)
  .max(1024, QUEUED_IDS_RULE)
  .refine((x) => !hasForbiddenCharacter(x), QUEUED_IDS_RULE);
const KIND_RULE = 'expected "pull", "push" or "pingsample"';

/**
 * A transaction request (`enqueue`, the operator route's queue body), declared once: members a
 * request of its kind does not take are dropped, as the deployed service's buttons send extra ones.
 */
const TRANSACTION_REQUEST = z.discriminatedUnion(
  'kind',
  [
    z
      .object({
        kind: z.literal('pull'),
        entity: z.enum(ENTITIES, { error: `expected ${ENTITIES.map((e) => JSON.stringify(e)).join(' or ')} (or none: every entity, in order)` }).optional(),
        ids: z.array(QUEUED_ID, { error: QUEUED_IDS_RULE }).optional(),
      })
      .superRefine((r, ctx) => {
        if (r.ids !== undefined && r.entity === undefined) ctx.addIssue({ code: 'custom', path: ['ids'], message: 'a pull of given ids needs its entity' });
      }),
    z.object({ kind: z.literal('push'), full: opt.boolean().optional() }),
    z.object({ kind: z.literal('pingsample') }),
  ],
  { error: KIND_RULE },
);

function checkRequest(request: TransactionRequest): TransactionRequest {
  const r = readOption('request', TRANSACTION_REQUEST, request);
  if (r.kind === 'pull') return { kind: 'pull', ...(r.entity ? { entity: r.entity } : {}), ...(r.ids ? { ids: r.ids } : {}) };
  if (r.kind === 'push') return { kind: 'push', ...(r.full ? { full: true } : {}) };
  return { kind: 'pingsample' };
}

/**
 * Creates the service side of the reverse connection.
 *
 * @example
 * ```ts
 * import { createReverseService, createReverseNodeHandler } from 'storebridge/reverse';
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 * import { createServer } from 'node:http';
 *
 * const service = createReverseService({ adapter: createMemoryAdapter(), connections: [{ key: process.env.CONNECTION_KEY!, name: 'shop-1', dialect: 'click2sync' }] });
 * await service.enqueue('shop-1', { kind: 'pull' });     // "Send updates": products, then orders
 * createServer(createReverseNodeHandler({ service, answerRoot: true })).listen(8080);
 * ```
 */
export function createReverseService(options: ReverseServiceOptions): ReverseService {
  return new ReverseServiceCore(parseServiceOptions(options));
}

/** Runtimes by the hex digest of their key (keys are unique: connectionsOf refuses a key used twice). */
function digestIndex(runtimes: readonly Runtime[]): Map<string, Runtime> {
  return new Map(runtimes.map((r) => [r.config.digest.toString('hex'), r]));
}

/** The service: the connections by name and by key, each with its state, one call at a time per connection. */
class ReverseServiceCore implements ReverseService {
  private runtimes: Runtime[];
  private byName: Map<string, Runtime>;
  /**
   * The connections by the hex SHA-256 of their key: a call finds its connection in one lookup, not
   * a comparison with every connection's digest (O(N) per call in a fleet). Looking up a digest
   * tells a timing observer nothing about the key itself, so no constant-time compare is needed.
   */
  private byDigest: Map<string, Runtime>;
  /** Digests of connections removed while this process runs (their daemons get the removed answer). */
  private readonly removed = new Set<string>();
  private readonly mutex = new KeyedMutex();
  private readonly machineConfig: { leaseMs: number; transactionIdleMs: number; maxDeliveries: number };
  private readonly throttle: CallThrottle;
  readonly maxPushPageItems: number;

  constructor(private readonly config: ServiceConfig) {
    this.runtimes = config.connections.map((c) => this.runtimeOf(c));
    this.byName = new Map(this.runtimes.map((r) => [r.config.name, r]));
    this.byDigest = digestIndex(this.runtimes);
    this.machineConfig = { leaseMs: config.leaseMs, transactionIdleMs: config.transactionIdleMs, maxDeliveries: config.maxDeliveries };
    this.throttle = new CallThrottle(config.throttle);
    this.maxPushPageItems = config.pageBounds.maxItems;
  }

  private runtimeOf(c: ConnectionConfig): Runtime {
    return { config: c, persistence: new ConnectionPersistence(this.config.stateStore, c.name, { keepFailures: this.config.keepFailures, keepMappings: this.config.keepMappings }) };
  }

  /** The connection's store: its own (`adapterFor`, opened once) or the service's. */
  private adapterOf(r: Runtime): Promise<GuardedAdapter> {
    if (!this.config.adapterFor) return Promise.resolve(this.config.adapter!);
    r.adapter ??= Promise.resolve(this.config.adapterFor({ name: r.config.name, dialect: r.config.dialect.name })).then(guardAdapter);
    // A failed open is tried again on the next call.
    r.adapter.catch(() => (r.adapter = undefined));
    return r.adapter;
  }

  /** Constant time in the key: both sides digested, every connection compared, no early exit. */
  private findByKey(key: string): Runtime | undefined {
    return this.byDigest.get(digestOf(key).toString('hex'));
  }

  private byNameOrThrow(name: string): Runtime {
    const r = this.byName.get(name);
    if (!r) throw new UnknownConnectionError(name);
    return r;
  }

  /**
   * Runs `fn` on the connection, one call at a time in this process: reads the connection's state
   * record (one keyed read; the machine in memory is reused while the record is unchanged), lets a
   * transaction with no daemon call for too long expire, then saves what changed (with `extra`
   * changes) in one batch guarded by the record as read. When another service over the same store
   * (a replica) changed the connection in between, nothing is written: the state is read again and
   * `fn` runs again on it (up to `MAX_ATTEMPTS` times), so the call is answered as if it had come
   * after the other service's. `fn` must therefore leave nothing but its store writes behind (they
   * are idempotent: a page upserted twice is the same page); `done` runs once, after the save.
   * On any failure the connection is dropped from memory, to be read back from the store.
   */
  private withConnection<R>(r: Runtime, fn: (loaded: LoadedConnection) => Promise<{ result: R; extra?: StateChange[]; done?: () => void }>): Promise<R> {
    return this.mutex.run(r.config.name, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          const loaded = await this.load(r);
          loaded.machine.expire(this.config.now());
          const { result, extra, done } = await fn(loaded);
          let saved: boolean;
          try {
            saved = await r.persistence.save(loaded, extra);
          } catch (err) {
            throw new ReverseStateError(r.config.name, 'save', { cause: err });
          }
          if (saved) {
            done?.();
            return result;
          }
          r.loaded = undefined;
          this.config.metrics?.conflict(r.config.name);
          if (attempt >= MAX_ATTEMPTS) throw new ReverseStateError(r.config.name, 'save', { cause: new Error(`another service changed the connection ${MAX_ATTEMPTS} times during this call`) });
          // A short random pause, so that two replicas retrying the same moment do not collide again.
          await delay(Math.floor(Math.random() * 5 * attempt));
        } catch (err) {
          r.loaded = undefined;
          throw err;
        }
      }
    });
  }

  private async load(r: Runtime): Promise<LoadedConnection> {
    try {
      return (r.loaded = await r.persistence.fresh(this.machineConfig, r.loaded, this.config.stateShared));
    } catch (err) {
      throw new ReverseStateError(r.config.name, 'load', { cause: err });
    }
  }

  private async view(r: Runtime, loaded: LoadedConnection): Promise<ConnectionStatusView> {
    const m = loaded.machine;
    let records;
    try {
      records = await r.persistence.recordsOf(loaded);
    } catch (err) {
      throw new ReverseStateError(r.config.name, 'load', { cause: err });
    }
    return {
      connection: r.config.name,
      dialect: r.config.dialect.name,
      connectionstatus: m.status,
      ping: m.ping(),
      strategy: m.strategy(),
      mode: m.mode(),
      cursoroffset: { ...m.cursors },
      current: m.currentView(this.config.now()),
      queue: m.queued(),
      ...m.countsByEntity(),
      failures: records.failures,
      idMap: records.mappings,
      lastSample: loaded.sample,
      transactions: [...m.history],
      throttle: { ...this.throttle.countsOf(r.config.name), maxCallsPerSecond: this.config.throttle.perSecond },
    };
  }

  private run(r: Runtime, route: ReverseRoute, pathIds: string[], body: unknown): Promise<ReverseResponse> {
    return this.withConnection(r, async (loaded) => {
      let sample: SampleRecord | undefined;
      const extra: StateChange[] = [];
      const before = this.config.metrics && structuredClone(loaded.machine.counts);
      // The call's deadline, made when a handler first waits on the store: a timer per call would
      // cost every poll (most calls never touch the store) and wake the process a minute later.
      let signal: AbortSignal | undefined;
      const ctx: CallContext = {
        route,
        machine: loaded.machine,
        loaded,
        identity: r.persistence.identity,
        connection: r.config.name,
        dialect: r.config.dialect,
        store: () => this.adapterOf(r),
        pathIds,
        body,
        now: this.config.now(),
        get signal() {
          return (signal ??= AbortSignal.timeout(INTERFACE_LIMITS.requestTimeMs));
        },
        sampleKeep: this.config.sampleKeep,
        pageBounds: this.config.pageBounds,
        keepSample: (s) => {
          sample = s;
        },
        persist: (changes) => {
          extra.push(...changes);
        },
      };
      const result = await ROUTE_HANDLERS[route.name](ctx);
      if (sample) loaded.sample = sample;
      const after = before && structuredClone(loaded.machine.counts);
      return {
        result,
        extra: sample ? [...extra, r.persistence.sampleChange(sample)] : extra,
        done: after ? () => this.config.metrics!.counts(r.config.name, before, after) : undefined,
      };
    });
  }

  async handle(request: ReverseRequest): Promise<ReverseResponse> {
    const digest = digestOf(typeof request.key === 'string' ? request.key : '').toString('hex');
    const r = this.byDigest.get(digest);
    if (!r) return this.removed.has(digest) ? removedAnswer(request) : NOT_FOUND;
    const name = r.config.name;
    const turn = this.throttle.turn(name);
    if ('refused' in turn) {
      this.config.metrics?.call(name, 'throttled', 429);
      return { status: 429, body: { error: `too many calls at once on this connection (more than ${this.config.throttle.perSecond} a second); call again after the answer to the previous one` }, retryAfterSeconds: Math.ceil(turn.retryAfterMs / 1000) };
    }
    if (turn.delayMs > 0) {
      this.config.metrics?.delayed(name, turn.delayMs / 1000);
      await delay(turn.delayMs);
    }
    const response = await this.dispatch(r, request);
    const progress = progressOf(r.loaded);
    if (progress !== undefined) {
      if (r.progress !== undefined && progress > r.progress) this.throttle.credit(name);
      r.progress = progress;
    }
    this.config.metrics?.call(name, response.call, response.status);
    return { status: response.status, body: response.body, ...(turn.busy ? { close: true } : {}) };
  }

  /** A call past the pace: route, path id and depth checks, then the handler. */
  private async dispatch(r: Runtime, request: ReverseRequest): Promise<ReverseResponse & { readonly call: string }> {
    const method = String(request.method).toUpperCase();
    const match = matchReverseRoute(method, String(request.path));
    if (!match.ok) return { call: 'unmatched', ...(match.status === 405 ? { status: 405, body: { error: `method not allowed here; use ${match.allow}` } } : NOT_FOUND) };
    const call = match.route.name;
    const ids = match.id === undefined ? { ok: true as const, ids: [] } : pathIdsOf(match.id);
    if (!ids.ok) return { call, ...badRequest(ids.error) };
    if (deeperThan(request.body, MAX_JSON_DEPTH)) return { call, ...badRequest(`the body is nested more than ${MAX_JSON_DEPTH} levels deep`) };
    try {
      return { call, ...(await this.run(r, match.route, ids.ids, request.body)) };
    } catch (err) {
      try {
        this.config.onError(err, { connection: r.config.name, call: `${method} {P}${match.route.path.replace(':id', '{id}')}` });
      } catch {
        // A throwing log hook must not turn a 500 into a crash.
      }
      return { call, status: 500, body: { error: err instanceof ReverseStateError ? FAILED_STATE : FAILED_STORE } };
    }
  }

  enqueue(name: string, request: TransactionRequest): Promise<number> {
    const r = this.byNameOrThrow(name);
    const checked = checkRequest(request);
    return this.withConnection(r, async (loaded) => ({ result: loaded.machine.enqueue(checked) }));
  }

  cancel(name: string, transaction?: number): Promise<number> {
    const r = this.byNameOrThrow(name);
    if (transaction !== undefined) readOption('transaction', opt.int(), transaction);
    return this.withConnection(r, async (loaded) => {
      const result = loaded.machine.cancel(this.config.now(), transaction);
      if (!result.ok) throw new ReverseConflictError(result.error);
      return { result: result.value };
    });
  }

  status(name: string): Promise<ConnectionStatusView> {
    const r = this.byNameOrThrow(name);
    return this.withConnection(r, async (loaded) => ({ result: await this.view(r, loaded) }));
  }

  statuses(): Promise<ConnectionStatusView[]> {
    return Promise.all(this.runtimes.map((r) => this.withConnection(r, async (loaded) => ({ result: await this.view(r, loaded) }))));
  }

  connectionOf(ref: string): string | undefined {
    if (this.byName.has(ref)) return ref;
    return this.findByKey(ref)?.config.name;
  }

  knows(key: string): boolean {
    return this.findByKey(key) !== undefined;
  }

  connectionNames(): string[] {
    return this.runtimes.map((r) => r.config.name);
  }

  async setConnections(connections: ReadonlyArray<string | ReverseConnectionOption>): Promise<void> {
    readOption('connections', z.array(z.unknown(), { error: 'expected an array of keys or {key | keyDigest, name, dialect}' }), connections);
    const next = connectionsOf(connections, this.config.defaultDialect);
    const names = new Set(next.map((c) => c.name));
    const gone = this.runtimes.filter((r) => !names.has(r.config.name));
    this.runtimes = next.map((c) => {
      const r = this.byName.get(c.name);
      if (!r) return this.runtimeOf(c);
      r.config = c; // a new key or dialect: the next call uses it; the state stays
      return r;
    });
    this.byName = new Map(this.runtimes.map((r) => [r.config.name, r]));
    this.byDigest = digestIndex(this.runtimes);
    const live = new Set(this.byDigest.keys());
    for (const d of this.removed) if (live.has(d)) this.removed.delete(d);
    for (const r of gone) if (!live.has(r.config.digest.toString('hex'))) this.removed.add(r.config.digest.toString('hex'));
    await Promise.all(gone.map((r) => this.windDown(r)));
  }

  /** A removed connection: its running transaction ends as cancelled (state kept), its store closed. */
  private async windDown(r: Runtime): Promise<void> {
    try {
      await this.withConnection(r, async (loaded) => {
        const c = loaded.machine.cancel(this.config.now());
        return { result: c.ok };
      });
    } catch (err) {
      this.config.onError(err, { connection: r.config.name, call: 'remove connection' });
    }
    await this.closeAdapter(r);
  }

  private async closeAdapter(r: Runtime): Promise<void> {
    const opened = r.adapter;
    r.adapter = undefined;
    if (!opened) return;
    try {
      await (await opened).close?.();
    } catch {
      // A store that failed to open or to close has nothing left to release here.
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.runtimes.map((r) => this.mutex.run(r.config.name, async () => undefined)));
    await Promise.all(this.runtimes.map((r) => this.closeAdapter(r)));
    if (this.config.ownsStateStore) await this.config.stateStore.close?.();
  }
}
