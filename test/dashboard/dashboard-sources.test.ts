/**
 * The dashboard's sources over real services: "Pause" really stops one connection's runs (BullMQ
 * on Redis, a real worker) and "Resume" restarts them; Redis or a reverse service being down
 * gives a page that says so, in time; "Send updates" queues pulls on a real reverse service; the
 * pulled-id → store-id map is shown when a service reports one. The router is mounted below a path
 * of an existing Express app, as a user would.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createDashboardRouter, createRedisSyncSource, createReverseHttpSource } from '../../lib/dashboard';
import { readReverseView } from '../../lib/dashboard/sources/reverse-http-source';
import { createReverseServiceRouter } from '../../lib/reverse';
import { describeRedis, REDIS_URL } from '../sync/bullmq-helpers';
import { startFleet, type Fleet } from './dashboard-fixture';

const TOKEN = 'sources-test-token-0123456789abcdef';
const REVERSE_KEY = 'sources-test-reverse-key-77aa';

async function listen(app: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const bearer = { authorization: `Bearer ${TOKEN}` };
const postJson = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) });

describeRedis('dashboard sources on Redis and BullMQ', () => {
  let fleet: Fleet;
  let server: Awaited<ReturnType<typeof listen>>;
  let router: ReturnType<typeof createDashboardRouter>;
  beforeAll(async () => {
    fleet = await startFleet({ connections: 3, intervalMs: 600, products: 20 });
    router = createDashboardRouter({ sync: createRedisSyncSource({ connection: REDIS_URL, prefix: fleet.prefix }), token: TOKEN, jobs: false });
    const app = express();
    app.get('/', (_req, res) => void res.send('the host app'));
    app.use('/ops', router);
    server = await listen(app);
    await fleet.waitForRuns(2);
  }, 30_000);
  afterAll(async () => {
    await server?.close();
    await router?.dashboard.close();
    await fleet?.close();
  });

  test('"Pause" stops one connection\'s runs while the others go on; "Resume" restarts them', async () => {
    const [paused, other] = fleet.ids;
    let res = await postJson(`${server.url}/ops/actions/pause`, { connection: paused });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, message: expect.stringContaining(`Paused ${paused}`) });
    // A run already queued for the current slot may still finish: count from a quiet moment.
    await new Promise((r) => setTimeout(r, 700));
    const before = { paused: (await fleet.health.history(paused)).length, other: (await fleet.health.history(other)).length };
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await fleet.health.history(paused)).length).toBe(before.paused);
    expect((await fleet.health.history(other)).length).toBeGreaterThanOrEqual(before.other + 2);
    const overview = (await (await fetch(`${server.url}/ops/api/overview`, { headers: bearer })).json()) as { sync: { connections: Array<{ name: string; schedule?: unknown }> } };
    const row = overview.sync.connections.find((c: { name: string }) => c.name === paused);
    expect(row).toMatchObject({ paused: { intervalMs: 600 } });
    expect(row?.schedule).toBeUndefined();
    // Pausing twice says so; resuming restores the interval and runs come back.
    res = await postJson(`${server.url}/ops/actions/pause`, { connection: paused });
    expect(res.status).toBe(409);
    res = await postJson(`${server.url}/ops/actions/resume`, { connection: paused });
    expect(res.status).toBe(200);
    expect((await fleet.queue.connections()).find((c) => c.id === paused)).toMatchObject({ intervalMs: 600 });
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await fleet.health.history(paused)).length).toBeGreaterThanOrEqual(before.paused + 1);
    res = await postJson(`${server.url}/ops/actions/resume`, { connection: paused });
    expect(res.status).toBe(409);
  }, 20_000);

  test('mounted below /ops: links and forms carry the mount path; the host app is untouched', async () => {
    const page = await (await fetch(`${server.url}/ops/`, { headers: bearer })).text();
    expect(page).toContain(`href="/ops/connections/${fleet.ids[0]}"`);
    expect(page).toContain('action="/ops/actions/run-now"');
    expect(page).toContain('href="/ops/assets/dashboard.css"');
    expect(await (await fetch(`${server.url}/`)).text()).toBe('the host app');
    const big = await fetch(`${server.url}/ops/actions/run-now`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: 'x'.repeat(20_000) });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({ error: 'the body is larger than 16384 bytes' });
  });

  test('in an Express 4 app too: the page, an action, and the jobs view (bull-board) answer', async () => {
    const express4 = require('express4') as typeof express;
    const r4 = createDashboardRouter({ sync: createRedisSyncSource({ connection: REDIS_URL, prefix: fleet.prefix }), token: TOKEN });
    const s4 = await listen(express4().use('/ops', r4)).catch(async (err) => {
      await r4.dashboard.close();
      throw err;
    });
    try {
      expect(r4.jobs).toBe(true);
      expect((await fetch(`${s4.url}/ops/`, { headers: bearer })).status).toBe(200);
      const jobs = await fetch(`${s4.url}/ops/jobs/`, { headers: bearer });
      expect(jobs.status).toBe(200);
      expect(await jobs.text()).toContain('<base href="/ops/jobs/" />');
      const api = await fetch(`${s4.url}/ops/jobs/api/queues`, { headers: bearer });
      expect(((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name)).toEqual(['sync']);
      expect((await fetch(`${s4.url}/ops/jobs/api/queues`)).status).toBe(401);
      const res = await postJson(`${s4.url}/ops/actions/run-now`, { connection: fleet.ids[2] });
      expect(res.status).toBe(200);
    } finally {
      await s4.close();
      await r4.dashboard.close();
    }
  });

  test('Redis down: every page answers within a second with the real cause, and the rest of the page renders', async () => {
    const service = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(3)), connections: [{ key: REVERSE_KEY, name: 'erp-up' }] });
    const rs = await listen(express().use(service));
    const told: string[] = [];
    // The default time limit (5 s): the cause must come from the connection, not from the limit.
    const down = createDashboardRouter({ sync: createRedisSyncSource({ connection: 'redis://127.0.0.1:1' }), reverse: [createReverseHttpSource(rs.url)], jobs: false, onError: (_e, ctx) => told.push(ctx.message) });
    const s = await listen(express().use(down));
    try {
      for (let i = 0; i < 3; i++) {
        const t0 = Date.now();
        const res = await fetch(`${s.url}/`);
        expect(res.status).toBe(200);
        expect(Date.now() - t0).toBeLessThan(1_000);
        const page = await res.text();
        expect(page).toContain('Redis redis://127.0.0.1:1 (storebridge:sync): cannot be reached (ECONNREFUSED)');
        expect(page).toContain('data-reverse="erp-up"');
      }
      const run = await postJson(`${s.url}/actions/run-now`, { connection: 'shop-1' });
      expect([run.status, ((await run.json()) as { error: string }).error]).toEqual([502, 'run-now shop-1 failed: Redis redis://127.0.0.1:1 (storebridge:sync): cannot be reached (ECONNREFUSED)']);
      expect(told.length).toBeGreaterThanOrEqual(4);
      expect(new Set(told)).toEqual(new Set(['Redis redis://127.0.0.1:1 (storebridge:sync): cannot be reached (ECONNREFUSED)']));
    } finally {
      await s.close();
      await rs.close();
      await down.dashboard.close();
    }
  });
});

describe('reverse sources', () => {
  test('"Send updates" queues pulls on a real reverse service; "Fetch updates" a push; by name', async () => {
    const service = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(5)), connections: [{ key: REVERSE_KEY, name: 'erp-1' }] });
    const rs = await listen(express().use(service));
    const router = createDashboardRouter({ reverse: [createReverseHttpSource(rs.url)], token: TOKEN });
    const ds = await listen(express().use(router));
    try {
      let res = await postJson(`${ds.url}/actions/reverse-pull`, { service: 0, connection: 'erp-1', entity: 'both' });
      expect(res.status).toBe(200);
      res = await postJson(`${ds.url}/actions/reverse-push`, { service: 0, connection: 'erp-1' });
      expect(await res.json()).toMatchObject({ ok: true, position: 2 });
      expect((await service.service.status('erp-1')).queue).toMatchObject([{ kind: 'pull', entity: 'products' }, { kind: 'pull', entity: 'orders' }, { kind: 'push' }]);
      res = await postJson(`${ds.url}/actions/reverse-push`, { service: 0, connection: 'nope' });
      expect(res.status).toBe(502);
      expect(((await res.json()) as { error: string }).error).toMatch(/answered HTTP 404/);
      const page = await (await fetch(`${ds.url}/reverse/0/erp-1`, { headers: bearer })).text();
      expect(page).toContain('pull products, pull orders, push');
      expect(page).not.toContain(REVERSE_KEY);
    } finally {
      await ds.close();
      await rs.close();
    }
  });

  test('ended transactions show their entities, when they ended and how (finished, cancelled), as the service reports them', async () => {
    // The service's status view names them `entities`, `endedAt` and `outcome` (docs/reverse-connection.md);
    // the page read `entity` and `finishedAt`, so the end column was always empty and a cancelled or
    // expired transaction looked like a finished one.
    const service = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(3)), connections: [{ key: REVERSE_KEY, name: 'erp-3' }] });
    const rs = await listen(express().use(service));
    const ds = await listen(express().use(createDashboardRouter({ reverse: [createReverseHttpSource(rs.url)] })));
    try {
      await service.service.enqueue('erp-3', { kind: 'pull', entity: 'products' });
      const init = await fetch(`${rs.url}/api/adapters/custom/reverse/connection/${REVERSE_KEY}/pull/initialize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(init.status).toBe(200);
      await service.service.cancel('erp-3');
      const [ended] = (await service.service.status('erp-3')).transactions;
      expect(ended).toMatchObject({ kind: 'pull', entities: ['products'], outcome: 'cancelled' });
      const page = await (await fetch(`${ds.url}/reverse/0/erp-3`)).text();
      const row = /<table class="transactions">.*?<tbody>(.*?)<\/tbody>/s.exec(page)?.[1] ?? '';
      expect(row).toContain('pull products');
      expect(row).toContain('cancelled');
      expect(row.match(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/g)).toHaveLength(2); // started and ended
    } finally {
      await ds.close();
      await rs.close();
    }
  });

  test('a service that is down is shown in words; the pulled-id → store-id map is shown when reported', async () => {
    // A stand-in service answering the status view with an id map (the reverse service adds one).
    const view = { connection: 'erp-2', connectionstatus: 'waiting', mode: 'idle', current: null, queue: [], products: { delivered: 1, succeeded: 1 }, orders: { delivered: 2, succeeded: 1, failed: 1 }, failures: [{ transaction: 3, entity: 'orders', id: 'tmp-9', source: 'daemon', error: 'business partner unknown', reasons: [{ message: 'no partner C-77', code: 'BP' }], at: 0 }], transactions: [], idMap: { orders: { 'tmp-1': '100234' } } };
    const stub = await listen((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url === '/connections' ? { connections: [view] } : { error: 'not found' }));
    });
    const closed = await listen((_req, res) => res.end());
    await closed.close();
    const router = createDashboardRouter({ reverse: [createReverseHttpSource(stub.url), createReverseHttpSource(closed.url)] });
    const ds = await listen(express().use(router));
    try {
      const overview = await (await fetch(`${ds.url}/`)).text();
      expect(overview).toContain('business partner unknown — no partner C-77');
      expect(overview).toMatch(new RegExp(`reverse service ${closed.url.replace(/[.]/g, '\\.')}: cannot be reached \\(ECONNREFUSED\\)`));
      const page = await (await fetch(`${ds.url}/reverse/0/erp-2`)).text();
      expect(page).toMatch(/<td>orders<\/td><td><code>tmp-1<\/code><\/td><td><code>100234<\/code><\/td>/);
    } finally {
      await ds.close();
      await stub.close();
    }
    expect(readReverseView({ name: 'x', status: { connectionstatus: 'finished' } })).toMatchObject({ name: 'x', connectionstatus: 'finished', queue: [], failures: [] });
    expect(readReverseView({ connectionstatus: 'waiting' })).toBeUndefined();
  });
});
