/**
 * When SQLite cannot load (better-sqlite3 missing, or its native module built for another Node.js),
 * the real CLI's `serve` and `demo` on their default store say so in ONE line and serve from memory;
 * an explicit `--adapter sqlite:FILE` stops with that one line instead. The breakage is made at the
 * module-loading boundary by a preloaded hook (fixtures/break-sqlite.cjs); the packaging test does
 * the same on a real npm install. Needs the build (the CLI runs from dist/).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runCli, spawnCli, type RunningCli } from '../cli/cli-process';

const HOOK = join(__dirname, 'fixtures', 'break-sqlite.cjs');
const KEY = 'K-fallback-51d2';

function broken(mode: 'abi' | 'missing', tmp: string): NodeJS.ProcessEnv {
  return { STOREBRIDGE_TEST_BREAK_SQLITE: mode, NODE_OPTIONS: `--require ${HOOK}`, TMPDIR: tmp, STOREBRIDGE_KEY: '' };
}

async function listening(cli: RunningCli): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const m = /^listening on (http:\/\/\S+)$/m.exec(cli.stdout());
    if (m) return m[1];
    if (cli.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no "listening on": ${cli.stdout()}${cli.stderr()}`);
}

/** Lines of stderr, without the shutdown line every long-running command prints. */
const lines = (stderr: string) => stderr.split('\n').filter((l) => l !== '' && !/shutting down$/.test(l));

let tmp: string;
beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'lib', 'cli', 'adapter-spec.js'))) throw new Error('build first: npm run build');
});
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'storebridge-fallback-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

describe.each(['abi', 'missing'] as const)('SQLite unusable (%s)', (mode) => {
  test('serve --port 0 --key K --demo 20: one notice line, then 20 products served from memory', async () => {
    const cli = spawnCli(['serve', '--port', '0', '--key', KEY, '--demo', '20'], broken(mode, tmp));
    try {
      const url = await listening(cli);
      const res = await fetch(`${url}/products?sortorder=asc&jobid=1`, { headers: { SvcKey: KEY } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { paging: { itemsTotal: number } }).paging.itemsTotal).toBe(20);
      const err = lines(cli.stderr());
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(/^storebridge: SQLite is unavailable here, so the store is kept in memory \(lost when this process ends\): /);
      expect(err[0]).toMatch(mode === 'abi' ? /npm rebuild better-sqlite3/ : /npm install better-sqlite3/);
      expect(cli.stderr()).not.toMatch(/\n\s+at /);
      expect(readdirSync(tmp).filter((d) => d.startsWith('storebridge-'))).toEqual([]); // no SQLite file was made
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exit;
    }
  });

  test('demo --exit: the tour runs on memory after the one-line notice', async () => {
    const r = await runCli(['demo', '--exit', '--demo', '8'], broken(mode, tmp));
    expect(r.code).toBe(0);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^storebridge: SQLite is unavailable here/)]);
    expect(r.stdout).toMatch(/demo store: 8 products, \d+ orders \(adapter memory\)/);
    expect(r.stdout).toMatch(/GET \/products\?sortorder=asc&jobid=1 +→ 200/);
  });

  test('an explicit --adapter sqlite:FILE is never swapped for memory: one line, exit 1', async () => {
    const r = await runCli(['serve', '--port', '0', '--key', KEY, '--adapter', `sqlite:${join(tmp, 'kept.db')}`], broken(mode, tmp));
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(mode === 'abi' ? /^storebridge: better-sqlite3's native module does not load \(.*NODE_MODULE_VERSION 127/ : /^storebridge: the sqlite: adapter needs the "better-sqlite3" package/)]);
    expect(r.stdout).toBe('');
    expect(existsSync(join(tmp, 'kept.db'))).toBe(false);
  });
});

test('with SQLite working, the default store is a SQLite file in the temp dir (no notice)', async () => {
  const cli = spawnCli(['serve', '--port', '0', '--key', KEY, '--demo', '3'], { TMPDIR: tmp, STOREBRIDGE_KEY: '' });
  try {
    await listening(cli);
    const dirs = readdirSync(tmp).filter((d) => d.startsWith('storebridge-'));
    expect(dirs).toHaveLength(1);
    expect(existsSync(join(tmp, dirs[0], 'store.db'))).toBe(true);
    expect(cli.stderr()).not.toMatch(/unavailable/);
  } finally {
    cli.child.kill('SIGTERM');
    await cli.exit;
  }
});
