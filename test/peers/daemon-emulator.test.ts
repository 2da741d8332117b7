/**
 * The emulated deployed daemons (daemon-emulator.ts) against the real CLI,
 * `storebridge reverse-service --dialect click2sync`: a full pull of products and orders, a full
 * push, an incremental second push; the SAI flavor's Latin-1 bodies and numeric cursors; and the
 * service killed (SIGKILL) and restarted mid-pull and mid-push on its SQLite state. Nothing may be
 * lost or doubled, no call may loop, and no runtime exception (the daemons' tight loop) may occur.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAdapter } from '../../lib/cli/adapter-spec';
import { guardAdapter } from '../../lib/adapter-guard';
import { demoOrderCount } from '../../lib/demo';
import { DaemonEmulator } from './daemon-emulator';
import { ensureBuilt, startCliService, type CliService } from './peer-cli';

/** A key the way the deployed daemons make one: 256 characters of [A-Z0-9]. */
const KEY = Array.from({ length: 256 }, (_, i) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[(i * 7 + 3) % 36]).join('');

let dir: string;
const running: CliService[] = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'storebridge-peers-'));
}, 180_000);
afterEach(async () => {
  for (const s of running.splice(0)) await s.kill();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function service(args: string[]): Promise<CliService> {
  const s = await startCliService(args);
  running.push(s);
  return s;
}

/** These tests are of the cycle and its restarts, as fast as loopback goes: the pace has tests of its own (daemon-identity.test.ts). */
const FAST = ['--max-calls-per-second', '0'];

const idle = (svc: () => CliService) => async () => (await svc().status()).ping === 'idle';

/** Calls per pull of `n` items the deployed way: hasmore, next, ack, readyfornext (one poll: the service is ready at once). */
const PULL_CALLS_PER_ITEM = 4;

test('B1: a full pull (products refused as protected, orders inserted under new ids), a full push, an incremental push', async () => {
  const db = join(dir, 'b1.db');
  const svc = await service(['--port', '0', '--connection', KEY, '--demo', '300', '--dialect', 'click2sync', '--adapter', `sqlite:${db}`, ...FAST]);
  const orders = demoOrderCount(300);
  // The ERP's item codes are not the demo's SKUs here: item codes are not checked (daemon-identity.test.ts checks them).
  const emulator = new DaemonEmulator({ host: svc.url, key: KEY, flavor: 'b1', resendInitialize: true, checkItemCodes: false });
  // The ERP's own catalog: 20 products (some written in one millisecond: composite cursors tell them apart) and 5 orders.
  for (let i = 1; i <= 20; i++) emulator.erp.putProduct(`ERP-${i}`, { title: `Producto ${i}`, quantity: i, price: 10 + i / 4 }, i % 4 !== 1);
  for (let i = 1; i <= 5; i++) emulator.erp.putOrder({ sku: `ERP-${i}`, quantity: i, unitPrice: 12.5, buyerId: 9000 + i });

  const started = Date.now();
  const passes = await emulator.runUntil(idle(() => svc));
  const elapsed = Date.now() - started;
  const status = await svc.status();
  // The pull: every product handed out once and answered (failed: the ERP protects products), every order inserted once.
  expect(status.products).toMatchObject({ delivered: 300, redelivered: 0, succeeded: 0, failed: 300, skipped: 0 });
  expect(status.orders).toMatchObject({ delivered: orders, redelivered: 0, succeeded: orders, failed: 0, mapped: orders });
  expect([...emulator.erp.inserts.values()].every((n) => n === 1)).toBe(true);
  expect(emulator.erp.inserts.size).toBe(orders);
  // The pulled id -> store id map: each order's ERP document number.
  expect(status.idMap).toHaveLength(orders);
  expect(new Set(status.idMap.map((m: { storeId: string }) => m.storeId)).size).toBe(orders);
  expect(status.failures.filter((f: { source: string }) => f.source === 'daemon')).toHaveLength(300);
  // The push: the ERP's whole catalog, once.
  expect(status.products.received).toBe(20);
  expect(status.orders.received).toBe(5 + orders);
  expect(status.products.refused + status.orders.refused).toBe(0);
  expect(status.cursoroffset.products).toMatch(/^\d+ - \d+$/);
  expect(status.transactions.map((t: { kind: string; outcome: string }) => `${t.kind} ${t.outcome}`)).toEqual(['pull finished', 'pull finished', 'push finished']);
  expect(emulator.runtimeExceptions).toEqual([]);
  expect(emulator.unreachable).toBe(0);
  // No call loops: the pull costs its four calls per item and a bounded overhead per pass.
  const pullCalls = emulator.calls.filter((c) => c.path.includes('/pull/')).length;
  expect(pullCalls).toBeLessThanOrEqual((300 + orders) * PULL_CALLS_PER_ITEM + 40);
  const firstRunCalls = emulator.calls.length;

  // "Fetch updates" again: only what changed since the cursor is sent.
  emulator.erp.putProduct('ERP-3', { title: 'Producto 3 (nuevo precio)', quantity: 3, price: 99.5 });
  emulator.erp.putProduct('ERP-21', { title: 'Producto 21', quantity: 21, price: 5 }, true);
  emulator.erp.putOrder({ sku: 'ERP-2', quantity: 1, unitPrice: 7.25, buyerId: 9100 });
  expect(await svc.queue({ kind: 'push' })).toEqual({ ok: true, position: 0 });
  await emulator.runUntil(idle(() => svc));
  const again = await svc.status();
  expect(emulator.pushes.at(-1)).toEqual({ verb: 'push', products: [2], orders: [1] });
  expect(again.products.received - status.products.received).toBe(2);
  expect(again.orders.received - status.orders.received).toBe(1);
  expect(emulator.runtimeExceptions).toEqual([]);
  console.log(
    `B1 emulator: ${passes} passes, ${firstRunCalls} calls for a pull of ${300 + orders} items and a push of ${25 + orders} in ${elapsed} ms; ` +
      `the incremental push: ${emulator.calls.length - firstRunCalls} calls for 3 items`,
  );
}, 120_000);

test('SAI: Latin-1 bodies without a charset, numeric last_updated and a Long cursoroffset; a sample push', async () => {
  const db = join(dir, 'sai.db');
  const svc = await service(['--port', '0', '--connection', KEY, '--demo', '8', '--dialect', 'click2sync', '--adapter', `sqlite:${db}`, ...FAST]);
  const emulator = new DaemonEmulator({ host: svc.url, key: KEY, flavor: 'sai' });
  emulator.erp.putProduct('NINO-2', { title: 'Niño', quantity: 1.5, price: 3 }); // a quantity the store cannot keep: refused alone
  emulator.erp.putProduct('CAFE-1', { title: 'Café de Córdoba, año 2019', quantity: 4, price: 120 });
  emulator.erp.putOrder({ sku: 'CAFE-1', quantity: 2, unitPrice: 120, buyerId: 77 });
  await emulator.runUntil(idle(() => svc));
  // SAI casts (long) unitPrice: the demo's two orders, priced in cents, throw at each of their 5
  // deliveries (the daemon's own limit), then the service gives them up (1004) and the pull goes on.
  expect(emulator.runtimeExceptions.map((e) => e.message)).toEqual(Array(10).fill('orderItem.unitPrice: Double cannot be cast to Long'));
  expect(emulator.calls.some((c) => c.body?.includes('Caf\xe9'))).toBe(true); // sent as Latin-1 bytes
  const status = await svc.status();
  expect(status.orders).toMatchObject({ delivered: 2, redelivered: 8, failed: 2, unacknowledged: 2, succeeded: 0 });
  expect(status.failures.filter((f: { source: string }) => f.source === 'service').map((f: { error: string; reasons: unknown[] }) => [f.error, f.reasons])).toEqual(
    Array(2).fill(['not acknowledged after 5 deliveries', [{ message: 'not acknowledged after 5 deliveries', code: 1004 }]]),
  );
  expect(status.products).toMatchObject({ received: 1, refused: 1 });
  expect(status.failures.find((f: { source: string }) => f.source === 'push')).toMatchObject({ id: 'NINO-2', error: expect.stringMatching(/quantity/) });
  expect(typeof status.cursoroffset.products).toBe('number');
  // A sample push: one product and one order from the cursor (as SAI reads them), never stored.
  emulator.erp.putProduct('SAMPLE-3', { title: 'Muestra', quantity: 1, price: 1 });
  emulator.erp.putOrder({ sku: 'SAMPLE-3', quantity: 1, unitPrice: 1, buyerId: 78 });
  await svc.queue({ kind: 'pingsample' });
  await emulator.runUntil(idle(() => svc));
  expect(emulator.runtimeExceptions).toHaveLength(10); // none more
  expect(emulator.pushes.at(-1)).toEqual({ verb: 'pingsample', products: [1], orders: [1] });
  const sampled = await svc.status();
  expect(sampled.lastSample.products).toHaveLength(1);
  expect(sampled.products.sampled + sampled.orders.sampled).toBe(2);
  await svc.stop();
  running.length = 0;
  const store = guardAdapter(await openAdapter(`sqlite:${db}`));
  try {
    expect((await store.entity('products').get('CAFE-1', { signal: AbortSignal.timeout(5000) }))?.title).toBe('Café de Córdoba, año 2019');
    expect(await store.entity('products').get('NINO-2', { signal: AbortSignal.timeout(5000) })).toBeUndefined();
  } finally {
    await store.close();
  }
}, 60_000);

test('the service killed (SIGKILL) and restarted mid-pull and mid-push resumes from its SQLite state: nothing lost or doubled', async () => {
  const db = join(dir, 'restart.db');
  const args = (port: number) => ['--port', String(port), '--connection', KEY, '--demo', '60', '--dialect', 'click2sync', '--adapter', `sqlite:${db}`, ...FAST];
  let svc = await service(args(0));
  const port = svc.port;
  const orders = demoOrderCount(60);
  const restartAt = new Set(['pull/orders ack 5', 'pull/orders readyfornext 9', 'push/products page 2', 'pull/products next 30']);
  const seen = new Map<string, number>();
  const restarts: string[] = [];
  const emulator = new DaemonEmulator({
    host: svc.url,
    key: KEY,
    flavor: 'b1',
    checkItemCodes: false,
    async beforeCall(method, path) {
      const m = /\/(pull|push)\/(products|orders)(\/next|\/readyfornext|\/[^/]+\/succeded|\/[^/]+\/failed)?$/.exec(path);
      if (!m || (m[1] === 'push') !== (m[3] === undefined)) return;
      const what = m[1] === 'push' ? 'page' : m[3] === '/next' ? 'next' : m[3] === '/readyfornext' ? 'readyfornext' : 'ack';
      const label = `${m[1]}/${m[2]} ${what}`;
      const n = (seen.get(label) ?? 0) + 1;
      seen.set(label, n);
      if (!restartAt.has(`${label} ${n}`)) return;
      // Killed between two calls: whatever the service said last is all it knows.
      restarts.push(`${label} ${n}`);
      await svc.kill();
      running.length = 0;
      svc = await service(args(port));
    },
  });
  for (let i = 1; i <= 130; i++) emulator.erp.putProduct(`ERP-${i}`, { title: `P${i}`, quantity: i, price: 2 }, i % 3 !== 1);
  for (let i = 1; i <= 4; i++) emulator.erp.putOrder({ sku: 'ERP-1', quantity: 1, unitPrice: 2, buyerId: 1 });
  await emulator.runUntil(idle(() => svc));
  expect(restarts).toEqual(['pull/products next 30', 'pull/orders ack 5', 'pull/orders readyfornext 9', 'push/products page 2']);
  const status = await svc.status();
  expect(status.products).toMatchObject({ delivered: 60, failed: 60, succeeded: 0 });
  expect(status.orders).toMatchObject({ delivered: orders, succeeded: orders, failed: 0, mapped: orders });
  expect([...emulator.erp.inserts.values()]).toEqual(Array(orders).fill(1));
  expect(status.products.received).toBe(130);
  expect(status.orders.received).toBe(4 + orders);
  expect(status.transactions.map((t: { outcome: string }) => t.outcome)).toEqual(['finished', 'finished', 'finished']);
  expect(emulator.runtimeExceptions).toEqual([]);
}, 120_000);

test('an acknowledgement the service saved but never answered (killed mid-call): the deployed daemon, which reads no readyfornext for it, is not stuck', async () => {
  const db = join(dir, 'lost-ack.db');
  const args = (port: number) => ['--port', String(port), '--connection', KEY, '--demo', '20', '--dialect', 'click2sync', '--adapter', `sqlite:${db}`, ...FAST];
  let svc = await service(args(0));
  const port = svc.port;
  const orders = demoOrderCount(20);
  const seen = new Map<string, number>();
  const lost: string[] = [];
  let down = false;
  /** After the pass that lost the reply, the service is back on the same database. */
  const back = async () => {
    if (!down) return;
    svc = await service(args(port));
    down = false;
  };
  const emulator = new DaemonEmulator({
    host: svc.url,
    key: KEY,
    flavor: 'b1',
    checkItemCodes: false,
    async beforeCall(method, path, body) {
      if (down) return back();
      const m = /\/pull\/(products|orders)\/[^/]+\/(succeded|failed)$/.exec(path);
      if (!m) return;
      const n = (seen.get(m[1]) ?? 0) + 1;
      seen.set(m[1], n);
      if (!((m[1] === 'products' && n === 5) || (m[1] === 'orders' && n === 3))) return;
      // The service receives the acknowledgement and saves it; then it dies before the daemon reads the reply.
      const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body });
      expect(await res.json()).toEqual({ ok: true });
      lost.push(`${m[1]} ack ${n}`);
      await svc.kill();
      running.length = 0;
      down = true;
    },
  });
  await emulator.runUntil(async () => (await back(), (await svc.status()).ping === 'idle'), 60);
  expect(lost).toEqual(['products ack 5', 'orders ack 3']);
  expect(emulator.unreachable).toBe(2);
  const status = await svc.status();
  expect(status.products).toMatchObject({ delivered: 20, redelivered: 0, failed: 20, succeeded: 0 });
  expect(status.orders).toMatchObject({ delivered: orders, redelivered: 0, succeeded: orders, failed: 0, mapped: orders });
  expect([...emulator.erp.inserts.values()]).toEqual(Array(orders).fill(1));
  expect(status.transactions.map((t: { kind: string; outcome: string }) => `${t.kind} ${t.outcome}`)).toEqual(['pull finished', 'pull finished', 'push finished']);
  expect(emulator.runtimeExceptions).toEqual([]);
  // No loop: the pull costs its four calls per item and a bounded overhead per pass.
  expect(emulator.calls.filter((c) => c.path.includes('/pull/')).length).toBeLessThanOrEqual((20 + orders) * PULL_CALLS_PER_ITEM + 40);
}, 60_000);
