/**
 * The CLI's adapter registry end to end (the real CLI, from dist/): a package
 * `storebridge-adapter-NAME` installed in the user's project makes `--adapter NAME:…` work with no
 * edit of storebridge; a malformed or missing one is a one-line error; and commands load only the
 * database packages of the spec they open.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT } from '../cli/cli-process';

const KEY = 'K-registry-3f9a';
const RECORD = join(__dirname, 'fixtures', 'record-drivers.cjs');

interface Cli {
  stdout(): string;
  stderr(): string;
  exit: Promise<number | null>;
  url(): Promise<string>;
  stop(): Promise<number | null>;
}

function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Cli {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, STOREBRIDGE_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    stdout: () => out,
    stderr: () => err,
    exit,
    async url() {
      for (let i = 0; i < 300; i++) {
        const m = /^listening on (http:\/\/\S+)$/m.exec(out);
        if (m) return m[1];
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no "listening on": ${out}${err}`);
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exit;
    },
  };
}

const itemsTotal = async (url: string) =>
  ((await (await fetch(`${url}/products?sortorder=asc&jobid=1`, { headers: { SvcKey: KEY } })).json()) as { paging: { itemsTotal: number } }).paging.itemsTotal;

let app: string;
beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'adapters', 'memory', 'memory-spec.js'))) throw new Error('build first: npm run build');
  // A user's project: storebridge (linked to this build) and two adapter packages.
  app = mkdtempSync(join(tmpdir(), 'storebridge-registry-'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'shop', private: true }));
  mkdirSync(join(app, 'node_modules'));
  symlinkSync(ROOT, join(app, 'node_modules', 'storebridge'), 'dir');
  const pkg = (name: string, main: string) => {
    const dir = join(app, 'node_modules', name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js' }));
    writeFileSync(join(dir, 'index.js'), main);
  };
  // `shelf:N`: a memory store with N demo products.
  pkg(
    'storebridge-adapter-shelf',
    `const { createMemoryAdapter } = require('storebridge/adapters/memory');
const { demoCatalog } = require('storebridge/demo');
exports.storebridgeAdapter = {
  prefix: 'shelf',
  describe: 'shelf:N',
  open: async (spec) => createMemoryAdapter({ products: demoCatalog(Number(spec.slice('shelf:'.length))).products }),
};`,
  );
  pkg('storebridge-adapter-broken', `exports.storebridgeAdapter = { prefix: 'broken', describe: 'broken' };`);
  pkg('storebridge-adapter-liar', `exports.storebridgeAdapter = { prefix: 'other', describe: 'other', open: async () => ({}) };`);
});
afterAll(() => rmSync(app, { recursive: true, force: true }));

test('an installed storebridge-adapter-NAME package makes --adapter NAME:… work', async () => {
  const serve = cli(['serve', '--port', '0', '--key', KEY, '--adapter', 'shelf:7'], app);
  try {
    expect(await itemsTotal(await serve.url())).toBe(7);
  } finally {
    expect(await serve.stop()).toBe(0);
  }
});

test.each([
  ['broken:x', /^storebridge: invalid option "adapter": the package storebridge-adapter-broken: open must be a function$/],
  ['liar:x', /^storebridge: invalid option "adapter": the package storebridge-adapter-liar does not register the prefix "liar"$/],
  ['nothere:x', /^storebridge: invalid option "adapter": unknown adapter "nothere:x": expected memory \| sqlite:FILE \| postgres:URL \| mysql:URL, or NAME:… with the package storebridge-adapter-NAME installed$/],
  ['../evil:x', /unknown adapter "\.\.\/evil:x"/],
])('--adapter %s: one line, exit 1', async (spec, message) => {
  const serve = cli(['serve', '--port', '0', '--key', KEY, '--adapter', spec], app);
  expect(await serve.exit).toBe(1);
  expect(serve.stderr().trim().split('\n')).toEqual([expect.stringMatching(message)]);
});

test('serve and sync over memory load no database package; a sqlite: sink loads kysely and better-sqlite3 only', async () => {
  const env = { NODE_OPTIONS: `--require ${RECORD}` };
  const serve = cli(['serve', '--port', '0', '--key', KEY, '--adapter', 'memory', '--demo', '30'], ROOT, env);
  try {
    const url = await serve.url();
    const sync = cli(['sync', url, '--key', KEY, '--into', 'memory'], ROOT, env);
    expect(await sync.exit).toBe(0);
    expect(sync.stderr()).toContain('drivers loaded: []');
    const dir = mkdtempSync(join(tmpdir(), 'storebridge-sink-'));
    try {
      const intoSqlite = cli(['sync', url, '--key', KEY, '--into', `sqlite:${join(dir, 'sink.db')}`], ROOT, env);
      expect(await intoSqlite.exit).toBe(0);
      expect(intoSqlite.stderr()).toContain('drivers loaded: ["better-sqlite3","kysely"]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await serve.stop();
  }
  expect(serve.stderr()).toContain('drivers loaded: []');
});
