/**
 * The real CLI end to end: `storebridge reverse-service --demo 300` and `storebridge daemon --once
 * --json` into a SQLite file, as two processes talking over loopback.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { guardAdapter } from '../../lib/adapter-guard';
import { openAdapter } from '../../lib/cli/adapter-spec';
import { CONVERTERS } from '../../lib/contract';
import { demoCatalog, demoOrderCount } from '../../lib/demo';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'storebridge.js');
const KEY = 'cli-connection-key-42';
const run = promisify(execFile);

let dir: string;
let service: ChildProcess | undefined;

/** Newest modification time of the sources this test runs (ms), 0 when one is missing. */
function newest(paths: string[]): number {
  return Math.max(...paths.map((p) => (existsSync(p) ? statSync(p).mtimeMs : Number.POSITIVE_INFINITY)));
}

beforeAll(async () => {
  // `npm test` builds first; when this file is run alone, build only if dist is older than the
  // sources (a rebuild rewrites dist under other suites that spawn the CLI).
  const sources = [
    ...readdirSync(join(ROOT, 'lib', 'reverse'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(ROOT, 'lib', 'reverse', f)),
    join(ROOT, 'lib', 'cli', 'commands', 'daemon.ts'),
    join(ROOT, 'lib', 'cli', 'commands', 'reverse-service.ts'),
    join(ROOT, 'lib', 'host', 'store-server.ts'),
  ];
  const built = join(ROOT, 'dist', 'lib', 'cli', 'commands', 'daemon.js');
  if (!existsSync(built) || statSync(built).mtimeMs < newest(sources)) {
    await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT }).catch(() => undefined); // tsc emits even when others' files have type errors
  }
  dir = mkdtempSync(join(tmpdir(), 'storebridge-reverse-'));
}, 120_000);

// A failed test must not leave its service running (jest would wait for it).
afterEach(() => {
  service?.kill('SIGTERM');
  service = undefined;
});

afterAll(() => {
  service?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

/** The kit's own daemon at full speed: without the pace (20 calls a second would hold a pull of 375 items to 75 s; docs/reverse-connection.md "The pace"). */
function startService(args: string[]): Promise<{ url: string; stderr: () => string }> {
  service = spawn(process.execPath, [BIN, 'reverse-service', ...args, '--max-calls-per-second', '0'], { cwd: ROOT });
  let out = '';
  let err = '';
  service.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    service!.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
      if (m) resolve({ url: m[1], stderr: () => err });
    });
    service!.once('exit', (code) => reject(new Error(`reverse-service exited with ${code}: ${err}`)));
  });
}

test('reverse-service --demo 300 and daemon --once --json run to completion into SQLite', async () => {
  const { url, stderr } = await startService(['--port', '0', '--connection', KEY, '--demo', '300']);
  const db = join(dir, 'store.db');
  const orders = demoOrderCount(300);
  const daemon = await run(process.execPath, [BIN, 'daemon', '--service', url, '--connection', KEY, '--adapter', `sqlite:${db}`, '--once', '--json'], { cwd: ROOT });
  const lines = daemon.stdout.trim().split('\n');
  expect(JSON.parse(lines[lines.length - 1])).toEqual({ ok: true, pulled: { products: 300, orders }, failed: 0, failedByEntity: { products: 0, orders: 0 }, pushed: { products: 300, orders } });

  // The service's status view: every item succeeded, the push received.
  const status = (await (await fetch(`${url}/connections/${KEY}/status`)).json()) as Record<string, any>;
  expect(status).toMatchObject({
    connectionstatus: 'finished',
    mode: 'idle',
    products: { delivered: 300, succeeded: 300, failed: 0, received: 300 },
    orders: { delivered: orders, succeeded: orders, failed: 0, received: orders },
    failures: [],
  });

  // The store holds the 300 products and their orders, as the service handed them out.
  const store = guardAdapter(await openAdapter(`sqlite:${db}`));
  try {
    const signal = AbortSignal.timeout(10_000);
    expect(await store.products.count({ signal })).toBe(300);
    expect(await store.orders.count({ signal })).toBe(orders);
    const catalog = demoCatalog(300);
    for (const i of [0, 137, 299]) {
      const p = catalog.products[i];
      expect(CONVERTERS.products.toReverse((await store.products.get(p._id, { signal }))!)).toEqual(CONVERTERS.products.toReverse(p));
    }
    const o = catalog.orders[orders - 1];
    expect(CONVERTERS.orders.toReverse((await store.orders.get(o._id, { signal }))!)).toEqual(CONVERTERS.orders.toReverse(o));
  } finally {
    await store.close();
  }

  // The key is never printed by either process.
  expect(daemon.stdout + daemon.stderr + stderr()).not.toContain(KEY);

  // A clean shutdown on SIGTERM.
  const exited = new Promise<number | null>((resolve) => service!.once('exit', resolve));
  service!.kill('SIGTERM');
  expect(await exited).toBe(0);
  service = undefined;
}, 120_000);

test('the daemon without --once polls until asked, works, and stops cleanly on SIGTERM', async () => {
  const { url } = await startService(['--port', '0', '--connection', KEY]);
  const daemon = spawn(process.execPath, [BIN, 'daemon', '--service', url, '--connection', KEY, '--adapter', 'memory', '--poll-ms', '20'], { cwd: ROOT });
  let out = '';
  daemon.stdout.on('data', (d) => (out += d));
  const queued = await fetch(`${url}/connections/${KEY}/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind":"pingsample"}' });
  expect(await queued.json()).toEqual({ ok: true, position: 0 });
  // Wait (no time assertion) until the daemon has run the sample push.
  for (;;) {
    const status = (await (await fetch(`${url}/connections/${KEY}/status`)).json()) as { transactions: Array<{ kind: string }> };
    if (status.transactions.length > 0) {
      expect(status.transactions.map((t) => t.kind)).toEqual(['pingsample']);
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const exited = new Promise<number | null>((resolve) => daemon.once('exit', resolve));
  daemon.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ ok: true, pulled: { products: 0, orders: 0 }, failed: 0, failedByEntity: { products: 0, orders: 0 }, pushed: { products: 0, orders: 0 } });
  service!.kill('SIGTERM');
  service = undefined;
}, 60_000);

/** Sends raw bytes on a fresh connection; resolves with what came back and when the server closed it. */
function rawExchange(url: string, bytes: string, waitMs: number): Promise<{ text: string; closedAfterMs: number }> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (d) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
  });
}

// Issue 14, "sane server limits": the reverse service is a CLI server too. It ran on Node's
// defaults (stalled headers held ~83 s, a stalled body ~324 s, measured; bare-text 400/408).
test('reverse-service sets the server limits: a NUL in a header is a JSON 400; stalled headers get a JSON 408 within the 20 s headersTimeout', async () => {
  const { url } = await startService(['--port', '0', '--connection', KEY]);
  const nul = await rawExchange(url, `GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n`, 5_000);
  expect(nul.text).toMatch(/^HTTP\/1\.1 400 /);
  expect(nul.text).toMatch(/content-type: application\/json/);
  const stalled = await rawExchange(url, `GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n`, 40_000);
  expect(stalled.text).toMatch(/^HTTP\/1\.1 408 /);
  expect(stalled.text).toContain('{"error":"the request did not arrive in time"}');
  expect(stalled.closedAfterMs).toBeLessThan(30_000);
}, 60_000);

test('usage errors exit 2 and name the missing option', async () => {
  const err = await run(process.execPath, [BIN, 'daemon', '--service', 'http://127.0.0.1:9', '--adapter', 'memory'], { cwd: ROOT, env: { ...process.env, STOREBRIDGE_CONNECTION: '' } }).catch((e) => e);
  expect(err.code).toBe(2);
  expect(err.stderr).toMatch(/--connection KEY/);
  const bad = await run(process.execPath, [BIN, 'reverse-service', '--port', 'x', '--connection', 'k'], { cwd: ROOT }).catch((e) => e);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--port/);
});

test('daemon --once --json with an unknown connection key: exit 1, ok:false, and stderr says why (the key never printed)', async () => {
  const { url } = await startService(['--port', '0', '--connection', KEY]);
  const wrong = `${KEY}-not-this-one`;
  const err = await run(process.execPath, [BIN, 'daemon', '--service', url, '--connection', wrong, '--adapter', 'memory', '--once', '--json'], { cwd: ROOT }).catch((e) => e);
  expect(err.code).toBe(1);
  expect(JSON.parse(err.stdout.trim().split('\n').pop()!)).toMatchObject({ ok: false });
  // One clear reason, not a list of retries: a 404 means the service does not know the key.
  expect(err.stderr).toMatch(/HTTP 404/);
  expect(err.stderr).toMatch(/does not know this connection key/);
  expect(err.stderr.trim().split('\n')).toHaveLength(1);
  expect(err.stdout + err.stderr).not.toContain(KEY);
  service!.kill('SIGTERM');
  service = undefined;
}, 60_000);

test('daemon --once interrupted (SIGINT) mid-pull: exit 1 and ok:false; the next run pulls the rest, nothing lost', async () => {
  const { url } = await startService(['--port', '0', '--connection', KEY, '--demo', '300']);
  const db = join(dir, 'interrupted.db');
  const orders = demoOrderCount(300);
  const args = [BIN, 'daemon', '--service', url, '--connection', KEY, '--adapter', `sqlite:${db}`, '--once', '--json'];
  const daemon = spawn(process.execPath, args, { cwd: ROOT });
  let out = '';
  let err = '';
  daemon.stdout.on('data', (d) => (out += d));
  daemon.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => daemon.once('exit', resolve));
  // Interrupt once some, not all, products are stored.
  for (;;) {
    const status = (await (await fetch(`${url}/connections/${KEY}/status`)).json()) as { products: { succeeded: number } };
    if (status.products.succeeded >= 5) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  daemon.kill('SIGINT');
  expect(await exited).toBe(1);
  const first = JSON.parse(out.trim().split('\n').pop()!) as { ok: boolean; pulled: { products: number } };
  expect(first.ok).toBe(false);
  expect(first.pulled.products).toBeGreaterThanOrEqual(5);
  expect(first.pulled.products).toBeLessThan(300);
  expect(err).toMatch(/SIGINT/);

  const again = await run(process.execPath, args, { cwd: ROOT });
  expect(JSON.parse(again.stdout.trim().split('\n').pop()!)).toEqual({ ok: true, pulled: { products: 300 - first.pulled.products, orders }, failed: 0, failedByEntity: { products: 0, orders: 0 }, pushed: { products: 300, orders } });
  const store = guardAdapter(await openAdapter(`sqlite:${db}`));
  try {
    const signal = AbortSignal.timeout(10_000);
    expect(await store.products.count({ signal })).toBe(300);
    expect(await store.orders.count({ signal })).toBe(orders);
  } finally {
    await store.close();
  }
  service!.kill('SIGTERM');
  service = undefined;
}, 120_000);
