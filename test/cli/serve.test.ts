/**
 * The real CLI, spawned: `storebridge serve --port 0 --key K --demo 537` hit over HTTP for all six
 * operations, both paging strategies, the key never printed, and a clean SIGTERM shutdown.
 * Needs the build (`npx tsc -p tsconfig.build.json`; `npm test` runs it first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCli } from './cli-process';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'storebridge.js');
const KEY = 'K-cli-0b1f8e6d2c';

interface Running {
  child: ChildProcess;
  url: string;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Running> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, STOREBRIDGE_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/m.exec(out);
      if (m) resolve({ child, url: m[1], out: () => out, err: () => err, exit });
    });
    void exit.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

/** Runs the CLI to completion. */
function runToEnd(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, STOREBRIDGE_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

async function call(url: string, init: RequestInit & { key?: string } = {}) {
  const res = await fetch(url, { ...init, headers: { SvcKey: init.key ?? KEY, 'content-type': 'application/json', ...(init.headers as object) } });
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'lib', 'cli', 'commands', 'serve.js'))) throw new Error('build first: npx tsc -p tsconfig.build.json');
});

describe('storebridge serve --port 0 --key K --demo 537', () => {
  let srv: Running;
  beforeAll(async () => {
    srv = await start(['serve', '--port', '0', '--key', KEY, '--demo', '537']);
  });
  afterAll(async () => {
    if (srv.child.exitCode === null) {
      srv.child.kill('SIGKILL');
      await srv.exit;
    }
  });

  it('prints the listening line with the real port, once', () => {
    expect(srv.out().match(/listening on/g)).toHaveLength(1);
    expect(Number(new URL(srv.url).port)).toBeGreaterThan(0);
  });

  it('lists products and orders (offset paging from no parameter)', async () => {
    const p = await call(`${srv.url}/products?sortorder=asc&jobid=1`);
    expect(p.status).toBe(200);
    expect(p.body.paging).toMatchObject({ pageSize: 20, itemsTotal: 537, offset: 0, next: expect.any(String) });
    const o = await call(`${srv.url}/orders?sortorder=desc&jobid=1`);
    expect(o.body.paging).toMatchObject({ pageSize: 20, itemsTotal: 134, offset: 0 });
  });

  it('pages through every product with offsets and with cursors', async () => {
    for (const mode of ['offset', 'cursor']) {
      const ids = new Set<string>();
      let n = 0;
      let offset = 0;
      let next: string | undefined;
      for (;;) {
        const q = mode === 'offset' ? `offset=${offset}` : next ? `next=${next}` : '';
        const r = await call(`${srv.url}/products?sortorder=asc&jobid=1&limit=100&${q}`);
        r.body.products.forEach((x: { _id: string }) => ids.add(x._id));
        n += r.body.products.length;
        if (!r.body.paging.next) break;
        offset += r.body.paging.pageSize;
        next = r.body.paging.next;
      }
      expect(n).toBe(537);
      expect(ids.size).toBe(537);
    }
  });

  it('gets one product and one order by id; unknown ids are 404', async () => {
    const p = await call(`${srv.url}/products/prod-000537`);
    expect(p.body.product._id).toBe('prod-000537');
    const o = await call(`${srv.url}/orders/ord-000001`);
    expect(o.body.order._id).toBe('ord-000001');
    expect((await call(`${srv.url}/orders/ord-999999`)).status).toBe(404);
  });

  it('adds/updates a product and an order', async () => {
    const p = await call(`${srv.url}/products?jobid=9&id=cli-p1`, { method: 'POST', body: JSON.stringify({ sku: 'CLI-1', title: 'From the CLI test' }) });
    expect(p.body).toMatchObject({ success: true, code: 200, product: { _id: 'cli-p1', sku: 'CLI-1' } });
    const o = await call(`${srv.url}/orders?jobid=9&id=cli-o1`, { method: 'POST', body: JSON.stringify({ status: 'paid', orderItems: [{ id: 'CLI-1', quantity: 1 }] }) });
    expect(o.body).toMatchObject({ success: true, code: 200, order: { _id: 'cli-o1', status: 'paid' } });
    expect((await call(`${srv.url}/products/cli-p1`)).body.product.title).toBe('From the CLI test');
    const bad = await call(`${srv.url}/orders?jobid=9&id=cli-o2`, { method: 'POST', body: JSON.stringify({ status: 'paid', orderItems: [{ id: 'NOPE', quantity: 0 }] }) });
    expect(bad.body).toMatchObject({ success: false, code: 400 });
  });

  it('refuses a wrong key with 401 and never prints the key', async () => {
    expect((await call(`${srv.url}/products?sortorder=asc&jobid=1`, { key: 'nope' })).status).toBe(401);
    expect(srv.out() + srv.err()).not.toContain(KEY);
  });

  it('shuts down cleanly on SIGTERM (exit 0)', async () => {
    srv.child.kill('SIGTERM');
    expect(await srv.exit).toBe(0);
    expect(srv.err()).toContain('SIGTERM, shutting down');
  });
});

describe('storebridge serve options', () => {
  it('takes the key from STOREBRIDGE_KEY, answers --pagination cursor without offset, stops on SIGINT', async () => {
    const srv = await start(['serve', '--port', '0', '--demo', '30', '--pagination', 'cursor'], { STOREBRIDGE_KEY: KEY });
    try {
      const r = await call(`${srv.url}/products?sortorder=asc&jobid=1`);
      expect(Object.keys(r.body.paging)).toEqual(['pageSize', 'itemsTotal', 'next']);
      expect(srv.out() + srv.err()).not.toContain(KEY);
    } finally {
      srv.child.kill('SIGINT');
      expect(await srv.exit).toBe(0);
    }
  });

  it.each([
    [['serve', '--port', '0'], /a key is required: --key-file FILE, the STOREBRIDGE_KEY environment variable, or --key K/],
    [['serve', '--port', 'abc', '--key', KEY], /--port must be an integer/],
    [['serve', '--key', KEY, '--pagination', 'pages'], /--pagination must be offset or cursor/],
    [['serve', '--key', KEY, '--bogus'], /Unknown option '--bogus'/],
  ])('usage errors exit 2: %p', async (args, message) => {
    const r = await runToEnd(args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).not.toContain(KEY);
  });

  it('an unknown adapter exits non-zero with a clear message', async () => {
    const r = await runToEnd(['serve', '--port', '0', '--key', KEY, '--adapter', 'redis://x']);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/unknown adapter/);
  });

  it('SIGTERM while seeding a large demo catalog stops promptly, without a listening line', async () => {
    const cli = spawnCli(['serve', '--port', '0', '--key', KEY, '--demo', '400000'], { STOREBRIDGE_KEY: '' });
    // Seeding 400,000 products takes many seconds; the signal arrives well inside it.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const signalled = Date.now();
    cli.child.kill('SIGTERM');
    const code = await cli.exit;
    const tookMs = Date.now() - signalled;
    expect(code).toBe(0);
    expect(tookMs).toBeLessThan(4000);
    expect(cli.stdout()).not.toMatch(/listening on/);
    expect(cli.stderr()).toContain('SIGTERM, shutting down');
  }, 60_000);

  it('--help prints the options, and prefers --key-file or STOREBRIDGE_KEY to --key', async () => {
    const r = await runToEnd(['serve', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/--pagination MODE/);
    expect(r.out).toMatch(/--listing MODE/);
    const text = r.out.replace(/\s+/g, ' ');
    expect(text).toContain('--key-file FILE the key callers must send: read from FILE (preferred), or set STOREBRIDGE_KEY; never printed');
    expect(text).toContain('--key K the same on the command line (visible in ps and shell history: prefer the file or STOREBRIDGE_KEY)');
    expect(r.out.indexOf('--key-file FILE')).toBeLessThan(r.out.indexOf('--key K'));
  });

  it('--key-file FILE: the key from a file, accepted in SvcKey and C2SKey, never printed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-keyfile-'));
    const file = join(dir, 'key');
    writeFileSync(file, `${KEY}\n`, { mode: 0o600 });
    const srv = await start(['serve', '--port', '0', '--key-file', file, '--demo', '5']);
    try {
      expect((await call(`${srv.url}/products`)).status).toBe(200);
      const deployed = await fetch(`${srv.url}/products?id=prod-000001`, { headers: { C2SKey: KEY } });
      expect(deployed.status).toBe(200);
      expect(((await deployed.json()) as { _id: string })._id).toBe('prod-000001');
      expect(srv.out() + srv.err()).not.toContain(KEY);
    } finally {
      srv.child.kill('SIGTERM');
      await srv.exit;
      rmSync(dir, { recursive: true, force: true });
    }
    const missing = await runToEnd(['serve', '--key-file', join(dir, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--key-file: cannot read/);
    const both = await runToEnd(['serve', '--key', KEY, '--key-file', file]);
    expect(both.err).toMatch(/give --key or --key-file, not both/);
    expect(both.err).not.toContain(KEY);
  });
});
