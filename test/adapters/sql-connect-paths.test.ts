/**
 * `sqlite:FILE` specs whose directory cannot be created fail with a clear message, promptly.
 * Run in a child process: the failure this guards against was a synchronous endless loop
 * (Node's recursive mkdir on a pseudo filesystem such as /proc), which would hang jest itself.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const DIST_SQL = join(__dirname, '..', '..', 'dist', 'adapters', 'sql');

function open(spec: string): { status: number | null; signal: NodeJS.Signals | null; out: string } {
  const code = `
const { openSqlAdapter } = require(${JSON.stringify(DIST_SQL)});
openSqlAdapter(process.argv[1]).then(
  async (a) => { await a.close(); console.log('opened'); },
  (e) => { console.log(e.name + ': ' + e.message); process.exitCode = 1; },
);`;
  const r = spawnSync(process.execPath, ['-e', code, spec], { encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' });
  return { status: r.status, signal: r.signal, out: r.stdout.trim() };
}

beforeAll(() => {
  if (!existsSync(join(DIST_SQL, 'index.js'))) throw new Error('build first: npx tsc -p tsconfig.build.json');
});

const procfs = existsSync('/proc/self/status');
(procfs ? it : it.skip)('a directory under /proc cannot be created: a clear error, not an endless loop', () => {
  const r = open('sqlite:/proc/storebridge-no-such-dir/store.db');
  expect(r.signal).toBeNull();
  expect(r.status).toBe(1);
  expect(r.out).toMatch(/^SqlConnectError: cannot open sqlite:\/proc\/storebridge-no-such-dir\/store\.db: .*(ENOENT|EACCES|EPERM|EROFS)/);
});

it('a path through a regular file: a clear error', () => {
  const r = open(`sqlite:${__filename}/store.db`);
  expect(r.status).toBe(1);
  expect(r.out).toMatch(/^SqlConnectError: cannot open sqlite:.*(ENOTDIR|EEXIST)/);
});
