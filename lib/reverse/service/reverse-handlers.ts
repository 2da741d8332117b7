/**
 * One handler per reverse call, keyed by the call's name in the contract's `REVERSE_ROUTES`: the
 * service matches a request to a route there and runs the handler of that name. A handler reads
 * its body, asks the connection's machine, and does the store reads and writes around it; the
 * service persists the machine's changes and answers.
 *
 * Order of checks in every call: the body's shape first (400), then the connection's state (409),
 * then the store (500). So a call that is both malformed and out of order is a 400.
 */
import { keyOf, type SortKey } from '../../adapter';
import type { GuardedAdapter } from '../../adapter-guard';
import { ConversionError } from '../../contract/converters';
import { encodeReverseItem, type Dialect } from '../../contract/dialects';
import { entityOf, perEntity } from '../../contract/entities';
import { REVERSE_FAILURE_CODES, UPSTREAM_STATUS_MEMBERS, type ConnectionStatus, type UpstreamStatus } from '../../contract/messages';
import { parseWire } from '../../contract/parse';
import { InitializeBodySchema, type ReverseCallName, type ReverseRoute } from '../../contract/reverse-routes';
import type { Entity } from '../../contract/entities';
import { handOutOf, pushedAsService, type IdentityContext } from './reverse-identity';
import { aliasesOf, readFailureReport, readPushPage, readStoredId, type PageBounds } from './reverse-items';
import type { MachineResult, PushKind, ReverseConnectionMachine } from './reverse-machine';
import type { LoadedConnection, SampleRecord } from './reverse-persistence';

/** An answer to a daemon (always a JSON object, errors included). */
export interface ReverseResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** A 429's `Retry-After` (seconds). */
  readonly retryAfterSeconds?: number;
  /**
   * Close the HTTP connection after this answer: the connection calls faster than its pace allows
   * over time. A deployed daemon in a loop opens a new client per call and never closes it; told to
   * close, its client does, so a loop holds one connection at a time instead of piling idle ones up.
   */
  readonly close?: boolean;
}

/** What a handler gets (the identity rules' context too: the id map, the store, the dialect). */
export interface CallContext extends IdentityContext {
  readonly route: ReverseRoute;
  readonly machine: ReverseConnectionMachine;
  readonly loaded: LoadedConnection;
  readonly dialect: Dialect;
  /** The ids the path's `{id}` may mean: the raw segment, and its percent-decoding when that differs. */
  readonly pathIds: readonly string[];
  readonly body: unknown;
  readonly now: number;
  readonly signal: AbortSignal;
  /** Items of each entity kept from a sample push. */
  readonly sampleKeep: number;
  /** How much of a push page is read. */
  readonly pageBounds: PageBounds;
  /** Sets the connection's last sample (written with the call's other changes). */
  keepSample(sample: SampleRecord): void;
}

export type RouteHandler = (ctx: CallContext) => ReverseResponse | Promise<ReverseResponse>;

const LIST_PAGE = 1000;
const OK: ReverseResponse = { status: 200, body: { ok: true } };

export const badRequest = (error: string): ReverseResponse => ({ status: 400, body: { error } });

function answer<T>(r: MachineResult<T>, body: (v: T) => Record<string, unknown>): ReverseResponse {
  return r.ok ? { status: 200, body: body(r.value) } : { status: r.status, body: { error: r.error } };
}

/** The status under both member names (`UPSTREAM_STATUS_MEMBERS`): deployed daemons read `upstreamstatus`, the spec prints `connectionstatus`. */
const statusBody = (s: ConnectionStatus) => Object.fromEntries(UPSTREAM_STATUS_MEMBERS.map((m) => [m, s])) as UpstreamStatus;
const acknowledged = (v: { duplicate: boolean }) => (v.duplicate ? { ok: true, duplicate: true } : { ok: true });

function entityOfRoute(ctx: CallContext): Entity {
  return ctx.route.entity!;
}

/** `push`/`pingsample` from a route's path (`/pingsample/products` → `pingsample`). */
function pushKindOf(route: ReverseRoute): PushKind {
  return route.path.startsWith('/pingsample') ? 'pingsample' : 'push';
}

/** Every `_id` of an entity in the service's store, in `(last_updated, _id)` order. */
async function listIds(ctx: CallContext, entity: Entity): Promise<string[]> {
  const store = (await ctx.store()).entity(entity);
  const ids: string[] = [];
  let after: SortKey | undefined;
  for (;;) {
    const page = await store.list({ sortorder: 'asc', limit: LIST_PAGE, after, signal: ctx.signal });
    for (const item of page) ids.push(item._id);
    if (page.length < LIST_PAGE) return ids;
    after = keyOf(page[page.length - 1]);
  }
}

function initializeBody(body: unknown): ReverseResponse | { entity?: Entity } {
  const parsed = parseWire(InitializeBodySchema, body ?? {});
  return parsed.ok ? parsed.value : badRequest(`body: ${parsed.error} (expected {} or {entity: "products" | "orders"})`);
}

async function pullInitialize(ctx: CallContext): Promise<ReverseResponse> {
  const body = initializeBody(ctx.body);
  if ('status' in body) return body;
  const check = ctx.machine.pullToInitialize(body.entity);
  if (!check.ok || check.value.repeat) return answer(ctx.machine.initializePull(body.entity, [], ctx.now), statusBody);
  const ids = check.value.ids ?? (await listIds(ctx, check.value.entity));
  return answer(ctx.machine.initializePull(body.entity, ids, ctx.now), statusBody);
}

function pushInitialize(ctx: CallContext): ReverseResponse {
  const body = initializeBody(ctx.body);
  if ('status' in body) return body;
  return answer(ctx.machine.initializePush(pushKindOf(ctx.route), ctx.now), statusBody);
}

/**
 * Hands out the head item in the dialect's encoding, under the id the daemon's store gave it when
 * the map knows one (`handOutOf`); items gone from the store or not encodable are skipped.
 */
async function next(ctx: CallContext): Promise<ReverseResponse> {
  const entity = entityOfRoute(ctx);
  const d = entityOf(entity);
  for (;;) {
    const r = ctx.machine.next(entity, ctx.now);
    if (!r.ok) return answer(r, () => ({}));
    const doc = await (await ctx.store()).entity(entity).get(r.value.id, { signal: ctx.signal });
    if (!doc) {
      ctx.machine.skip(entity, r.value.id, { message: "the item is no longer in the service's store", code: REVERSE_FAILURE_CODES.GONE_FROM_STORE }, ctx.now);
      continue;
    }
    try {
      const handOut = await handOutOf(ctx, entity, doc);
      const item = encodeReverseItem(ctx.dialect, entity, doc, handOut);
      ctx.machine.handedOut(r.value.id, aliasesOf(entity, item), handOut.storeId);
      return { status: 200, body: { [d.noun]: item } };
    } catch (err) {
      if (!(err instanceof ConversionError)) throw err;
      ctx.machine.skip(entity, r.value.id, { message: `the item cannot be written in reverse form: ${err.message}`, code: REVERSE_FAILURE_CODES.NOT_WRITABLE }, ctx.now);
    }
  }
}

/** A `succeded` whose body names a new store id links it in the id map (with the call's other changes). */
async function succeded(ctx: CallContext): Promise<ReverseResponse> {
  const entity = entityOfRoute(ctx);
  const stored = readStoredId(entity, ctx.body);
  if (!stored.ok) return badRequest(stored.error);
  const r = ctx.machine.acknowledge(entity, ctx.pathIds, 'succeded', { storeId: stored.value }, ctx.now);
  if (r.ok && r.value.mapping) ctx.persist(await ctx.identity.link(entity, r.value.mapping.pulledId, r.value.mapping.storeId));
  return answer(r, acknowledged);
}

function failed(ctx: CallContext): ReverseResponse {
  const report = readFailureReport(ctx.body);
  if (!report.ok) return badRequest(report.error);
  return answer(ctx.machine.acknowledge(entityOfRoute(ctx), ctx.pathIds, 'failed', { report: report.value }, ctx.now), acknowledged);
}

/** An entity finish; a pull that covers another entity moves on to it (its items listed now). */
async function pullEntityFinish(ctx: CallContext): Promise<ReverseResponse> {
  const r = ctx.machine.finishPullEntity(entityOfRoute(ctx), ctx.now);
  if (!r.ok || !r.value.next) return answer(r, acknowledged);
  const { entity, ids } = r.value.next;
  const moved = ctx.machine.startPullEntity(entity, ids ?? (await listIds(ctx, entity)));
  return answer(moved, () => ({ ok: true }));
}

/**
 * A page: read item by item (a page longer than `maxPushPageItems` is refused whole, 413); the
 * readable items are stored (a normal push, `last_updated` kept as sent, each under the service's
 * id the map gives it: `pushedAsService`) or kept for inspection (a sample, never stored); the
 * unreadable ones are refused and counted, the first `maxRefusedListed` recorded and listed in the reply.
 */
async function page(ctx: CallContext): Promise<ReverseResponse> {
  const entity = entityOfRoute(ctx);
  const kind = pushKindOf(ctx.route);
  const read = readPushPage(entity, ctx.body, ctx.pageBounds);
  if (!read.ok) return 'tooLarge' in read ? { status: 413, body: { error: read.error } } : badRequest(read.error);
  const allowed = ctx.machine.pageAllowed(kind, entity, ctx.now);
  if (!allowed.ok) return answer(allowed, () => ({}));
  const { refused, refusedCount, lastUpdated } = read.value;
  let items = read.value.items;
  if (kind === 'push' && items.length > 0) {
    items = await pushedAsService(ctx, entity, items);
    await (await ctx.store()).entity(entity).upsertMany(items as never[], { lastUpdated: 'keep', now: ctx.now, signal: ctx.signal });
  }
  if (kind === 'pingsample') keepSample(ctx, entity, items);
  ctx.machine.refusePushItems(entity, refused, refusedCount, ctx.now);
  const recorded = ctx.machine.recordPage(kind, entity, items.map((x) => x._id), lastUpdated, ctx.now);
  return answer(recorded, (v) => (refusedCount > 0 ? { received: v.received, refused, refusedCount } : { received: v.received }));
}

function keepSample(ctx: CallContext, entity: Entity, items: readonly object[]): void {
  const transaction = ctx.machine.currentView(ctx.now)!.transaction;
  const previous = ctx.loaded.sample;
  const sample: SampleRecord =
    previous && previous.transaction === transaction ? { ...previous, ...perEntity((e) => [...(previous[e] ?? [])]) } : { transaction, at: ctx.now, ...perEntity((): unknown[] => []) };
  const kept = sample[entity];
  kept.push(...items.slice(0, Math.max(0, ctx.sampleKeep - kept.length)));
  ctx.keepSample(sample);
}

/** A general finish. Finalization has no slow part here (pages are stored as they come), so it completes at once. */
function finishGeneral(ctx: CallContext, r: MachineResult<ConnectionStatus>): ReverseResponse {
  if (!r.ok) return answer(r, () => ({}));
  ctx.machine.complete(ctx.now);
  return OK;
}

/** The handler of every call in `REVERSE_ROUTES`. */
export const ROUTE_HANDLERS: { readonly [N in ReverseCallName]: RouteHandler } = {
  ping: (ctx) => ({ status: 200, body: { connectionstatus: ctx.machine.ping() } }),
  strategy: (ctx) => ({ status: 200, body: { strategy: ctx.machine.strategy() } }),
  mode: (ctx) => ({ status: 200, body: { mode: ctx.machine.mode() } }),
  upstreamstatus: (ctx) => ({ status: 200, body: statusBody(ctx.machine.readUpstreamStatus()) }),
  entity: (ctx) => answer(ctx.machine.entity(), (entity) => ({ entity })),
  cursoroffset: (ctx) => ({ status: 200, body: { cursoroffset: ctx.machine.cursorOffset() } }),
  pullInitialize,
  pushInitialize,
  pingsampleInitialize: pushInitialize,
  hasmore: (ctx) => answer(ctx.machine.hasMore(entityOfRoute(ctx), ctx.now), (hasmore) => ({ hasmore })),
  next,
  succeded,
  failed,
  readyfornext: (ctx) => answer(ctx.machine.readyForNext(entityOfRoute(ctx), ctx.now), (ready) => ({ ready })),
  pullEntityFinish,
  pushPage: page,
  pingsamplePage: page,
  pushEntityFinish: (ctx) => answer(ctx.machine.finishPushEntity('push', entityOfRoute(ctx), ctx.now), acknowledged),
  pingsampleEntityFinish: (ctx) => answer(ctx.machine.finishPushEntity('pingsample', entityOfRoute(ctx), ctx.now), acknowledged),
  pullFinish: (ctx) => finishGeneral(ctx, ctx.machine.finishPull(ctx.now)),
  pushFinish: (ctx) => finishGeneral(ctx, ctx.machine.finishPush('push', ctx.now)),
  pingsampleFinish: (ctx) => finishGeneral(ctx, ctx.machine.finishPush('pingsample', ctx.now)),
};
