/**
 * The real CLI, spawned: `storebridge serve --port 0 --key K --demo 537` hit over HTTP for all six
 * operations, both paging strategies, the key never printed, and a clean SIGTERM shutdown.
 * Needs the build (`npx tsc -p tsconfig.build.json`; `npm test` runs it first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
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
    [['serve', '--port', '0'], /--key K \(or the STOREBRIDGE_KEY environment variable\) is required/],
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

  it('--help prints the options', async () => {
    const r = await runToEnd(['serve', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/--pagination MODE/);
  });
});
