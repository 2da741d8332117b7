/**
 * The service side of the reverse connection, framework-agnostic: `handle()` takes one daemon call
 * (method, connection key, path after the key, parsed body) and answers `{status, body}`. The
 * Express binding (`reverse-router.ts`) only parses bodies and sends the answer.
 *
 * Per connection, calls are serialized (one at a time) and decided by `ReverseConnectionMachine`;
 * this layer does the store reads and writes: listing the items of a pull, reading an item for
 * `next`, writing normal push pages (converted to webhook form, `lastUpdated: 'keep'`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { KeyedMutex, keyOf, type SortKey, type StoreAdapter } from '../../adapter';
import { guardAdapter, type GuardedAdapter } from '../../adapter-guard';
import { CONVERTERS, ConversionError } from '../../contract/converters';
import { InitializeBodySchema } from '../../contract/reverse-routes';
import {
  PulledOrderSchema,
  PulledProductSchema,
  PushOrdersPageSchema,
  PushProductsPageSchema,
  StorageFailureReportSchema,
  type ConnectionStatus,
  type Mode,
  type StorageFailureReport,
} from '../../contract/messages';
import { parseWire } from '../../contract/parse';
import type { ReverseOrder, ReverseProduct } from '../../contract/reverse';
import { ENTITIES, type Entity, type Order, type Product } from '../../contract/webhook';
import { InvalidOptionError } from '../../errors';
import { UnknownConnectionError } from '../reverse-errors';
import {
  ReverseConnectionMachine,
  type CurrentView,
  type EntityCounts,
  type FailureRecord,
  type MachineResult,
  type TransactionRequest,
  type TransactionSummary,
} from './reverse-machine';

export { REVERSE_BASE_PATH } from '../../contract/reverse-routes';

/** One connection the service serves: its key (in the daemon's paths) and a name for logs and the API. */
export interface ReverseConnectionOption {
  readonly key: string;
  /** Used by `enqueue`, `status` and in logs instead of the key. Default `connection-<n>`. */
  readonly name?: string;
}

export interface ReverseServiceOptions {
  /** The service's store: pulls are served from it, normal push pages are written into it. */
  readonly adapter: StoreAdapter | GuardedAdapter;
  /** The connections served (a key alone, or `{key, name}`). */
  readonly connections: ReadonlyArray<string | ReverseConnectionOption>;
  /** How long an item handed out by `next` stays reserved (ms). Default 60 000. */
  readonly leaseMs?: number;
  /** Items of the last sample push kept per entity for inspection. Default 10. */
  readonly sampleKeep?: number;
  /** The clock (Unix ms). Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Called with a store failure behind a 500 answer. `connection` is the connection's name and
   * `call` the path with `{P}` in place of the key: keys never reach a log through this hook.
   */
  readonly onError?: (error: unknown, context: { readonly connection: string; readonly call: string }) => void;
}

interface ServiceConfig {
  readonly adapter: GuardedAdapter;
  readonly leaseMs: number;
  readonly sampleKeep: number;
  readonly now: () => number;
  readonly onError: NonNullable<ReverseServiceOptions['onError']>;
}

/** One daemon call, framework-free. */
export interface ReverseRequest {
  readonly method: string;
  /** The `{connection_key}` path segment, decoded. */
  readonly key: string;
  /** The rest of the path after the key, e.g. `/pull/products/next` (segments still URL-encoded). */
  readonly path: string;
  /** The parsed JSON body (`undefined` when there was none). */
  readonly body?: unknown;
}

export interface ReverseResponse {
  readonly status: number;
  readonly body: unknown;
}

/** The last sample push received, kept for inspection (never written to the store). */
export interface SampleRecord {
  readonly transaction: number;
  readonly at: number;
  readonly products: ReverseProduct[];
  readonly orders: ReverseOrder[];
}

/** The operator's view of one connection (`GET /connections/KEY/status`). */
export interface ConnectionStatusView {
  readonly connection: string;
  readonly connectionstatus: ConnectionStatus;
  readonly mode: Mode;
  readonly current: CurrentView | null;
  readonly queue: readonly TransactionRequest[];
  readonly products: EntityCounts;
  readonly orders: EntityCounts;
  readonly failures: readonly FailureRecord[];
  readonly lastSample: SampleRecord | null;
  readonly transactions: readonly TransactionSummary[];
}

/** The service side of the reverse connection. */
export interface ReverseService {
  /** Answers one daemon call. Never rejects: store failures become a 500 `{error}`. */
  handle(request: ReverseRequest): Promise<ReverseResponse>;
  /**
   * Queues a transaction for a connection (by name); returns its position (0 = next).
   * The daemon learns about it from `GET {P}/mode`.
   */
  enqueue(connection: string, request: TransactionRequest): number;
  /** The operator view of a connection, by name. */
  status(connection: string): ConnectionStatusView;
  /** The operator view of the connection with this key, or `undefined` (constant-time lookup). */
  statusByKey(key: string): ConnectionStatusView | undefined;
  /** Whether a connection has this key (constant-time lookup). */
  knows(key: string): boolean;
  /** The names of the connections served. */
  connectionNames(): string[];
}

interface Connection {
  readonly name: string;
  readonly digest: Buffer;
  readonly machine: ReverseConnectionMachine;
  lastSample: SampleRecord | null;
}

const NOT_FOUND: ReverseResponse = { status: 404, body: { error: 'not found' } };
const OK: ReverseResponse = { status: 200, body: { ok: true } };
const MAX_REPORT_TEXT = 2000;
const MAX_REASONS = 100;
const LIST_PAGE = 1000;

const PAGE_SCHEMAS = { products: PushProductsPageSchema, orders: PushOrdersPageSchema } as const;
const PULLED_SCHEMAS = { products: PulledProductSchema, orders: PulledOrderSchema } as const;
const SINGULAR = { products: 'product', orders: 'order' } as const;
/** The status under both member names (docs/reverse-connection.md: the deployed daemons read `upstreamstatus`). */
const statusBody = (s: ConnectionStatus) => ({ upstreamstatus: s, connectionstatus: s });

function digestOf(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function positiveInteger(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new InvalidOptionError(option, `expected a positive integer, got ${String(value)}`);
  return value;
}

function isEntity(s: string | undefined): s is Entity {
  return s === 'products' || s === 'orders';
}

function fromMachine<T>(r: MachineResult<T>, body: (v: T) => unknown): ReverseResponse {
  return r.ok ? { status: 200, body: body(r.value) } : { status: r.status, body: { error: r.error } };
}

const badRequest = (error: string): ReverseResponse => ({ status: 400, body: { error } });

/**
 * Creates the service side of the reverse connection.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createReverseService, createReverseServiceRouter } from 'storebridge/reverse';
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 *
 * const service = createReverseService({ adapter: createMemoryAdapter(), connections: [{ key: process.env.CONNECTION_KEY!, name: 'shop-1' }] });
 * service.enqueue('shop-1', { kind: 'pull', entity: 'products' });
 * const app = express();
 * app.use(createReverseServiceRouter({ service }));
 * app.listen(8080);
 * ```
 */
export function createReverseService(options: ReverseServiceOptions): ReverseService {
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  if (!options.adapter) throw new InvalidOptionError('adapter', 'an adapter (the service\'s store) is required');
  const config: ServiceConfig = {
    adapter: guardAdapter(options.adapter),
    leaseMs: positiveInteger('leaseMs', options.leaseMs, 60_000),
    sampleKeep: positiveInteger('sampleKeep', options.sampleKeep, 10),
    now: options.now ?? Date.now,
    onError: options.onError ?? (() => undefined),
  };
  if (typeof config.now !== 'function') throw new InvalidOptionError('now', 'expected a function returning Unix milliseconds');
  if (!Array.isArray(options.connections) || options.connections.length === 0) {
    throw new InvalidOptionError('connections', 'expected a non-empty array of keys or {key, name}');
  }
  const connections: Connection[] = [];
  const byName = new Map<string, Connection>();
  const digests = new Set<string>();
  options.connections.forEach((entry, i) => {
    const where = `connections[${i}]`;
    const e: ReverseConnectionOption = typeof entry === 'string' ? { key: entry } : entry;
    if (!e || typeof e.key !== 'string' || e.key.length === 0 || e.key.length > 1024) {
      throw new InvalidOptionError(`${where}.key`, 'expected a non-empty string of at most 1024 characters');
    }
    const name = e.name ?? `connection-${i + 1}`;
    if (typeof name !== 'string' || name === '') throw new InvalidOptionError(`${where}.name`, 'expected a non-empty string');
    if (byName.has(name)) throw new InvalidOptionError(`${where}.name`, `"${name}" is used twice`);
    const digest = digestOf(e.key);
    if (digests.has(digest.toString('hex'))) throw new InvalidOptionError(`${where}.key`, 'the same key is used twice');
    digests.add(digest.toString('hex'));
    const c: Connection = { name, digest, machine: new ReverseConnectionMachine({ leaseMs: config.leaseMs }), lastSample: null };
    connections.push(c);
    byName.set(name, c);
  });
  const mutex = new KeyedMutex();

  /** Constant time in the key: both sides digested, every connection compared, no early exit. */
  function findByKey(key: string): Connection | undefined {
    const digest = digestOf(key);
    let match: Connection | undefined;
    for (const c of connections) if (timingSafeEqual(digest, c.digest)) match = c;
    return match;
  }

  function byNameOrThrow(name: string): Connection {
    const c = byName.get(name);
    if (!c) throw new UnknownConnectionError(name);
    return c;
  }

  function view(c: Connection): ConnectionStatusView {
    const m = c.machine;
    return {
      connection: c.name,
      connectionstatus: m.status,
      mode: m.mode(),
      current: m.currentView(config.now()),
      queue: m.queued(),
      products: { ...m.counts.products },
      orders: { ...m.counts.orders },
      failures: [...m.failures],
      lastSample: c.lastSample,
      transactions: [...m.history],
    };
  }

  async function listIds(entity: Entity, signal: AbortSignal): Promise<string[]> {
    const store = config.adapter.entity(entity);
    const ids: string[] = [];
    let after: SortKey | undefined;
    for (;;) {
      const page = await store.list({ sortorder: 'asc', limit: LIST_PAGE, after, signal });
      for (const item of page) ids.push(item._id);
      if (page.length < LIST_PAGE) return ids;
      after = keyOf(page[page.length - 1]);
    }
  }

  async function next(c: Connection, entity: Entity, signal: AbortSignal): Promise<ReverseResponse> {
    const m = c.machine;
    for (;;) {
      const now = config.now();
      const r = m.next(entity, now);
      if (!r.ok) return fromMachine(r, () => undefined);
      const doc = await config.adapter.entity(entity).get(r.value.id, { signal });
      if (!doc) {
        m.skip(entity, r.value.id, 'the item is no longer in the service\'s store', now);
        continue;
      }
      try {
        const reverse = entity === 'products' ? CONVERTERS.products.toReverse(doc as Product) : CONVERTERS.orders.toReverse(doc as Order);
        return { status: 200, body: { [SINGULAR[entity]]: reverse } };
      } catch (err) {
        if (!(err instanceof ConversionError)) throw err;
        m.skip(entity, r.value.id, `the item cannot be written in reverse form: ${err.message}`, now);
      }
    }
  }

  async function acknowledge(c: Connection, entity: Entity, rawId: string, outcome: 'succeded' | 'failed', body: unknown): Promise<ReverseResponse> {
    let id: string;
    try {
      id = decodeURIComponent(rawId);
    } catch {
      return badRequest('the item id in the path is not valid percent-encoding');
    }
    let report: StorageFailureReport | undefined;
    if (outcome === 'succeded') {
      const parsed = parseWire(PULLED_SCHEMAS[entity], body);
      if (!parsed.ok) return badRequest(`body: ${parsed.error} (expected {${SINGULAR[entity]}: …}, the item as stored)`);
      const item = (parsed.value as Record<string, { _id: string }>)[SINGULAR[entity]];
      if (item._id !== id) return badRequest(`body: ${SINGULAR[entity]}._id "${item._id}" differs from the id in the path`);
    } else {
      const parsed = parseWire(StorageFailureReportSchema, body);
      if (!parsed.ok) return badRequest(`body: ${parsed.error} (expected a storage failure report {error, reasons: [{message, code}]})`);
      report = {
        error: parsed.value.error.slice(0, MAX_REPORT_TEXT),
        reasons: parsed.value.reasons.slice(0, MAX_REASONS).map((r) => ({ message: r.message.slice(0, MAX_REPORT_TEXT), code: r.code })),
      };
    }
    return fromMachine(c.machine.acknowledge(entity, id, outcome, report, config.now()), (v) => (v.duplicate ? { ok: true, duplicate: true } : { ok: true }));
  }

  async function page(c: Connection, kind: 'push' | 'pingsample', entity: Entity, body: unknown, signal: AbortSignal): Promise<ReverseResponse> {
    const m = c.machine;
    const allowed = m.pageAllowed(kind, entity);
    if (!allowed.ok) return fromMachine(allowed, () => undefined);
    const parsed = parseWire(PAGE_SCHEMAS[entity], body);
    if (!parsed.ok) return badRequest(`body: ${parsed.error} (expected {${entity}: [ … reverse form … ]})`);
    const items = (parsed.value as Record<Entity, Array<ReverseProduct | ReverseOrder>>)[entity];
    // Convert the whole page first: a page with one bad item stores nothing.
    const converted: Array<Product | Order> = [];
    for (let i = 0; i < items.length; i++) {
      try {
        converted.push(entity === 'products' ? CONVERTERS.products.toWebhook(items[i] as ReverseProduct) : CONVERTERS.orders.toWebhook(items[i] as ReverseOrder));
      } catch (err) {
        if (err instanceof ConversionError) return badRequest(`body: ${entity}.${i}.${err.message}`);
        throw err;
      }
    }
    const now = config.now();
    if (kind === 'push') {
      const store = config.adapter.entity(entity);
      for (const item of converted) await store.upsert(item as never, { lastUpdated: 'keep', now, signal });
    } else {
      const tx = m.currentView(now)!.transaction;
      if (!c.lastSample || c.lastSample.transaction !== tx) c.lastSample = { transaction: tx, at: now, products: [], orders: [] };
      const kept = c.lastSample[entity] as Array<ReverseProduct | ReverseOrder>;
      kept.push(...items.slice(0, Math.max(0, config.sampleKeep - kept.length)));
    }
    const raw = (body as Record<Entity, Array<{ last_updated?: unknown }>>)[entity];
    const last = raw.length > 0 ? raw[raw.length - 1].last_updated : undefined;
    const lastUpdated = typeof last === 'number' || typeof last === 'string' ? last : undefined;
    return fromMachine(m.recordPage(kind, entity, items.map((x) => x._id), lastUpdated), (v) => ({ received: v.received }));
  }

  async function initializePull(c: Connection, body: unknown, signal: AbortSignal): Promise<ReverseResponse> {
    const parsed = parseWire(InitializeBodySchema, body ?? {});
    if (!parsed.ok) return badRequest(`body: ${parsed.error} (expected {} or {entity: "products" | "orders"})`);
    const check = c.machine.pullToInitialize(parsed.value.entity);
    if (!check.ok) return fromMachine(check, () => undefined);
    const ids = check.value.ids ?? (await listIds(check.value.entity, signal));
    return fromMachine(c.machine.initializePull(parsed.value.entity, ids, config.now()), statusBody);
  }

  function finishGeneral(c: Connection, r: MachineResult<ConnectionStatus>): ReverseResponse {
    if (!r.ok) return fromMachine(r, () => undefined);
    // Finalization has no slow part here (pages were stored as they came), so it completes at once.
    c.machine.complete(config.now());
    return OK;
  }

  async function route(c: Connection, method: string, segments: string[], body: unknown, signal: AbortSignal): Promise<ReverseResponse> {
    const m = c.machine;
    const now = config.now();
    const [a, b, d, e] = segments;
    const n = segments.length;
    const get = method === 'GET';
    const post = method === 'POST';
    if (n === 1 && (a === 'upstreamstatus' || a === 'entity' || a === 'mode' || a === 'ping' || a === 'strategy' || a === 'cursoroffset')) {
      if (!get) return notAllowed('GET');
      if (a === 'upstreamstatus') return { status: 200, body: statusBody(m.status) };
      if (a === 'ping') return { status: 200, body: { connectionstatus: m.ping() } };
      if (a === 'strategy') return { status: 200, body: { strategy: m.strategy() } };
      if (a === 'cursoroffset') return { status: 200, body: { cursoroffset: m.cursorOffset() } };
      if (a === 'mode') return { status: 200, body: { mode: m.mode() } };
      return fromMachine(m.entity(), (entity) => ({ entity }));
    }
    if (n === 2 && b === 'initialize' && (a === 'pull' || a === 'push' || a === 'pingsample')) {
      if (!post) return notAllowed('POST');
      if (a === 'pull') return initializePull(c, body, signal);
      const parsed = parseWire(InitializeBodySchema, body ?? {});
      if (!parsed.ok) return badRequest(`body: ${parsed.error} (expected {} or {entity: "products" | "orders"})`);
      return fromMachine(m.initializePush(a, now), statusBody);
    }
    if (n === 2 && b === 'finish' && (a === 'pull' || a === 'push' || a === 'pingsample')) {
      if (!post) return notAllowed('POST');
      return finishGeneral(c, a === 'pull' ? m.finishPull() : m.finishPush(a));
    }
    if (a === 'pull' && isEntity(b)) {
      if (n === 3 && (d === 'hasmore' || d === 'next' || d === 'readyfornext')) {
        if (!get) return notAllowed('GET');
        if (d === 'hasmore') return fromMachine(m.hasMore(b, now), (hasmore) => ({ hasmore }));
        if (d === 'readyfornext') return fromMachine(m.readyForNext(b, now), (ready) => ({ ready }));
        return next(c, b, signal);
      }
      if (n === 3 && d === 'finish') {
        if (!post) return notAllowed('POST');
        return fromMachine(m.finishPullEntity(b), (v) => (v.duplicate ? { ok: true, duplicate: true } : { ok: true }));
      }
      if (n === 4 && (e === 'succeded' || e === 'failed')) {
        if (!post) return notAllowed('POST');
        return acknowledge(c, b, d, e, body);
      }
    }
    if ((a === 'push' || a === 'pingsample') && isEntity(b)) {
      if (n === 2) {
        if (!post) return notAllowed('POST');
        return page(c, a, b, body, signal);
      }
      if (n === 3 && d === 'finish') {
        if (!post) return notAllowed('POST');
        return fromMachine(m.finishPushEntity(a, b), (v) => (v.duplicate ? { ok: true, duplicate: true } : { ok: true }));
      }
    }
    return NOT_FOUND;
  }

  return {
    async handle(request) {
      const c = findByKey(typeof request.key === 'string' ? request.key : '');
      if (!c) return NOT_FOUND;
      const segments = request.path.replace(/^\//, '').split('/');
      if (segments.some((s) => s === '')) return NOT_FOUND;
      const method = String(request.method).toUpperCase();
      return mutex.run(c.name, async () => {
        const signal = AbortSignal.timeout(60_000);
        try {
          return await route(c, method, segments, request.body, signal);
        } catch (err) {
          const call = `${method} {P}/${segments.map((s, i) => (segments[0] === 'pull' && i === 2 && segments.length === 4 ? '{id}' : s)).join('/')}`;
          try {
            config.onError(err, { connection: c.name, call });
          } catch {
            // A throwing log hook must not turn a 500 into a crash.
          }
          return { status: 500, body: { error: 'the service\'s store failed; try the call again' } };
        }
      });
    },
    enqueue(name, request) {
      const c = byNameOrThrow(name);
      if (!request || typeof request !== 'object') throw new InvalidOptionError('request', 'expected {kind, entity?}');
      if (request.kind === 'pull') {
        if (!isEntity(request.entity)) throw new InvalidOptionError('request.entity', `a pull needs entity ${ENTITIES.join(' or ')}`);
        if (request.ids !== undefined && (!Array.isArray(request.ids) || request.ids.some((x) => typeof x !== 'string' || x === ''))) {
          throw new InvalidOptionError('request.ids', 'expected an array of non-empty strings');
        }
      } else if (request.kind !== 'push' && request.kind !== 'pingsample') {
        throw new InvalidOptionError('request.kind', 'expected "pull", "push" or "pingsample"');
      }
      return c.machine.enqueue(request);
    },
    status: (name) => view(byNameOrThrow(name)),
    statusByKey(key) {
      const c = findByKey(key);
      return c ? view(c) : undefined;
    },
    knows: (key) => findByKey(key) !== undefined,
    connectionNames: () => connections.map((c) => c.name),
  };
}

function notAllowed(allow: string): ReverseResponse {
  return { status: 405, body: { error: `method not allowed here; use ${allow}` } };
}
