/**
 * The real CLI end to end (run `npx tsc -p tsconfig.build.json` first): `serve --demo 5000`
 * spawned, then `sync … --json` and `check … --json` against it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startFakeStore } from '../client/fake-store';
import { BIN, runCli } from './cli-process';
import { demoCatalog } from '../../lib/demo';
import type { Product } from '../../lib/contract/webhook';

const KEY = 'e2e-Key-7c1f93d0b2';

const lastLine = (s: string) => s.trim().split('\n').pop()!;

let serve: ChildProcess;
let url: string;
let serveOutput = '';

beforeAll(async () => {
  serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--key', KEY, '--demo', '5000'], { stdio: ['ignore', 'pipe', 'pipe'] });
  url = await new Promise<string>((resolve, reject) => {
    serve.stdout!.on('data', (c: Buffer) => {
      serveOutput += c;
      const m = /listening on (http:\/\/\S+)/.exec(serveOutput);
      if (m) resolve(m[1]);
    });
    serve.stderr!.on('data', (c: Buffer) => (serveOutput += c));
    serve.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${serveOutput}`)));
  });
}, 60_000);

afterAll(async () => {
  const exited = new Promise((r) => serve.once('exit', r));
  serve.kill('SIGTERM');
  await exited;
  expect(serveOutput).not.toContain(KEY);
});

test('sync --json pulls all 5,000 products and their 1,250 orders', async () => {
  const r = await runCli(['sync', url, '--key', KEY, '--json']);
  expect(r.code).toBe(0);
  const report = JSON.parse(lastLine(r.stdout));
  // The original members first, in their order (docs/sync.md); then the added ones.
  expect(Object.keys(report)).toEqual(['ok', 'products', 'orders', 'requests', 'retries', 'durationMs', 'normalisations', 'resumed']);
  expect(Object.keys(report.products).slice(0, 3)).toEqual(['count', 'duplicates', 'invalid']);
  expect(report).toEqual({
    ok: true,
    products: { count: 5000, duplicates: 0, invalid: 0, normalised: 0, fetchedById: 0 },
    orders: { count: 1250, duplicates: 0, invalid: 0, normalised: 0, fetchedById: 0 },
    // 100 per page: 50 product pages and 13 order pages.
    requests: 63,
    retries: 0,
    durationMs: expect.any(Number),
    normalisations: {},
    resumed: false,
  });
  expect(r.stderr).not.toMatch(/warning/);
  expect(r.stdout + r.stderr).not.toContain(KEY);
}, 60_000);

test('sync takes the key from STOREBRIDGE_KEY and prints a human summary', async () => {
  const r = await runCli(['sync', url, '--page-size', '0'], { STOREBRIDGE_KEY: KEY });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^products 5000 in the sink/m);
  expect(r.stdout).toMatch(/^orders\s+1250 in the sink/m);
  expect(r.stdout + r.stderr).not.toContain(KEY);
}, 60_000);

test('check --json passes every must check on the served store, writes included; each check carries its level', async () => {
  const r = await runCli(['check', url, '--key', KEY, '--json', '--writes']);
  const report = JSON.parse(lastLine(r.stdout)) as { ok: boolean; checks: Array<{ name: string; ok: boolean; detail: string; level: string }> };
  expect(report.checks.filter((c) => !c.ok && c.level === 'must')).toEqual([]);
  expect(report.checks.every((c) => Object.keys(c).join() === 'name,ok,detail,level')).toBe(true);
  expect(report.ok).toBe(true);
  expect(r.code).toBe(0);
  expect(report.checks.map((c) => c.name)).toContain('orders.write-round-trip');
  expect(r.stdout + r.stderr).not.toContain(KEY);
}, 60_000);

test('a wrong key: sync exits 1 with ok:false; check exits 1 naming the failures', async () => {
  const s = await runCli(['sync', url, '--key', 'wrong-key-123456', '--json']);
  expect(s.code).toBe(1);
  expect(JSON.parse(lastLine(s.stdout)).ok).toBe(false);
  expect(s.stderr).toMatch(/the store refused the key \(HTTP 401\)/);
  const c = await runCli(['check', url, '--key', 'wrong-key-123456']);
  expect(c.code).toBe(1);
  expect(c.stdout).toMatch(/^FAIL  products\.paging-asc/m);
  expect(c.stdout).toMatch(/^44 checks, 18 failed$/m);
  expect(c.stdout).toMatch(/refused the key \(HTTP 401\) on most requests/);
});

test('check against a store that is not there: every check fails, and the summary says the store could not be reached', async () => {
  const c = await runCli(['check', 'http://127.0.0.1:1', '--key', KEY]);
  expect(c.code).toBe(1);
  expect(c.stdout).toMatch(/^44 checks, 22 failed$/m);
  expect(c.stdout).toMatch(/^22 warnings \(should\); --strict makes them fail$/m);
  expect(c.stdout).toMatch(/The store could not be reached/);
  expect(c.stdout + c.stderr).not.toContain(KEY);
});

test('a store with invalid items: sync quarantines them and exits 1; usage errors exit 2', async () => {
  const { products, orders } = demoCatalog(30);
  const store = await startFakeStore({
    products,
    orders,
    key: KEY,
    transform: (b, ctx) => (ctx.entity === 'products' && ctx.n === 1 ? { ...b, products: (b.products as Product[]).map((p, i) => (i === 0 ? { ...p, last_updated: 'yesterday' } : p)) } : b),
  });
  try {
    const r = await runCli(['sync', store.url, '--key', KEY, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(lastLine(r.stdout))).toMatchObject({ ok: false, products: { count: 29, invalid: 1, duplicates: 0 }, orders: { count: 8 } });
    expect(r.stderr).toMatch(/invalid products .*last_updated/);
  } finally {
    await store.close();
  }
  expect((await runCli(['sync', url])).code).toBe(2);
  expect((await runCli(['check'])).code).toBe(2);
  expect((await runCli(['sync', '--help'])).stdout).toMatch(/usage: storebridge sync/);
  expect((await runCli(['help', 'sync'])).stdout).toMatch(/usage: storebridge sync/);
  const unknown = await runCli(['help', 'nonsense']);
  expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringMatching(/unknown command "nonsense"/)]);
});

test('--state with the default memory sink warns that the sink is not kept (a resumed or incremental run holds only its own part)', async () => {
  const dir = await import('node:fs').then((fs) => fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'sb-state-')));
  const state = path.join(dir, 'state.json');
  const r = await runCli(['sync', url, '--key', KEY, '--state', state, '--json']);
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(/--state with the memory sink/);
  const withSink = await runCli(['sync', url, '--key', KEY, '--state', state, '--into', `sqlite:${path.join(dir, 'sink.db')}`, '--json']);
  expect(withSink.code).toBe(0);
  expect(withSink.stderr).not.toMatch(/memory sink/);
  require('node:fs').rmSync(dir, { recursive: true, force: true });
}, 60_000);
