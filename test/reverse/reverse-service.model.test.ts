/**
 * Model-based test of the service's state machine, through the framework-agnostic `handle()`
 * (the same code the Express binding calls): random sequences of daemon calls, legal and illegal,
 * duplicates, late acknowledgements, lease expiry and daemon restarts mid-item. An independent,
 * small model says what each call must answer; afterwards a well-behaved daemon drains the queue
 * and the counters must show no item lost and none acknowledged twice.
 */
import fc from 'fast-check';
import { createMemoryAdapter } from '../../adapters/memory';
import { CONVERTERS, type Entity } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createReverseService, type ReverseResponse, type ReverseService } from '../../lib/reverse';

const KEY = 'model-key';
const LEASE_MS = 1000;
const CATALOG = demoCatalog(5); // 5 products, 1 order
type Kind = 'pull' | 'push' | 'pingsample';
type Outcome = 'succeded' | 'failed';

interface PullModel {
  kind: 'pull';
  entity: Entity;
  ids: string[];
  pos: number;
  phase: 'ready' | 'leased' | 'acked';
  headDelivered: boolean;
  leaseUntil: number;
  acked: Map<string, Outcome>;
  entityFinished: boolean;
}
interface PushModel {
  kind: 'push' | 'pingsample';
  phase: Entity | 'done';
}
interface Model {
  status: 'waiting' | 'initialized' | 'finishing' | 'finished';
  queue: Array<{ kind: Kind; entity?: Entity }>;
  cur?: PullModel | PushModel;
  now: number;
  /** Accepted (non-duplicate) acknowledgements, per entity. */
  accepted: Record<Entity, number>;
  firstDeliveries: Record<Entity, number>;
  /** Items of pull transactions that were completed. */
  completedPullItems: Record<Entity, number>;
}
interface Real {
  service: ReverseService;
  clock: { now: number };
  sortedIds: Record<Entity, string[]>;
}

const codes = new Set([200, 400, 404, 405, 409]);
async function call(r: Real, method: string, path: string, body?: unknown): Promise<ReverseResponse> {
  const res = await r.service.handle({ method, key: KEY, path, body });
  if (!codes.has(res.status)) throw new Error(`${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
  if (res.status !== 200) expect(typeof (res.body as { error?: unknown }).error).toBe('string');
  return res;
}
function expect409(res: ReverseResponse, what: string): void {
  if (res.status !== 409) throw new Error(`${what}: expected 409, got ${res.status} ${JSON.stringify(res.body)}`);
}
function expect200(res: ReverseResponse, body: unknown, what: string): void {
  if (res.status !== 200) throw new Error(`${what}: expected 200, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body).toEqual(body);
}

const pullOf = (m: Model, e: Entity): PullModel | undefined => (m.status === 'initialized' && m.cur?.kind === 'pull' && m.cur.entity === e ? m.cur : undefined);
const pushOf = (m: Model, k: 'push' | 'pingsample'): PushModel | undefined => (m.status === 'initialized' && m.cur && m.cur.kind === k ? (m.cur as PushModel) : undefined);
const expire = (p: PullModel, now: number) => {
  if (p.phase === 'leased' && now >= p.leaseUntil) p.phase = 'ready';
};
const complete = (m: Model) => {
  if (m.cur?.kind === 'pull') {
    expect(m.cur.acked.size).toBe(m.cur.ids.length); // nothing lost
    m.completedPullItems[m.cur.entity] += m.cur.ids.length;
  }
  m.cur = undefined;
  m.status = m.queue.length > 0 ? 'waiting' : 'finished';
};

type Cmd = fc.AsyncCommand<Model, Real>;
const cmd = (name: string, run: (m: Model, r: Real) => Promise<void>): Cmd => ({ check: () => true, run, toString: () => name });

const entityArb = fc.constantFrom<Entity>('products', 'orders');
const enqueueCmd = (kind: Kind, entity: Entity) =>
      cmd(`enqueue ${kind} ${entity}`, async (m, r) => {
        r.service.enqueue('shop', kind === 'pull' ? { kind, entity } : { kind });
        m.queue.push(kind === 'pull' ? { kind, entity } : { kind });
        if (m.status === 'finished') m.status = 'waiting';
      });
const readsCmd = () =>
    cmd('reads', async (m, r) => {
      expect200(await call(r, 'GET', '/upstreamstatus'), { upstreamstatus: m.status, connectionstatus: m.status }, 'upstreamstatus');
      expect200(await call(r, 'GET', '/mode'), { mode: m.cur?.kind ?? m.queue[0]?.kind ?? 'idle' }, 'mode');
      const res = await call(r, 'GET', '/entity');
      const c = m.cur;
      const expected = c ? (c.kind === 'pull' ? c.entity : c.phase === 'done' ? undefined : c.phase) : m.queue[0] ? (m.queue[0].kind === 'pull' ? m.queue[0].entity : 'products') : undefined;
      if (expected) expect200(res, { entity: expected }, 'entity');
      else expect409(res, 'entity');
    });
const pullInitCmd = (entity: Entity | undefined) =>
    cmd(`pull/initialize ${entity ?? '{}'}`, async (m, r) => {
      const res = await call(r, 'POST', '/pull/initialize', entity ? { entity } : {});
      const head = m.queue[0];
      if (m.status === 'initialized' && m.cur?.kind === 'pull' && (!entity || entity === m.cur.entity)) {
        // Deployed daemons re-send initialize: a repeat on the running pull changes nothing.
        expect200(res, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }, 'pull/initialize again');
      } else if (m.status === 'waiting' && head?.kind === 'pull' && (!entity || entity === head.entity)) {
        expect200(res, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }, 'pull/initialize');
        m.queue.shift();
        m.cur = { kind: 'pull', entity: head.entity!, ids: r.sortedIds[head.entity!], pos: 0, phase: 'ready', headDelivered: false, leaseUntil: 0, acked: new Map(), entityFinished: false };
        m.status = 'initialized';
      } else expect409(res, 'pull/initialize');
    });
const pushInitCmd = (kind: 'push' | 'pingsample') =>
    cmd(`${kind}/initialize`, async (m, r) => {
      const res = await call(r, 'POST', `/${kind}/initialize`, {});
      const head = m.queue[0];
      if (m.status === 'initialized' && m.cur?.kind === kind) {
        expect200(res, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }, `${kind}/initialize again`);
      } else if (m.status === 'waiting' && head && head.kind === kind) {
        expect200(res, { upstreamstatus: 'initialized', connectionstatus: 'initialized' }, 'push/initialize');
        m.queue.shift();
        m.cur = { kind: head.kind as 'push' | 'pingsample', phase: 'products' };
        m.status = 'initialized';
      } else expect409(res, 'push/initialize');
    });
const hasMoreCmd = (e: Entity) =>
    cmd(`hasmore ${e}`, async (m, r) => {
      const res = await call(r, 'GET', `/pull/${e}/hasmore`);
      const p = pullOf(m, e);
      if (!p) return expect409(res, 'hasmore');
      expire(p, m.now);
      const v = p.entityFinished ? 'done' : p.phase === 'acked' ? 'waiting' : p.phase === 'leased' || p.pos < p.ids.length ? 'ready' : 'done';
      expect200(res, { hasmore: v }, 'hasmore');
    });
const nextCmd = (e: Entity, restart: boolean) =>
    cmd(`${restart ? 'daemon restart: ' : ''}next ${e}`, async (m, r) => {
      const res = await call(r, 'GET', `/pull/${e}/next`);
      const p = pullOf(m, e);
      if (!p || p.entityFinished || p.phase === 'acked' || p.pos >= p.ids.length) return expect409(res, 'next');
      if (res.status !== 200) throw new Error(`next: expected 200, got ${res.status}`);
      const id = p.ids[p.pos];
      expect(((res.body as Record<string, { _id: string }>)[e === 'products' ? 'product' : 'order'])._id).toBe(id);
      if (!p.headDelivered) m.firstDeliveries[e]++;
      p.headDelivered = true;
      p.phase = 'leased';
      p.leaseUntil = m.now + LEASE_MS;
      if (restart) {
        // A restarted daemon asks again from the start of the cycle and gets the same item.
        expect200(await call(r, 'GET', `/pull/${e}/hasmore`), { hasmore: 'ready' }, 'hasmore after restart');
        const again = await call(r, 'GET', `/pull/${e}/next`);
        expect(((again.body as Record<string, { _id: string }>)[e === 'products' ? 'product' : 'order'])._id).toBe(id);
        p.leaseUntil = m.now + LEASE_MS;
      }
    });
const ackCmd = (e: Entity, which: 'head' | 'previous' | 'other', outcome: Outcome, n: number) =>
    cmd(`${outcome} ${e} ${which}`, async (m, r) => {
      const ids = r.sortedIds[e];
      const p = pullOf(m, e);
      const id = which === 'head' && p ? (p.ids[p.pos] ?? ids[0]) : which === 'previous' && p && p.pos > 0 ? p.ids[p.pos - 1] : ids[n % ids.length];
      const item = e === 'products' ? CATALOG.products.find((x) => x._id === id)! : CATALOG.orders.find((x) => x._id === id)!;
      const body = outcome === 'succeded' ? (e === 'products' ? { product: CONVERTERS.products.toReverse(item as never) } : { order: CONVERTERS.orders.toReverse(item as never) }) : { error: 'refused', reasons: [{ message: 'blank SKU', code: 1001 }] };
      const res = await call(r, 'POST', `/pull/${e}/${encodeURIComponent(id)}/${outcome}`, body);
      if (!p) return expect409(res, 'ack');
      const prev = p.acked.get(id);
      if (prev !== undefined) {
        if (prev === outcome) expect200(res, { ok: true, duplicate: true }, 'duplicate ack');
        else expect409(res, 'conflicting ack');
        return;
      }
      if (p.pos < p.ids.length && p.ids[p.pos] === id && p.headDelivered && !p.entityFinished) {
        expect200(res, { ok: true }, 'ack');
        p.acked.set(id, outcome);
        p.pos++;
        p.phase = 'acked';
        p.headDelivered = false;
        m.accepted[e]++;
      } else expect409(res, 'ack of an item not handed out');
    });
const badAckCmd = (e: Entity) =>
    cmd(`bad ack body ${e}`, async (m, r) => {
      const res = await call(r, 'POST', `/pull/${e}/${encodeURIComponent(r.sortedIds[e][0])}/failed`, { error: 3, reasons: 'no' });
      expect(res.status).toBe(400);
    });
const readyCmd = (e: Entity) =>
    cmd(`readyfornext ${e}`, async (m, r) => {
      const res = await call(r, 'GET', `/pull/${e}/readyfornext`);
      const p = pullOf(m, e);
      if (!p) return expect409(res, 'readyfornext');
      expire(p, m.now);
      if (p.phase === 'acked') p.phase = 'ready';
      expect200(res, { ready: p.phase !== 'leased' }, 'readyfornext');
    });
const pullEntityFinishCmd = (e: Entity) =>
    cmd(`pull/${e}/finish`, async (m, r) => {
      const res = await call(r, 'POST', `/pull/${e}/finish`, {});
      const p = pullOf(m, e);
      if (!p) return expect409(res, 'pull entity finish');
      if (p.entityFinished) return expect200(res, { ok: true, duplicate: true }, 'pull entity finish again');
      if (p.pos < p.ids.length) return expect409(res, 'pull entity finish early');
      expect200(res, { ok: true }, 'pull entity finish');
      p.entityFinished = true;
      p.phase = 'ready';
    });
const pullFinishCmd = () =>
    cmd('pull/finish', async (m, r) => {
      const res = await call(r, 'POST', '/pull/finish', {});
      if (m.status === 'initialized' && m.cur?.kind === 'pull' && m.cur.entityFinished) {
        expect200(res, { ok: true }, 'pull/finish');
        complete(m);
      } else expect409(res, 'pull/finish');
    });
const pageCmd = (k: 'push' | 'pingsample', e: Entity) =>
    cmd(`${k}/${e} page`, async (m, r) => {
      const items = e === 'products' ? CATALOG.products.slice(0, 2).map(CONVERTERS.products.toReverse) : CATALOG.orders.map(CONVERTERS.orders.toReverse);
      const res = await call(r, 'POST', `/${k}/${e}`, { [e]: items });
      const p = pushOf(m, k);
      if (p && p.phase === e) expect200(res, { received: items.length }, 'page');
      else expect409(res, 'page');
    });
const pushEntityFinishCmd = (k: 'push' | 'pingsample', e: Entity) =>
    cmd(`${k}/${e}/finish`, async (m, r) => {
      const res = await call(r, 'POST', `/${k}/${e}/finish`, {});
      const p = pushOf(m, k);
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
      const p = pushOf(m, k);
      if (p && p.phase === 'done') {
        expect200(res, { ok: true }, 'general finish');
        complete(m);
      } else expect409(res, 'general finish');
    });
const clockCmd = (ms: number) =>
    cmd(`clock +${ms}`, async (m, r) => {
      m.now += ms;
      r.clock.now += ms;
    });

/** The next legal call of a well-behaved daemon, given the model (so sequences get somewhere). */
const stepCmd = (outcome: Outcome, restart: boolean): Cmd => ({
  check: () => true,
  toString: () => `daemon step (${outcome}${restart ? ', restart' : ''})`,
  async run(m, r) {
    const c = m.cur;
    if (!c) {
      const head = m.queue[0];
      if (!head) return enqueueCmd(outcome === 'failed' ? 'push' : 'pull', restart ? 'orders' : 'products').run(m, r);
      return head.kind === 'pull' ? pullInitCmd(head.entity).run(m, r) : pushInitCmd(head.kind).run(m, r);
    }
    if (c.kind === 'pull') {
      const e = c.entity;
      if (c.entityFinished) return pullFinishCmd().run(m, r);
      if (c.phase === 'acked') return readyCmd(e).run(m, r);
      if (c.phase === 'leased' && !restart) return ackCmd(e, 'head', outcome, 0).run(m, r);
      if (c.pos >= c.ids.length) return pullEntityFinishCmd(e).run(m, r);
      return nextCmd(e, restart).run(m, r);
    }
    if (c.phase === 'done') return pushFinishCmd(c.kind).run(m, r);
    if (restart) return pageCmd(c.kind, c.phase).run(m, r);
    return pushEntityFinishCmd(c.kind, c.phase).run(m, r);
  },
});

const kindArb = fc.constantFrom<'push' | 'pingsample'>('push', 'pingsample');
const step = fc.tuple(fc.constantFrom<Outcome>('succeded', 'succeded', 'failed'), fc.boolean()).map(([o, restart]) => stepCmd(o, restart));
const commands: fc.Arbitrary<Cmd>[] = [
  step, step, step, step, step, step, step, step, step, step,
  fc.tuple(fc.constantFrom<Kind>('pull', 'push', 'pingsample'), entityArb).map(([k, e]) => enqueueCmd(k, e)),
  fc.constant(readsCmd()),
  fc.option(entityArb, { nil: undefined }).map(pullInitCmd),
  kindArb.map(pushInitCmd),
  entityArb.map(hasMoreCmd),
  fc.tuple(entityArb, fc.boolean()).map(([e, restart]) => nextCmd(e, restart)),
  fc.tuple(entityArb, fc.constantFrom<'head' | 'previous' | 'other'>('head', 'previous', 'other'), fc.constantFrom<Outcome>('succeded', 'failed'), fc.nat(9)).map(([e, w, o, n]) => ackCmd(e, w, o, n)),
  entityArb.map(badAckCmd),
  entityArb.map(readyCmd),
  entityArb.map(pullEntityFinishCmd),
  fc.constant(pullFinishCmd()),
  fc.tuple(kindArb, entityArb).map(([k, e]) => pageCmd(k, e)),
  fc.tuple(kindArb, entityArb).map(([k, e]) => pushEntityFinishCmd(k, e)),
  kindArb.map(pushFinishCmd),
  fc.constantFrom(300, LEASE_MS, 5 * LEASE_MS).map(clockCmd),
];

/** A well-behaved daemon, straight on `handle()`: runs every queued transaction to the end. */
async function drain(r: Real): Promise<void> {
  for (let guard = 0; guard < 100; guard++) {
    const mode = ((await call(r, 'GET', '/mode')).body as { mode: string }).mode;
    const status = ((await call(r, 'GET', '/upstreamstatus')).body as { connectionstatus: string }).connectionstatus;
    if (mode === 'idle') return;
    if (mode === 'pull') {
      const entity = ((await call(r, 'GET', '/entity')).body as { entity: Entity }).entity;
      if (status === 'waiting') expect((await call(r, 'POST', '/pull/initialize', { entity })).status).toBe(200);
      for (;;) {
        const h = ((await call(r, 'GET', `/pull/${entity}/hasmore`)).body as { hasmore: string }).hasmore;
        if (h === 'done') break;
        if (h === 'waiting') {
          await call(r, 'GET', `/pull/${entity}/readyfornext`);
          continue;
        }
        const item = Object.values((await call(r, 'GET', `/pull/${entity}/next`)).body as Record<string, { _id: string }>)[0];
        const res = await call(r, 'POST', `/pull/${entity}/${encodeURIComponent(item._id)}/succeded`, { [entity === 'products' ? 'product' : 'order']: item });
        expect(res.body).toEqual({ ok: true });
        expect((await call(r, 'GET', `/pull/${entity}/readyfornext`)).body).toEqual({ ready: true });
      }
      expect((await call(r, 'POST', `/pull/${entity}/finish`, {})).status).toBe(200);
      expect((await call(r, 'POST', '/pull/finish', {})).status).toBe(200);
    } else {
      if (status === 'waiting') expect((await call(r, 'POST', `/${mode}/initialize`, {})).status).toBe(200);
      for (const e of ['products', 'orders'] as const) await call(r, 'POST', `/${mode}/${e}/finish`, {});
      expect((await call(r, 'POST', `/${mode}/finish`, {})).status).toBe(200);
    }
  }
  throw new Error('the queue did not drain');
}

test('the service state machine follows its model; nothing is lost or acknowledged twice', async () => {
  const sortedIds = {
    products: [...CATALOG.products].sort((a, b) => (a.last_updated! - b.last_updated! || (a._id < b._id ? -1 : 1))).map((p) => p._id),
    orders: [...CATALOG.orders].sort((a, b) => (a.last_updated! - b.last_updated! || (a._id < b._id ? -1 : 1))).map((o) => o._id),
  };
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 120, size: 'max' }), async (cmds) => {
      const clock = { now: 1_000_000 };
      const service = createReverseService({ adapter: createMemoryAdapter(CATALOG), connections: [{ key: KEY, name: 'shop' }], leaseMs: LEASE_MS, now: () => clock.now });
      const real: Real = { service, clock, sortedIds };
      const model: Model = {
        status: 'waiting',
        queue: [],
        now: clock.now,
        accepted: { products: 0, orders: 0 },
        firstDeliveries: { products: 0, orders: 0 },
        completedPullItems: { products: 0, orders: 0 },
      };
      await fc.asyncModelRun(() => ({ model, real }), cmds);
      // Counters agree with the model: each accepted acknowledgement counted once.
      for (const e of ['products', 'orders'] as const) {
        const c = service.status('shop')[e];
        expect(c.succeeded + c.failed).toBe(model.accepted[e]);
        expect(c.delivered).toBe(model.firstDeliveries[e]);
        expect(c.skipped).toBe(0);
      }
      // Then a well-behaved daemon finishes everything: every item of every pull is acknowledged.
      let pulls = { products: model.queue.filter((q) => q.kind === 'pull' && q.entity === 'products').length, orders: model.queue.filter((q) => q.kind === 'pull' && q.entity === 'orders').length };
      if (model.cur?.kind === 'pull') pulls = { ...pulls, [model.cur.entity]: pulls[model.cur.entity] + 1 };
      await drain(real);
      const after = service.status('shop');
      expect(after.mode).toBe('idle');
      for (const e of ['products', 'orders'] as const) {
        expect(after[e].succeeded + after[e].failed).toBe(model.completedPullItems[e] + pulls[e] * sortedIds[e].length);
      }
      expect(after.failures.every((f) => f.source === 'daemon' && f.reasons[0]?.code === 1001)).toBe(true);
    }),
    { numRuns: 100 },
  );
});
