/**
 * Model-based test of the service's state machine, through the framework-agnostic `handle()` (the
 * code every binding calls): random sequences of daemon calls, legal and illegal, including the
 * deployed calls (`ping`, `strategy`, `cursoroffset`, `pingsample/initialize`), repeated
 * initialize, acknowledgements by `_id` or by `sku`/`orderid`, duplicates, lease expiry, pulls of
 * both entities, transactions that expire or are cancelled, and SERVICE RESTARTS (a new service on
 * the same state store). An independent small model says what each call must answer; afterwards a
 * well-behaved daemon drains the queue and the counters must show no item lost and none
 * acknowledged twice.
 */
import fc from 'fast-check';
import { createMemoryAdapter } from '../../adapters/memory';
import { compareIds } from '../../lib/adapter';
import { CONVERTERS, type Entity } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createMemoryStateStore, createReverseService, type ReverseResponse, type ReverseService, type ReverseStateStore } from '../../lib/reverse';

const KEY = 'model-key';
const LEASE_MS = 1000;
const IDLE_MS = 20_000;
const CATALOG = demoCatalog(5); // 5 products, 1 order
const ENTITIES: readonly Entity[] = ['products', 'orders'];
type Kind = 'pull' | 'push' | 'pingsample';
type Outcome = 'succeded' | 'failed';

interface PullModel {
  kind: 'pull';
  entities: Entity[];
  index: number;
  pos: number;
  phase: 'ready' | 'leased' | 'acked';
  headDelivered: boolean;
  leaseUntil: number;
  last: { id: string; outcome: Outcome } | null;
  entityFinished: boolean;
  touchedAt: number;
}
interface PushModel {
  kind: 'push' | 'pingsample';
  phase: Entity | 'done';
  full: boolean;
  pages: Record<Entity, number>;
  received: Record<Entity, Set<string>>;
  touchedAt: number;
}
type Queued = { kind: 'pull'; entities: Entity[] } | { kind: 'push'; full: boolean } | { kind: 'pingsample' };
interface Model {
  status: 'waiting' | 'initialized' | 'finishing' | 'finished';
  /** A finish not yet reported by upstreamstatus (it says `finished` once, even with a transaction queued). */
  finishedUnread: boolean;
  queue: Queued[];
  cur?: PullModel | PushModel;
  now: number;
  cursors: Record<Entity, number | string>;
  /** Accepted (non-duplicate) acknowledgements, per entity. */
  accepted: Record<Entity, number>;
  firstDeliveries: Record<Entity, number>;
}
interface Real {
  service: ReverseService;
  state: ReverseStateStore;
  clock: { now: number };
  restarts: number;
}

const sortedIds: Record<Entity, string[]> = {
  products: [...CATALOG.products].sort((a, b) => a.last_updated! - b.last_updated! || compareIds(a._id, b._id)).map((p) => p._id),
  orders: [...CATALOG.orders].sort((a, b) => a.last_updated! - b.last_updated! || compareIds(a._id, b._id)).map((o) => o._id),
};
const aliasOf = (e: Entity, id: string) => (e === 'products' ? CATALOG.products.find((p) => p._id === id)!.sku! : CATALOG.orders.find((o) => o._id === id)!.orderid!);
const noun = (e: Entity) => (e === 'products' ? 'product' : 'order');

function makeService(state: ReverseStateStore, clock: { now: number }): ReverseService {
  // No pace and no giving up on items here: this model is of the cycle (both have their own tests).
  return createReverseService({ adapter: createMemoryAdapter(CATALOG), connections: [{ key: KEY, name: 'shop' }], leaseMs: LEASE_MS, transactionIdleMs: IDLE_MS, now: () => clock.now, stateStore: state, maxCallsPerSecond: 0, maxDeliveries: 1000 });
}

const codes = new Set([200, 400, 404, 405, 409]);
async function call(r: Real, method: string, path: string, body?: unknown): Promise<ReverseResponse> {
  const res = await r.service.handle({ method, key: KEY, path, body });
  if (!codes.has(res.status)) throw new Error(`${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
  if (res.status !== 200) expect(typeof res.body.error).toBe('string');
  return res;
}
function expect409(res: ReverseResponse, what: string): void {
  if (res.status !== 409) throw new Error(`${what}: expected 409, got ${res.status} ${JSON.stringify(res.body)}`);
}
function expect200(res: ReverseResponse, body: unknown, what: string): void {
  if (res.status !== 200) throw new Error(`${what}: expected 200, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body).toEqual(body);
}

// ---- the model's rules ------------------------------------------------------------------------

const idsOf = (p: PullModel) => sortedIds[p.entities[p.index]];
const currentEntity = (p: PullModel) => p.entities[p.index];
/** A finish is `finished` until upstreamstatus reports it; an expiry or a cancel moves on to a queued transaction at once. */
function end(m: Model, outcome: 'finished' | 'expired' | 'cancelled'): void {
  m.cur = undefined;
  m.finishedUnread = outcome === 'finished';
  m.status = m.queue.length > 0 && outcome !== 'finished' ? 'waiting' : 'finished';
}
/** The status an initialize is judged by: `finished` with something queued is `waiting`. */
const startable = (m: Model) => (m.status === 'finished' && m.queue.length > 0 ? 'waiting' : m.status);
/** Every call first lets a transaction with no daemon call for IDLE_MS expire. */
function expire(m: Model): void {
  if (m.cur && m.now - m.cur.touchedAt >= IDLE_MS) end(m, 'expired');
}
/** The pull the call of entity `e` concerns (touching it), or undefined (409). */
function pullFor(m: Model, e: Entity): PullModel | undefined {
  const c = m.cur;
  if (m.status !== 'initialized' || c?.kind !== 'pull') return undefined;
  const at = c.entities.indexOf(e);
  if (at === -1 || at > c.index) return undefined;
  c.touchedAt = Math.max(c.touchedAt, m.now);
  return c;
}
const finishedEarlier = (p: PullModel, e: Entity) => p.entities.indexOf(e) < p.index;
function pushFor(m: Model, k: 'push' | 'pingsample'): PushModel | undefined {
  const c = m.cur;
  if (m.status !== 'initialized' || !c || c.kind !== k) return undefined;
  c.touchedAt = Math.max(c.touchedAt, m.now);
  return c;
}
const expireLease = (p: PullModel, now: number) => {
  if (p.phase === 'leased' && now >= p.leaseUntil) p.phase = 'ready';
};
function modelEntity(m: Model): Entity | undefined {
  const c = m.cur;
  if (c) return c.kind === 'pull' ? currentEntity(c) : c.phase === 'done' ? undefined : c.phase;
  const head = m.queue[0];
  return head ? (head.kind === 'pull' ? head.entities[0] : 'products') : undefined;
}
function modelCursor(m: Model): number | string {
  const e = modelEntity(m) ?? 'products';
  const c = m.cur;
  const head = m.queue[0];
  const full = c ? c.kind === 'push' && c.full && c.pages[e] === 0 : head?.kind === 'push' && head.full;
  return full ? 0 : m.cursors[e];
}
const mode = (m: Model): Kind | 'idle' => m.cur?.kind ?? m.queue[0]?.kind ?? 'idle';

// ---- commands ---------------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<Model, Real>;
const cmd = (name: string, run: (m: Model, r: Real) => Promise<void>): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    expire(m);
    await run(m, r);
  },
  toString: () => name,
});

const enqueueCmd = (kind: Kind, entity: Entity | undefined, full: boolean) =>
  cmd(`enqueue ${kind}${entity ? ` ${entity}` : ''}${full ? ' full' : ''}`, async (m, r) => {
    await r.service.enqueue('shop', kind === 'pull' ? (entity ? { kind, entity } : { kind }) : kind === 'push' ? { kind, full } : { kind });
    m.queue.push(kind === 'pull' ? { kind, entities: entity ? [entity] : [...ENTITIES] } : kind === 'push' ? { kind, full } : { kind });
    if (m.status === 'finished' && !m.finishedUnread) m.status = 'waiting';
  });
const readsCmd = () =>
  cmd('reads (upstreamstatus, mode, ping, strategy, entity, cursoroffset)', async (m, r) => {
    expect200(await call(r, 'GET', '/upstreamstatus'), { upstreamstatus: m.status, connectionstatus: m.status }, 'upstreamstatus');
    if (m.finishedUnread) {
      m.finishedUnread = false;
      if (m.status === 'finished' && m.queue.length > 0) m.status = 'waiting';
    }
    const md = mode(m);
    expect200(await call(r, 'GET', '/mode'), { mode: md }, 'mode');
    expect200(await call(r, 'GET', '/ping'), { connectionstatus: md === 'idle' ? 'idle' : md === 'pull' ? 'pulling' : 'fetchingremote' }, 'ping');
    expect200(await call(r, 'GET', '/strategy'), { strategy: md === 'pingsample' ? 'pingsample' : 'push' }, 'strategy');
    const entity = modelEntity(m);
    const res = await call(r, 'GET', '/entity');
    if (entity) expect200(res, { entity }, 'entity');
    else expect409(res, 'entity');
    expect200(await call(r, 'GET', '/cursoroffset'), { cursoroffset: modelCursor(m) }, 'cursoroffset');
  });
const pullInitCmd = (entity: Entity | undefined) =>
  cmd(`pull/initialize ${entity ?? '{}'}`, async (m, r) => {
    const res = await call(r, 'POST', '/pull/initialize', entity ? { entity } : {});
    const head = m.queue[0];
    const c = m.cur;
    if (m.status === 'initialized' && c?.kind === 'pull' && (!entity || c.entities.includes(entity))) {
      c.touchedAt = Math.max(c.touchedAt, m.now);
      expect200(res, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }, 'pull/initialize again');
    } else if (startable(m) === 'waiting' && head?.kind === 'pull' && (!entity || entity === head.entities[0])) {
      expect200(res, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }, 'pull/initialize');
      m.queue.shift();
      m.finishedUnread = false;
      m.cur = { kind: 'pull', entities: head.entities, index: 0, pos: 0, phase: 'ready', headDelivered: false, leaseUntil: 0, last: null, entityFinished: false, touchedAt: m.now };
      m.status = 'initialized';
    } else expect409(res, 'pull/initialize');
  });
const pushInitCmd = (kind: 'push' | 'pingsample') =>
  cmd(`${kind}/initialize`, async (m, r) => {
    const res = await call(r, 'POST', `/${kind}/initialize`, {});
    const head = m.queue[0];
    if (m.status === 'initialized' && m.cur?.kind === kind) {
      m.cur.touchedAt = Math.max(m.cur.touchedAt, m.now);
      expect200(res, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }, `${kind}/initialize again`);
    } else if (startable(m) === 'waiting' && head && head.kind === kind) {
      expect200(res, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }, `${kind}/initialize`);
      m.queue.shift();
      m.finishedUnread = false;
      m.cur = { kind, phase: 'products', full: head.kind === 'push' && head.full, pages: { products: 0, orders: 0 }, received: { products: new Set(), orders: new Set() }, touchedAt: m.now };
      m.status = 'initialized';
    } else expect409(res, `${kind}/initialize`);
  });
const hasMoreCmd = (e: Entity) =>
  cmd(`hasmore ${e}`, async (m, r) => {
    const res = await call(r, 'GET', `/pull/${e}/hasmore`);
    const p = pullFor(m, e);
    if (!p) return expect409(res, 'hasmore');
    if (finishedEarlier(p, e) || p.entityFinished) return expect200(res, { hasmore: 'done' }, 'hasmore finished');
    expireLease(p, m.now);
    if (p.phase === 'acked') p.phase = 'ready'; // closes an acknowledgement whose readyfornext never came
    const v = p.phase === 'leased' || p.pos < idsOf(p).length ? 'ready' : 'done';
    expect200(res, { hasmore: v }, 'hasmore');
  });
const nextCmd = (e: Entity, restart: boolean) =>
  cmd(`${restart ? 'daemon restart: ' : ''}next ${e}`, async (m, r) => {
    const res = await call(r, 'GET', `/pull/${e}/next`);
    const p = pullFor(m, e);
    if (!p || finishedEarlier(p, e) || p.entityFinished || p.phase === 'acked' || p.pos >= idsOf(p).length) return expect409(res, 'next');
    if (res.status !== 200) throw new Error(`next: expected 200, got ${res.status}`);
    const id = idsOf(p)[p.pos];
    expect((res.body[noun(e)] as { _id: string })._id).toBe(id);
    if (!p.headDelivered) m.firstDeliveries[e]++;
    p.headDelivered = true;
    p.phase = 'leased';
    p.leaseUntil = m.now + LEASE_MS;
    if (restart) {
      // A restarted daemon asks again from the start of the cycle and gets the same item.
      expect200(await call(r, 'GET', `/pull/${e}/hasmore`), { hasmore: 'ready' }, 'hasmore after restart');
      const again = await call(r, 'GET', `/pull/${e}/next`);
      expect((again.body[noun(e)] as { _id: string })._id).toBe(id);
      p.leaseUntil = m.now + LEASE_MS;
    }
  });
const ackCmd = (e: Entity, which: 'head' | 'previous' | 'other', outcome: Outcome, byAlias: boolean, n: number) =>
  cmd(`${outcome} ${e} ${which}${byAlias ? ' (by sku/orderid)' : ''}`, async (m, r) => {
    const ids = sortedIds[e];
    const c = m.cur?.kind === 'pull' ? m.cur : undefined;
    const id = which === 'head' && c && currentEntity(c) === e ? (ids[c.pos] ?? ids[0]) : which === 'previous' && c?.last && ids.includes(c.last.id) ? c.last.id : ids[n % ids.length];
    const item = e === 'products' ? CATALOG.products.find((x) => x._id === id)! : CATALOG.orders.find((x) => x._id === id)!;
    const body = outcome === 'succeded' ? { [noun(e)]: e === 'products' ? CONVERTERS.products.toReverse(item as never) : CONVERTERS.orders.toReverse(item as never) } : { error: 'refused', reasons: [{ message: 'blank SKU', code: 1001 }] };
    const pathId = byAlias ? aliasOf(e, id) : encodeURIComponent(id);
    const res = await call(r, 'POST', `/pull/${e}/${pathId}/${outcome}`, body);
    const p = pullFor(m, e);
    if (!p) return expect409(res, 'ack');
    const isHead = !finishedEarlier(p, e) && !p.entityFinished && p.pos < idsOf(p).length && p.headDelivered && p.phase !== 'acked' && idsOf(p)[p.pos] === id;
    if (!isHead) {
      if (p.last && p.last.id === id) return p.last.outcome === outcome ? expect200(res, { ok: true, duplicate: true }, 'duplicate ack') : expect409(res, 'conflicting ack');
      return expect409(res, 'ack of an item not handed out');
    }
    expect200(res, { ok: true }, 'ack');
    p.last = { id, outcome };
    p.pos++;
    p.phase = 'acked';
    p.headDelivered = false;
    m.accepted[e]++;
  });
const badAckCmd = (e: Entity) =>
  cmd(`bad ack body ${e}`, async (_m, r) => {
    expect((await call(r, 'POST', `/pull/${e}/${encodeURIComponent(sortedIds[e][0])}/failed`, ['not', 'an', 'object'])).status).toBe(400);
    expect((await call(r, 'POST', `/pull/${e}/a%00b/succeded`, {})).status).toBe(400);
  });
const readyCmd = (e: Entity) =>
  cmd(`readyfornext ${e}`, async (m, r) => {
    const res = await call(r, 'GET', `/pull/${e}/readyfornext`);
    const p = pullFor(m, e);
    if (!p) return expect409(res, 'readyfornext');
    if (finishedEarlier(p, e)) return expect200(res, { ready: true }, 'readyfornext of a finished entity');
    expireLease(p, m.now);
    if (p.phase === 'acked') p.phase = 'ready';
    expect200(res, { ready: p.phase !== 'leased' }, 'readyfornext');
  });
const pullEntityFinishCmd = (e: Entity) =>
  cmd(`pull/${e}/finish`, async (m, r) => {
    const res = await call(r, 'POST', `/pull/${e}/finish`, {});
    const p = pullFor(m, e);
    if (!p) return expect409(res, 'pull entity finish');
    if (finishedEarlier(p, e) || p.entityFinished) return expect200(res, { ok: true, duplicate: true }, 'pull entity finish again');
    if (p.pos < idsOf(p).length) return expect409(res, 'pull entity finish early');
    expect200(res, { ok: true }, 'pull entity finish');
    if (p.index + 1 < p.entities.length) {
      p.index++;
      p.pos = 0;
      p.last = null;
      p.headDelivered = false;
    } else p.entityFinished = true;
    p.phase = 'ready';
  });
const pullFinishCmd = () =>
  cmd('pull/finish', async (m, r) => {
    const res = await call(r, 'POST', '/pull/finish', {});
    const c = m.cur;
    if (m.status === 'initialized' && c?.kind === 'pull') c.touchedAt = Math.max(c.touchedAt, m.now);
    if (m.status === 'initialized' && c?.kind === 'pull' && c.entityFinished) {
      expect200(res, { ok: true }, 'pull/finish');
      end(m, 'finished');
    } else expect409(res, 'pull/finish');
  });
const pageCmd = (k: 'push' | 'pingsample', e: Entity, stamp: number | string) =>
  cmd(`${k}/${e} page (last_updated ${JSON.stringify(stamp)})`, async (m, r) => {
    const items = (e === 'products' ? CATALOG.products.slice(0, 2).map(CONVERTERS.products.toReverse) : CATALOG.orders.map(CONVERTERS.orders.toReverse)).map((x) => ({ ...x, last_updated: stamp }));
    const res = await call(r, 'POST', `/${k}/${e}`, { [e]: items });
    const p = pushFor(m, k);
    if (!p || p.phase !== e) return expect409(res, 'page');
    const fresh = items.filter((x) => !p.received[e].has(x._id));
    for (const x of fresh) p.received[e].add(x._id);
    p.pages[e]++;
    if (k === 'push') m.cursors[e] = stamp;
    expect200(res, { received: fresh.length }, 'page');
  });
const pushEntityFinishCmd = (k: 'push' | 'pingsample', e: Entity) =>
  cmd(`${k}/${e}/finish`, async (m, r) => {
    const res = await call(r, 'POST', `/${k}/${e}/finish`, {});
    const p = pushFor(m, k);
    if (!p) return expect409(res, 'push entity finish');
    if (p.phase === 'done') return expect200(res, { ok: true, duplicate: true }, 'push entity finish again');
    if (p.phase === 'products') {
      if (e === 'orders') return expect409(res, 'orders finish before products');
      expect200(res, { ok: true }, 'products finish');
      p.phase = 'orders';
      return;
    }
    if (e === 'products' && k === 'pingsample') return expect200(res, { ok: true, duplicate: true }, 'sample products finish again');
    // push/products/finish while orders are expected: the spec's printed order finish path.
    expect200(res, { ok: true }, 'orders finish');
    p.phase = 'done';
  });
const pushFinishCmd = (k: 'push' | 'pingsample') =>
  cmd(`${k}/finish`, async (m, r) => {
    const res = await call(r, 'POST', `/${k}/finish`, {});
    const p = pushFor(m, k);
    if (p && p.phase === 'done') {
      expect200(res, { ok: true }, 'general finish');
      end(m, 'finished');
    } else expect409(res, 'general finish');
  });
const cancelCmd = () =>
  cmd('operator cancels the running transaction', async (m, r) => {
    if (!m.cur) {
      await expect(r.service.cancel('shop')).rejects.toThrow(/no transaction is running/);
      return;
    }
    await r.service.cancel('shop');
    end(m, 'cancelled');
  });
const clockCmd = (ms: number) =>
  cmd(`clock +${ms}`, async (m, r) => {
    m.now += ms;
    r.clock.now += ms;
  });
const restartCmd = () =>
  cmd('service restart (same state store)', async (_m, r) => {
    await r.service.close();
    r.service = makeService(r.state, r.clock);
    r.restarts++;
  });

/** The next legal call of a well-behaved daemon, given the model (so sequences get somewhere). */
const stepCmd = (outcome: Outcome, restart: boolean, byAlias: boolean): Cmd => ({
  check: () => true,
  toString: () => `daemon step (${outcome}${restart ? ', restart' : ''}${byAlias ? ', by alias' : ''})`,
  async run(m, r) {
    expire(m);
    const c = m.cur;
    if (!c) {
      const head = m.queue[0];
      if (!head) return enqueueCmd(outcome === 'failed' ? 'push' : 'pull', restart ? 'orders' : undefined, false).run(m, r);
      return head.kind === 'pull' ? pullInitCmd(undefined).run(m, r) : pushInitCmd(head.kind).run(m, r);
    }
    if (c.kind === 'pull') {
      const e = currentEntity(c);
      if (c.entityFinished) return pullFinishCmd().run(m, r);
      if (c.phase === 'acked') return readyCmd(e).run(m, r);
      if (c.phase === 'leased' && !restart) return ackCmd(e, 'head', outcome, byAlias, 0).run(m, r);
      if (c.pos >= idsOf(c).length) return pullEntityFinishCmd(e).run(m, r);
      return nextCmd(e, restart).run(m, r);
    }
    if (c.phase === 'done') return pushFinishCmd(c.kind).run(m, r);
    if (restart) return pageCmd(c.kind, c.phase, m.now).run(m, r);
    return pushEntityFinishCmd(c.kind, c.phase).run(m, r);
  },
});

const entityArb = fc.constantFrom<Entity>('products', 'orders');
const kindArb = fc.constantFrom<'push' | 'pingsample'>('push', 'pingsample');
const step = fc.tuple(fc.constantFrom<Outcome>('succeded', 'succeded', 'failed'), fc.boolean(), fc.boolean()).map(([o, restart, alias]) => stepCmd(o, restart, alias));
const commands: fc.Arbitrary<Cmd>[] = [
  step, step, step, step, step, step, step, step, step, step,
  fc.tuple(fc.constantFrom<Kind>('pull', 'push', 'pingsample'), fc.option(entityArb, { nil: undefined }), fc.boolean()).map(([k, e, full]) => enqueueCmd(k, e, full)),
  fc.constant(readsCmd()),
  fc.constant(readsCmd()),
  fc.option(entityArb, { nil: undefined }).map(pullInitCmd),
  kindArb.map(pushInitCmd),
  entityArb.map(hasMoreCmd),
  fc.tuple(entityArb, fc.boolean()).map(([e, restart]) => nextCmd(e, restart)),
  fc.tuple(entityArb, fc.constantFrom<'head' | 'previous' | 'other'>('head', 'previous', 'other'), fc.constantFrom<Outcome>('succeded', 'failed'), fc.boolean(), fc.nat(9)).map(([e, w, o, a, n]) => ackCmd(e, w, o, a, n)),
  entityArb.map(badAckCmd),
  entityArb.map(readyCmd),
  entityArb.map(pullEntityFinishCmd),
  fc.constant(pullFinishCmd()),
  fc.tuple(kindArb, entityArb, fc.constantFrom<number | string>(1517360038797, '1517360038797 - 3', 42)).map(([k, e, s]) => pageCmd(k, e, s)),
  fc.tuple(kindArb, entityArb).map(([k, e]) => pushEntityFinishCmd(k, e)),
  kindArb.map(pushFinishCmd),
  fc.constant(cancelCmd()),
  fc.constant(restartCmd()),
  fc.constant(restartCmd()),
  fc.constantFrom(300, LEASE_MS, 5 * LEASE_MS, IDLE_MS).map(clockCmd),
];

/** A well-behaved daemon, straight on `handle()`: runs every queued transaction to the end; returns the items it acknowledged. */
async function drain(r: Real): Promise<Record<Entity, number>> {
  const acked = { products: 0, orders: 0 };
  for (let guard = 0; guard < 100; guard++) {
    const ping = (await call(r, 'GET', '/ping')).body.connectionstatus;
    let status = (await call(r, 'GET', '/upstreamstatus')).body.upstreamstatus;
    // `finished` is said once after a finish; the next read says what comes next.
    if (status === 'finished') status = (await call(r, 'GET', '/upstreamstatus')).body.upstreamstatus;
    if (ping === 'idle') return acked;
    if (ping === 'pulling') {
      if (status === 'waiting') expect((await call(r, 'POST', '/pull/initialize', {})).status).toBe(200);
      const seen = new Set<Entity>();
      for (let entity = (await call(r, 'GET', '/entity')).body.entity as Entity; !seen.has(entity); entity = (await call(r, 'GET', '/entity')).body.entity as Entity) {
        seen.add(entity);
        for (;;) {
          const h = (await call(r, 'GET', `/pull/${entity}/hasmore`)).body.hasmore;
          if (h === 'done') break;
          if (h === 'waiting') {
            await call(r, 'GET', `/pull/${entity}/readyfornext`);
            continue;
          }
          const item = (await call(r, 'GET', `/pull/${entity}/next`)).body[noun(entity)] as { _id: string };
          expect((await call(r, 'POST', `/pull/${entity}/${encodeURIComponent(item._id)}/succeded`, { [noun(entity)]: item })).body).toEqual({ ok: true });
          acked[entity]++;
          expect((await call(r, 'GET', `/pull/${entity}/readyfornext`)).body).toEqual({ ready: true });
        }
        expect((await call(r, 'POST', `/pull/${entity}/finish`, {})).status).toBe(200);
      }
      expect((await call(r, 'POST', '/pull/finish', {})).status).toBe(200);
    } else {
      const kind = (await call(r, 'GET', '/strategy')).body.strategy as string;
      if (status === 'waiting') expect((await call(r, 'POST', `/${kind}/initialize`, {})).status).toBe(200);
      for (const e of ENTITIES) await call(r, 'POST', `/${kind}/${e}/finish`, {});
      expect((await call(r, 'POST', `/${kind}/finish`, {})).status).toBe(200);
    }
  }
  throw new Error('the queue did not drain');
}

test('the service state machine follows its model across restarts; nothing is lost or acknowledged twice', async () => {
  let restarts = 0;
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 120, size: 'max' }), async (cmds) => {
      const clock = { now: 1_000_000 };
      const state = createMemoryStateStore();
      const real: Real = { service: makeService(state, clock), state, clock, restarts: 0 };
      const model: Model = { status: 'waiting', finishedUnread: false, queue: [], now: clock.now, cursors: { products: 0, orders: 0 }, accepted: { products: 0, orders: 0 }, firstDeliveries: { products: 0, orders: 0 } };
      await fc.asyncModelRun(() => ({ model, real }), cmds);
      restarts += real.restarts;
      // Counters agree with the model: each accepted acknowledgement counted once, across restarts.
      const before = await real.service.status('shop');
      for (const e of ENTITIES) {
        expect(before[e].succeeded + before[e].failed).toBe(model.accepted[e]);
        expect(before[e].delivered).toBe(model.firstDeliveries[e]);
        expect(before[e].skipped).toBe(0);
      }
      // Then a well-behaved daemon finishes everything (after one more restart).
      await real.service.close();
      real.service = makeService(state, clock);
      const drained = await drain(real);
      const after = await real.service.status('shop');
      expect(after.mode).toBe('idle');
      for (const e of ENTITIES) expect(after[e].succeeded + after[e].failed).toBe(model.accepted[e] + drained[e]);
      // Every pull that finished acknowledged each of its items exactly once; the others say how many were left.
      for (const t of after.transactions.filter((x) => x.kind === 'pull')) {
        const total = (t.entities ?? []).reduce((n, e) => n + sortedIds[e].length, 0);
        if (t.outcome === 'finished') expect(t.items.products + t.items.orders).toBe(total);
        else expect(t.remaining).toBeGreaterThanOrEqual(0);
      }
      expect(after.failures.every((f) => f.source === 'daemon' && f.reasons[0]?.code === 1001)).toBe(true);
      // Ended transactions leave no records behind: the state store holds the state, and the records still shown.
      const keys = [...state.dump().keys()];
      expect(keys.filter((k) => /:(items|rx):/.test(k))).toEqual([]);
    }),
    { numRuns: 100 },
  );
  expect(restarts).toBeGreaterThan(50);
});
