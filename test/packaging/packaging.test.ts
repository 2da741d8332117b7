/**
 * The package as a user gets it: build, `npm pack`, and install the tarball into throwaway consumer
 * projects in a temp dir (outside the repository, so nothing resolves from the project by accident).
 *
 * Install (fast and offline): the tarball is unpacked into `<root>/node_modules/storebridge`; every
 * package named in the *packed* package.json's `dependencies` and the peer `express` are symlinked
 * from the project's node_modules (a dependency the code needs but the manifest lacks fails here).
 * Two roots: one where `express` is Express 5 (with @types/express 5), one where it is Express 4
 * (with @types/express 4), so the router is mounted in both and the package's own `require('express')`
 * meets both.
 *
 * A third consumer is installed by npm itself (`npm install --prefer-offline <tarball>`: the npm cache
 * first, the registry for what it lacks) to prove npm resolves the packed manifest's dependencies.
 *
 * In each root: an ESM and a CommonJS JavaScript consumer import the main entry and every subpath,
 * mount the router (plus the OpenAPI handler and the reverse router) in Express apps on loopback and
 * make real requests; a TypeScript consumer and `public-api.ts` are typechecked against the shipped
 * .d.ts (no skipLibCheck) under node16, nodenext and bundler resolution, then the nodenext build is
 * run; and the packed CLI prints the OpenAPI document. A "bare" root with no optional peer
 * typechecks every entry under those three and, with TypeScript 5.9, node10 (`module: commonjs`).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const NODE_MODULES = join(ROOT, 'node_modules');
const CONSUMER = join(__dirname, 'consumer');
const TSC = join(NODE_MODULES, 'typescript', 'bin', 'tsc');

interface PackedFile {
  path: string;
  size: number;
}

let work: string;
let tarball: string;
let packed: PackedFile[];
let manifest: { dependencies: Record<string, string>; optionalDependencies?: Record<string, string>; exports: Record<string, string | { types: string; default: string }>; bin: Record<string, string> };

/**
 * Optional peers a user of the metrics and of the BullMQ scheduler installs. The express roots have
 * them; the "bare" root has none, and the shipped .d.ts must typecheck there too (they declare what
 * they use of these packages structurally, never importing them).
 */
const OPTIONAL_TYPE_PACKAGES = ['prom-client', 'bullmq', 'ioredis'];

const ROOTS = {
  express5: { express: 'express', typesExpress: '@types/express' },
  express4: { express: 'express4', typesExpress: '@types/express4' },
} as const;
type RootName = keyof typeof ROOTS;

function link(root: string, name: string, target: string): void {
  const at = join(root, 'node_modules', name);
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(join(NODE_MODULES, target), at, 'dir');
}

function makeRoot(name: RootName | 'bare'): string {
  const root = join(work, name);
  const pkgDir = join(root, 'node_modules', 'storebridge');
  mkdirSync(pkgDir, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
  const versions = name === 'bare' ? ROOTS.express5 : ROOTS[name];
  for (const dep of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.optionalDependencies ?? {})]) link(root, dep, dep);
  link(root, 'express', versions.express);
  link(root, 'express4', 'express4');
  link(root, '@types/node', '@types/node');
  link(root, '@types/express', versions.typesExpress);
  if (name !== 'bare') for (const dep of OPTIONAL_TYPE_PACKAGES) link(root, dep, dep);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true, type: 'module' }));
  for (const file of ['scenario.cjs', 'scenario.d.cts', 'consumer.mjs', 'consumer.cjs', 'consumer.mts', 'consumer.cts']) copyFileSync(join(CONSUMER, file), join(root, file));
  copyFileSync(join(__dirname, 'public-api.ts'), join(root, 'public-api.ts'));
  const base = { target: 'es2022', lib: ['es2023'], types: ['node'], strict: true, esModuleInterop: true, skipLibCheck: false, noEmit: true };
  const configs: Record<string, object> = {
    node16: { compilerOptions: { ...base, module: 'node16', moduleResolution: 'node16' }, files: ['consumer.mts', 'consumer.cts', 'public-api.ts'] },
    nodenext: { compilerOptions: { ...base, module: 'nodenext', moduleResolution: 'nodenext', noEmit: false, outDir: 'out' }, files: ['consumer.mts', 'consumer.cts', 'public-api.ts'] },
    // Bundlers take ES modules; `import x = require()` (consumer.cts) is not for them.
    bundler: { compilerOptions: { ...base, module: 'esnext', moduleResolution: 'bundler' }, files: ['consumer.mts', 'public-api.ts'] },
  };
  for (const [config, content] of Object.entries(configs)) writeFileSync(join(root, `tsconfig.${config}.json`), JSON.stringify(content, null, 2));
  mkdirSync(join(root, 'out'));
  copyFileSync(join(CONSUMER, 'scenario.cjs'), join(root, 'out', 'scenario.cjs'));
  return root;
}

/** Runs a command in a consumer root; resolves with stdout, rejects with the output on failure. */
async function inRoot(root: string, file: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(file, args, { cwd: root, timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${[file, ...args].join(' ')} failed in ${root}:\n${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`);
  }
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!);

beforeAll(async () => {
  // tsc emits even when another area's files have type errors; the checks below judge the output.
  await run(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT }).catch(() => undefined);
  if (!existsSync(join(ROOT, 'dist', 'lib', 'index.js'))) throw new Error('the build produced no dist/lib/index.js');
  work = mkdtempSync(join(tmpdir(), 'storebridge-pack-'));
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT });
  const info = JSON.parse(stdout.slice(stdout.indexOf('[')))[0] as { filename: string; files: PackedFile[] };
  tarball = join(work, info.filename);
  packed = info.files;
  manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the tarball', () => {
  const paths = () => packed.map((f) => f.path);

  it('holds only the build, the CLI, the docs, the README, the licence and the manifest', () => {
    const outside = paths().filter((p) => !/^(dist\/lib\/|dist\/adapters\/|bin\/|docs\/)/.test(p) && !['README.md', 'LICENSE', 'package.json'].includes(p));
    expect(outside).toEqual([]);
    expect(paths().filter((p) => /(^|\/)(test|tests|bench|examples|__tests__)\//.test(p) || /\.test\.|\.spec\./.test(p) || /\.tsbuildinfo$/.test(p))).toEqual([]);
  });

  it('ships no stale build output: every .js has its source in lib/ or adapters/', () => {
    const stale = paths()
      .filter((p) => p.startsWith('dist/') && p.endsWith('.js'))
      .filter((p) => !existsSync(join(ROOT, p.slice('dist/'.length).replace(/\.js$/, '.ts'))));
    expect(stale).toEqual([]);
  });

  it('contains every target of `exports`, `main`, `types` and `bin`', () => {
    const targets = [
      ...Object.values(manifest.exports).flatMap((t) => (typeof t === 'string' ? [t] : [t.types, t.default])),
      ...Object.values(manifest.bin),
    ].map((t) => t.replace(/^\.\//, ''));
    expect(targets.filter((t) => !paths().includes(t))).toEqual([]);
  });

  // tsconfig emits source maps whose `sources` are ../../lib/*.ts; `files` leaves the maps out
  // ("!dist/**/*.map") rather than ship maps that point at sources the tarball does not have.
  it('ships no source maps (they would point at sources outside the tarball)', () => {
    expect(paths().filter((p) => p.endsWith('.map'))).toEqual([]);
  });
});

/**
 * TypeScript 5.9: `module: commonjs` (still the default of `tsc --init` before 6.0) resolves with
 * node10, which ignores `exports`: the subpaths resolve through `typesVersions`. TypeScript 7 removed
 * node10, so this older compiler is fetched with npm (the npm cache first) into the work directory.
 */
async function typescript5(): Promise<string> {
  const dir = join(work, 'typescript5');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'ts5', private: true }));
  await inRoot(dir, 'npm', ['install', '--no-save', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', 'typescript@~5.9']);
  return join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
}

/** A file importing every subpath of `exports`, as a consumer names them. */
function everyEntry(root: string): string {
  const subpaths = Object.keys(manifest.exports).filter((s) => s.endsWith('package.json') === false);
  const lines = subpaths.map((s, i) => `import * as e${i} from '${s === '.' ? 'storebridge' : `storebridge/${s.slice(2)}`}';`);
  writeFileSync(join(root, 'every-entry.ts'), `${lines.join('\n')}\nexport const entries = [${subpaths.map((_, i) => `e${i}`).join(', ')}];\n`);
  return 'every-entry.ts';
}

describe('TypeScript with only the declared dependencies (no optional peer), skipLibCheck off', () => {
  let root: string;
  beforeAll(() => {
    root = makeRoot('bare');
    everyEntry(root);
    const base = { target: 'es2022', lib: ['es2023'], types: ['node'], strict: true, esModuleInterop: true, skipLibCheck: false, noEmit: true };
    writeFileSync(join(root, 'tsconfig.every.json'), JSON.stringify({ compilerOptions: { ...base, module: 'commonjs' }, files: ['every-entry.ts', 'public-api.ts'] }));
  });

  it.each(['node16', 'nodenext', 'bundler'])('moduleResolution %s: every entry and the public API typecheck', async (config) => {
    const content = JSON.parse(readFileSync(join(root, `tsconfig.${config}.json`), 'utf8'));
    content.files = ['every-entry.ts', 'public-api.ts'];
    writeFileSync(join(root, `tsconfig.${config}.json`), JSON.stringify(content));
    await inRoot(root, process.execPath, [TSC, '-p', `tsconfig.${config}.json`]);
  });

  it('TypeScript 5.9, module commonjs (node10 resolution): every entry and the public API typecheck', async () => {
    await inRoot(root, process.execPath, [await typescript5(), '-p', 'tsconfig.every.json']);
  }, 120_000);
});

it('`typesVersions` maps every subpath of `exports` to its types (node10 resolution reads only that)', () => {
  const mapped = (manifest as unknown as { typesVersions: Record<string, Record<string, string[]>> }).typesVersions['*'];
  const expected = Object.fromEntries(
    Object.entries(manifest.exports)
      .filter(([s, t]) => s !== '.' && typeof t !== 'string')
      .map(([s, t]) => [s.slice(2), [(t as { types: string }).types]]),
  );
  expect(mapped).toEqual(expected);
});

it('the published manifest runs nothing at install time (no preinstall, install, postinstall or prepare)', () => {
  const scripts = (manifest as unknown as { scripts: Record<string, string> }).scripts;
  expect(Object.keys(scripts).filter((s) => /^(pre|post)?install$|^prepare$/.test(s))).toEqual([]);
  // The build still happens before any tarball is made (npm pack, npm publish, a git dependency).
  expect(scripts.prepack).toBe('npm run build');
});

it('npm itself installs the tarball (dependencies resolved from the packed manifest) and the CommonJS consumer runs', async () => {
  const root = join(work, 'npm-install');
  mkdirSync(root);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'consumer-npm', private: true }));
  for (const file of ['scenario.cjs', 'consumer.cjs']) copyFileSync(join(CONSUMER, file), join(root, file));
  // --prefer-offline: tarballs come from the npm cache `npm ci` filled, but `npm ci` installs from the
  // lock's URLs and caches no packument, so resolving the manifest's ranges (`zod@^4…`) may need the
  // registry on a fresh machine (--offline failed there with ERESOLVE "express@undefined").
  await inRoot(root, 'npm', ['install', '--no-save', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, 'express@^5', 'express4@npm:express@^4']);
  const result = lastJson(await inRoot(root, process.execPath, ['consumer.cjs']));
  expect(result.apps.express).toMatchObject({ express: expect.stringMatching(/^5\./), list: { status: 200 }, noKey: 401 });
  expect(result.apps.express4).toMatchObject({ express: expect.stringMatching(/^4\./), list: { status: 200 }, noKey: 401 });
}, 60_000);

/**
 * A store owner's first minutes (issue 14): a fresh app, `npm install <tarball>` naming nothing else,
 * then `npx storebridge demo` and `npx storebridge serve --port 0 --key K --demo 20` on the default
 * SQLite store. npm runs better-sqlite3's install script (prebuild-install, else node-gyp) as it
 * would for the user; the prebuilt binary it would download from GitHub is handed to it as a local
 * prebuild (prebuild-install's own `local_prebuilds` setting), made from the project's working
 * binary, because this machine reaches only the npm registry. STOREBRIDGE_PACK_BUILD_NATIVE=1 skips
 * that and lets node-gyp compile (about 90 s). Then the native module is broken the two ways real
 * machines break it, and the same commands must fall back to memory with one line of notice.
 */
describe('a fresh app: npm install <tarball>, nothing else named', () => {
  let app: string;
  let tmp: string;
  let installOutput = '';
  const KEY = 'K-fresh-app-7d1c';
  const binary = () => join(app, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

  /** A local prebuild of the installed better-sqlite3, named as prebuild-install looks for it. */
  function localPrebuild(): string {
    const dir = join(work, 'prebuilds');
    const stage = join(dir, 'stage', 'build', 'Release');
    mkdirSync(stage, { recursive: true });
    copyFileSync(join(NODE_MODULES, 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'), join(stage, 'better_sqlite3.node'));
    const { version } = JSON.parse(readFileSync(join(NODE_MODULES, 'better-sqlite3', 'package.json'), 'utf8'));
    const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    execFileSync('tar', ['-czf', join(dir, name), '-C', join(dir, 'stage'), 'build']);
    return dir;
  }

  /** `npx storebridge ARGS` in the app, in its own process group (npx runs node as a child). */
  function npx(args: string[]) {
    const child = spawn('npx', ['storebridge', ...args], { cwd: app, detached: true, env: { ...process.env, NODE_OPTIONS: '', STOREBRIDGE_KEY: '', TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const stop = async () => {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
      return exit;
    };
    return { stdout: () => stdout, stderr: () => stderr, exit, stop };
  }

  /** stderr without npm's own warnings (the machine's npmrc) and the shutdown line. */
  const ownLines = (stderr: string) => stderr.split('\n').filter((l) => l !== '' && !/^npm (warn|notice)/.test(l) && !/shutting down$/.test(l));

  async function serve20(): Promise<{ itemsTotal: number; notice: string[]; sqliteFiles: string[] }> {
    const cli = npx(['serve', '--port', '0', '--key', KEY, '--demo', '20']);
    try {
      let url: string | undefined;
      for (let i = 0; i < 600 && !url; i++) {
        url = /^listening on (http:\/\/\S+)$/m.exec(cli.stdout())?.[1];
        if (!url) await new Promise((r) => setTimeout(r, 50));
      }
      if (!url) throw new Error(`serve did not listen: ${cli.stdout()}${cli.stderr()}`);
      const res = await fetch(`${url}/products?sortorder=asc&jobid=1`, { headers: { SvcKey: KEY } });
      const body = (await res.json()) as { paging: { itemsTotal: number } };
      const sqliteFiles = readdirSync(tmp)
        .filter((d) => d.startsWith('storebridge-'))
        .filter((d) => existsSync(join(tmp, d, 'store.db')));
      return { itemsTotal: body.paging.itemsTotal, notice: ownLines(cli.stderr()), sqliteFiles };
    } finally {
      await cli.stop();
    }
  }

  beforeAll(async () => {
    app = join(work, 'app');
    tmp = join(work, 'app-tmp');
    mkdirSync(app);
    mkdirSync(tmp);
    await inRoot(app, 'npm', ['init', '-y']);
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
    if (process.env.STOREBRIDGE_PACK_BUILD_NATIVE !== '1') env.npm_config_better_sqlite3_local_prebuilds = localPrebuild();
    const started = Date.now();
    installOutput = (await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: app, env, timeout: 600_000 })).stderr;
    process.stderr.write(`fresh app: npm install <tarball> took ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }, 600_000);

  it('npm names no install script of storebridge (only better-sqlite3 builds its native module)', () => {
    expect(installOutput.split('\n').filter((l) => /storebridge@/.test(l))).toEqual([]);
  });

  it('installs SQLite with it: kysely, better-sqlite3 with its native module, and the peer express', () => {
    const installed = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).dependencies;
    expect(Object.keys(installed)).toEqual(['storebridge']);
    for (const dep of ['kysely', 'better-sqlite3', 'express']) expect({ dep, installed: existsSync(join(app, 'node_modules', dep, 'package.json')) }).toEqual({ dep, installed: true });
    expect(existsSync(binary())).toBe(true);
  });

  it('npx storebridge demo: the tour runs on SQLite', async () => {
    const cli = npx(['demo', '--exit', '--demo', '20']);
    expect(await cli.exit).toBe(0);
    expect(cli.stdout()).toMatch(/demo store: 20 products, \d+ orders \(adapter sqlite:/);
    expect(cli.stdout()).toMatch(/GET \/products\?sortorder=asc&jobid=1 +→ 200: 20 of 20 products/);
    expect(ownLines(cli.stderr())).toEqual([]);
  }, 60_000);

  it('npx storebridge serve --port 0 --key K --demo 20 serves 20 products from a SQLite file', async () => {
    expect(await serve20()).toEqual({ itemsTotal: 20, notice: [], sqliteFiles: [expect.any(String)] });
  }, 60_000);

  it('a native module built for something else (not an ELF file): one line of notice, served from memory', async () => {
    const good = readFileSync(binary());
    writeFileSync(binary(), 'not a shared object');
    try {
      const r = await serve20();
      expect(r.itemsTotal).toBe(20);
      expect(r.sqliteFiles).toEqual([]);
      expect(r.notice).toEqual([expect.stringMatching(/^storebridge: SQLite is unavailable here, so the store is kept in memory \(lost when this process ends\): better-sqlite3's native module does not load \(.+\): run "npm rebuild better-sqlite3"/)]);
    } finally {
      writeFileSync(binary(), good);
    }
  }, 60_000);

  it('better-sqlite3 absent (npm drops an optional dependency whose build failed): one line of notice, the demo runs on memory', async () => {
    const dir = join(app, 'node_modules', 'better-sqlite3');
    renameSync(dir, `${dir}.away`);
    try {
      const cli = npx(['demo', '--exit', '--demo', '20']);
      expect(await cli.exit).toBe(0);
      expect(cli.stdout()).toMatch(/GET \/products\?sortorder=asc&jobid=1 +→ 200: 20 of 20 products/);
      expect(ownLines(cli.stderr())).toEqual([expect.stringMatching(/^storebridge: SQLite is unavailable here, .*: the sqlite: adapter needs the "better-sqlite3" package: npm install better-sqlite3$/)]);
    } finally {
      renameSync(`${dir}.away`, dir);
    }
  }, 60_000);

  /**
   * The README's "Mount it in your app", copied as a user copies it (issue 21: it needed pg, used
   * top-level await in a CommonJS project, and a missing SVC_KEY gave an unnamed option error).
   */
  describe('the README\'s "Mount it in your app", as written', () => {
    const snippet = () => /## Mount it in your app[\s\S]*?```ts\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))![1];

    /** Runs `node FILE` in the app; with a port, until GET /sync/products answers (then stops it). */
    async function runApp(file: string, env: NodeJS.ProcessEnv): Promise<{ status?: number; itemsTotal?: number; code: number | null; stderr: string }> {
      const child = spawn(process.execPath, [file], { cwd: app, env: { ...process.env, NODE_OPTIONS: '', SVC_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c));
      const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      let answer: { status: number; itemsTotal: number } | undefined;
      for (let i = 0; i < 100 && env.SVC_KEY && child.exitCode === null && !answer; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const res = await fetch(`http://127.0.0.1:${env.PORT}/sync/products?sortorder=asc&jobid=1`, { headers: { SvcKey: env.SVC_KEY } }).catch(() => undefined);
        if (res) answer = { status: res.status, itemsTotal: ((await res.json()) as { paging: { itemsTotal: number } }).paging.itemsTotal };
      }
      // Serving: stop it. Expected to fail: let it end by itself (within 20 s).
      if (answer || env.SVC_KEY) child.kill('SIGTERM');
      else setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
      const code = await exit;
      return { ...answer, code: answer ? null : code, stderr };
    }

    const freePort = () =>
      new Promise<number>((resolve) => {
        const srv = createServer().listen(0, '127.0.0.1', () => {
          const { port } = srv.address() as AddressInfo;
          srv.close(() => resolve(port));
        });
      });

    it('as app.mjs (ES module): serves the store; without SVC_KEY one line naming it; without pg one line saying to install it', async () => {
      writeFileSync(join(app, 'app.mjs'), snippet());
      expect(await runApp('app.mjs', { SVC_KEY: 'k-readme', PORT: String(await freePort()) })).toMatchObject({ status: 200, itemsTotal: 0, stderr: '' });
      expect(await runApp('app.mjs', {})).toEqual({ code: 1, stderr: 'set SVC_KEY to the key the sync service sends\n' });
      writeFileSync(join(app, 'app-pg.mjs'), snippet().replace("'sqlite:shop.db'", "'postgres://app@127.0.0.1:1/shop'"));
      const pg = await runApp('app-pg.mjs', { SVC_KEY: 'k-readme', PORT: String(await freePort()) });
      expect(pg).toMatchObject({ code: 1, stderr: expect.stringMatching(/^[^\n]*npm install pg[^\n]*\n$/) });
    }, 60_000);

    it('as app.ts in the CommonJS project npm init made: strict TypeScript (no skipLibCheck) compiles it, and it serves', async () => {
      expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).type ?? 'commonjs').toBe('commonjs');
      writeFileSync(join(app, 'app.ts'), snippet());
      mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
      for (const types of ['@types/node', '@types/express']) if (!existsSync(join(app, 'node_modules', types))) symlinkSync(join(NODE_MODULES, types), join(app, 'node_modules', types), 'dir');
      const compilerOptions = { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, esModuleInterop: true, skipLibCheck: false, types: ['node'], outDir: 'out' };
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['app.ts'] }));
      await inRoot(app, process.execPath, [TSC, '-p', 'tsconfig.json']);
      expect(readFileSync(join(app, 'out', 'app.js'), 'utf8')).toContain('require("storebridge/server")');
      expect(await runApp('out/app.js', { SVC_KEY: 'k-readme', PORT: String(await freePort()) })).toMatchObject({ status: 200, stderr: '' });
    }, 60_000);
  });
});

describe.each(Object.keys(ROOTS) as RootName[])('installed in a consumer whose express is %s', (name) => {
  let root: string;
  beforeAll(() => {
    root = makeRoot(name);
  });

  const expectScenario = (result: any, flavor: string, apps: string[]) => {
    expect(result.flavor).toBe(flavor);
    expect(Object.keys(result.apps)).toEqual(apps);
    for (const app of apps) {
      expect(result.apps[app]).toEqual({
        express: expect.stringMatching(app === 'express4' || name === 'express4' ? /^4\./ : /^5\./),
        list: { status: 200, items: 5, itemsTotal: 45 },
        noKey: 401,
        walkedOrders: result.apps[app].orders,
        orders: expect.any(Number),
        openapi: '3.1.0',
        reverseMode: 'idle',
      });
      expect(result.apps[app].orders).toBeGreaterThan(5);
    }
    expect(result.conformance).toBe('function');
    for (const [subpath, count] of Object.entries(result.exports)) expect({ subpath, some: (count as number) > 0 }).toEqual({ subpath, some: true });
  };

  it('ESM JavaScript: imports every entry, mounts the router in Express 4 and 5, real requests answer', async () => {
    expectScenario(lastJson(await inRoot(root, process.execPath, ['consumer.mjs'])), 'esm', ['express', 'express4']);
  });

  it('CommonJS JavaScript: requires every entry, mounts the router in Express 4 and 5, real requests answer', async () => {
    expectScenario(lastJson(await inRoot(root, process.execPath, ['consumer.cjs'])), 'cjs', ['express', 'express4']);
  });

  it.each(['node16', 'nodenext', 'bundler'])('TypeScript typechecks against the shipped .d.ts with moduleResolution %s', async (config) => {
    await inRoot(root, process.execPath, [TSC, '-p', `tsconfig.${config}.json`]);
  });

  it('TypeScript: the nodenext build of the ESM and CommonJS consumers runs', async () => {
    if (!existsSync(join(root, 'out', 'consumer.mjs'))) await inRoot(root, process.execPath, [TSC, '-p', 'tsconfig.nodenext.json']);
    expectScenario(lastJson(await inRoot(root, process.execPath, ['out/consumer.mjs'])), 'ts-esm', ['express']);
    expectScenario(lastJson(await inRoot(root, process.execPath, ['out/consumer.cjs'])), 'ts-cjs', ['express']);
  });

  it('the packed CLI runs from node_modules', async () => {
    const doc = JSON.parse(await inRoot(root, process.execPath, ['node_modules/storebridge/bin/storebridge.js', 'openapi', '--only', 'webhooks', '--compact']));
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/products/{id}');
  });
});
