/**
 * The sync service's health endpoint over a real HTTP server: last run per connection from a real
 * connection (in memory) and from Redis (shared by workers), stale and failed connections, errors.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createSyncConnection, MemorySyncHealth, RedisSyncHealth, syncHealthHandler, type SyncHealthSource } from '../../lib/sync';
import { startFakeStore, type FakeStore } from '../client/fake-store';
import { describeRedis, purgePrefix, REDIS_URL, uniqueRedisPrefix } from './bullmq-helpers';

const KEY = 'health-test-key-31ab9c';

async function serve(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

let store: FakeStore;
beforeAll(async () => {
  const { products, orders } = demoCatalog(16);
  store = await startFakeStore({ products, orders, key: KEY, pageSize: 10 });
});
afterAll(() => store.close());

test('last run per connection: time, outcome, counts; a failed one makes the service degraded, and says why without the key', async () => {
  const health = new MemorySyncHealth();
  let t = Date.parse('2030-01-01T00:00:00Z');
  const good = createSyncConnection({ id: 'good', client: { baseUrl: store.url, svcKey: KEY }, sink: createMemoryAdapter(), observers: [health] });
  const bad = createSyncConnection({ id: 'bad', client: { baseUrl: store.url, svcKey: 'a-wrong-key-77f1e0', retry: 0 }, sink: createMemoryAdapter(), observers: [health] });
  await good.run();
  const server = await serve(syncHealthHandler(health, { staleAfterMs: 60_000, now: () => t }));
  try {
    t = Date.now();
    let res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    let body = (await res.json()) as any;
    expect(body).toMatchObject({ status: 'ok', counts: { ok: 1, store_issues: 0, failed: 0, stale: 0 } });
    expect(body.connections).toEqual([
      expect.objectContaining({ connection: 'good', outcome: 'ok', jobid: 1, resumed: false, stale: false, products: { count: 16, seen: 16, written: 16, invalid: 0, duplicates: 0, normalised: 0, fetchedById: 0 }, orders: expect.objectContaining({ count: 4 }) }),
    ]);
    expect(Date.parse(body.connections[0].at)).toBeGreaterThanOrEqual(Date.parse(body.connections[0].startedAt));
    expect(body.connections[0].lastOkAt).toBe(body.connections[0].at);

    await bad.run();
    res = await fetch(`${server.url}/health`);
    body = await res.json();
    expect(res.status).toBe(200);
    expect(body.status).toBe('degraded');
    expect(body.connections.map((c: { connection: string }) => c.connection)).toEqual(['bad', 'good']);
    expect(body.connections[0]).toMatchObject({ outcome: 'failed', error: { code: 'STORE_AUTH' } });
    expect(body.connections[0].lastOkAt).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('a-wrong-key-77f1e0');

    // One connection.
    res = await fetch(`${server.url}/health?connection=good`);
    expect(await res.json()).toMatchObject({ connection: 'good', outcome: 'ok' });
    res = await fetch(`${server.url}/health?connection=nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'no run recorded for this connection' });

    // Stale: no run for longer than staleAfterMs.
    t = Date.now() + 120_000;
    body = await (await fetch(`${server.url}/health?x=1`)).json();
    expect(body.counts.stale).toBe(2);
    expect(body.connections.every((c: { stale: boolean }) => c.stale)).toBe(true);

    res = await fetch(`${server.url}/health`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(await res.json()).toEqual({ error: 'use GET to read the sync health' });
  } finally {
    await server.close();
  }
});

test('a health state that cannot be read answers 503 {error} without internals', async () => {
  const broken: SyncHealthSource = {
    lastRuns: () => Promise.reject(new Error('ECONNREFUSED 10.0.0.7:6379 secret-internal')),
    lastRun: () => Promise.reject(new Error('ECONNREFUSED')),
  };
  const server = await serve(syncHealthHandler(broken));
  try {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'the sync health state cannot be read' });
  } finally {
    await server.close();
  }
  expect(() => syncHealthHandler({} as never)).toThrow(/source/);
  expect(() => syncHealthHandler(new MemorySyncHealth(), { staleAfterMs: -1 })).toThrow(/staleAfterMs/);
});

describeRedis('health shared through Redis', () => {
  test('runs recorded by one process are served by another', async () => {
    const prefix = uniqueRedisPrefix();
    const writer = new Redis(REDIS_URL);
    const reader = new Redis(REDIS_URL);
    try {
      const conn = createSyncConnection({ id: 'shop-r', client: { baseUrl: store.url, svcKey: KEY }, sink: createMemoryAdapter(), observers: [new RedisSyncHealth(writer, { prefix })] });
      await conn.run();
      await conn.run();
      const server = await serve(syncHealthHandler(new RedisSyncHealth(reader, { prefix })));
      try {
        const body = (await (await fetch(`${server.url}/health`)).json()) as any;
        expect(body.status).toBe('ok');
        expect(body.connections).toEqual([expect.objectContaining({ connection: 'shop-r', outcome: 'ok', jobid: 2, products: expect.objectContaining({ count: 16, written: 0 }) })]);
      } finally {
        await server.close();
      }
    } finally {
      await purgePrefix(writer, prefix);
      await Promise.all([writer.quit(), reader.quit()]);
    }
  });
});
