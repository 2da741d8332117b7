/**
 * The real CLI, spawned: `storebridge demo` (what `npm start` runs) tours a demo store the way the
 * sync service would and, with `--exit`, stops after the tour. Needs the build.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { spawnCli } from './cli-process';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'storebridge.js');

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, STOREBRIDGE_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

/** `storebridge demo` left serving: its output up to "serving until Ctrl-C", then Ctrl-C (exit status). */
async function serving(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const cli = spawnCli(['demo', ...args], { STOREBRIDGE_KEY: '', ...env });
  for (let i = 0; i < 300 && !cli.stdout().includes('serving until Ctrl-C'); i++) await new Promise((r) => setTimeout(r, 50));
  cli.child.kill('SIGINT');
  const code = await cli.exit;
  return { code, out: cli.stdout(), err: cli.stderr() };
}

describe('storebridge demo', () => {
  it('--exit: starts a demo store, tours all its operations, prints a summary, exits 0', async () => {
    const r = await run(['demo', '--exit', '--demo', '60']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/m);
    expect(r.out).toMatch(/^demo store: 60 products, 15 orders \(adapter \S+\)$/m);
    expect(r.out).toMatch(/GET \/products\?sortorder=asc&jobid=1\s+→ 200: 20 of 60 products from offset 0/);
    expect(r.out).toMatch(/GET \/orders\?sortorder=desc&jobid=1\s+→ 200: 15 of 15 orders, newest first/);
    expect(r.out).toMatch(/GET \/products\/prod-000001\s+→ 200/);
    expect(r.out).toMatch(/&next=…\s+→ 200: 20 more products by cursor, and a next cursor/);
    expect(r.out).toMatch(/POST \/orders\?jobid=1&id=\S+\s+→ 200: success true/);
    expect(r.out).toMatch(/GET \/orders\/no-such-order\s+→ 404/);
    expect(r.out).toMatch(/without a SvcKey\s+→ 401/);
    // The deployed service's forms: C2SKey, a bare ?id= read, a create without id.
    expect(r.out).toMatch(/GET \/products\?id=prod-000001\s+→ 200: the bare product "/);
    expect(r.out).toMatch(/POST \/products \(no id\)\s+→ 200: success true, new _id product-[0-9a-f-]{36}$/m);
    // The server has stopped: no "try it" line for it.
    expect(r.out).not.toContain('curl');
    expect(r.out.trimEnd().split('\n').pop()).toMatch(/POST \/products \(no id\)/);
  });

  it('serving: the last lines say how to try it (the throwaway key is shown) and that it serves until Ctrl-C', async () => {
    const r = await serving(['--demo', '10']);
    expect(r.code).toBe(0);
    const key = /throwaway demo key \(valid only for this process\): (demo-\S+)/.exec(r.out)?.[1];
    expect(key).toBeDefined();
    const url = /^listening on (\S+)$/m.exec(r.out)![1];
    expect(r.out.trimEnd().split('\n').slice(-2)).toEqual([`try it: curl -H "SvcKey: ${key}" "${url}/products?sortorder=asc&jobid=1&offset=20"`, 'serving until Ctrl-C']);
    expect(r.err).toBe('storebridge demo: SIGINT, shutting down\n');
  });

  it('never prints a key the user supplied', async () => {
    const secret = 'user-supplied-key-42';
    const r = await serving(['--demo', '10'], { STOREBRIDGE_KEY: secret });
    expect(r.code).toBe(0);
    expect(r.out + r.err).not.toContain(secret);
    expect(r.out).toContain('curl -H "SvcKey: $STOREBRIDGE_KEY"');
  });

  it('Ctrl-C (SIGINT) while seeding a large catalog stops promptly, before the tour', async () => {
    const cli = spawnCli(['demo', '--demo', '400000'], { STOREBRIDGE_KEY: '' });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const signalled = Date.now();
    cli.child.kill('SIGINT');
    expect(await cli.exit).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(4000);
    expect(cli.stdout()).toBe('');
    expect(cli.stderr()).toContain('SIGINT, shutting down');
  }, 60_000);

  it('honours the serve options it accepts: --page-size, --rate-limit, --pagination; --help lists them', async () => {
    const r = await serving(['--demo', '60', '--page-size', '5', '--pagination', 'cursor']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/GET \/products\?sortorder=asc&jobid=1\s+→ 200: 5 of 60 products, \d/);
    expect(r.out).toMatch(/&next=…\s+→ 200: 5 more products by cursor/);
    expect(r.out).toMatch(/&offset=5"$/m);
    // A per-key limit of 3 requests a minute: the tour's fourth keyed call is refused.
    const limited = await run(['demo', '--exit', '--demo', '10', '--rate-limit', '3']);
    expect(limited.out).toMatch(/→ 429/);
    const help = await run(['demo', '--help']);
    for (const option of ['--port P', '--host H', '--demo N', '--adapter SPEC', '--key K', '--pagination MODE', '--page-size N', '--rate-limit N|off', '--exit']) {
      expect(help.out).toContain(option);
    }
  });

  it('a key given with --key is not printed, and the curl line does not pretend it is in STOREBRIDGE_KEY', async () => {
    const secret = 'flag-supplied-key-42';
    const r = await serving(['--demo', '10', '--key', secret]);
    expect(r.code).toBe(0);
    expect(r.out + r.err).not.toContain(secret);
    expect(r.out).not.toContain('$STOREBRIDGE_KEY');
    expect(r.out).toMatch(/curl -H "SvcKey: <the key given with --key>"/);
  });

  it('a usage error exits 2', async () => {
    const r = await run(['demo', '--demo', 'lots']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--demo must be an integer/);
  });
});
