/**
 * `storebridge init` through the real CLI. Every kind of app is written and its JavaScript parses;
 * the usage mistakes are refused. Then, as a user would: an SQLite app and a PostgreSQL app over
 * mapped tables are each installed with `npm install` (the registry's packages from npm's cache,
 * storebridge from the tarball init packed, better-sqlite3 from a local prebuild; see
 * test/support/sqlite-prebuild.ts) and pass their own `npm test`; the SQLite one also starts with
 * `npm start` and passes `storebridge check`.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { connectKysely } from '../../adapters/sql/sql-connect';
import { ADAPTER_CONFORMANCE_TESTS } from '../../lib/conformance';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from '../adapters/sql-databases';
import { localSqlitePrebuild } from '../support/sqlite-prebuild';
import { createPlainShop } from '../mapped/mapped-fixtures';
import { runCli } from './cli-process';

const exec = promisify(execFile);

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'sb-init-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const files = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => !f.startsWith('node_modules')).sort();

describe('the folder it writes', () => {
  test.each(['memory', 'sqlite', 'postgres', 'mysql'] as const)('--adapter %s: an app whose files parse, depending on the registry with --storebridge', async (adapter) => {
    const dir = join(work, `app-${adapter}`);
    const r = await runCli(['init', dir, '--adapter', adapter, '--storebridge', '^0.1.0']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain(`created ${dir}: a store app over ${adapter}`);
    expect(files(dir)).toEqual(['.env.example', '.gitignore', 'README.md', 'adapter.js', 'app.js', 'env.js', 'key.js', 'package.json', 'server.js', 'test', 'test/store.test.js']);
    for (const f of ['adapter.js', 'app.js', 'env.js', 'key.js', 'server.js', 'test/store.test.js']) await exec(process.execPath, ['--check', join(dir, f)]);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies).toEqual({
      express: '^5.1.0',
      storebridge: '^0.1.0',
      ...(adapter === 'postgres' ? { pg: '^8.11.0' } : adapter === 'mysql' ? { mysql2: '^3.9.0' } : {}),
    });
    expect(pkg.scripts).toEqual({ start: 'node server.js', test: 'node --test test/store.test.js' });
    expect(readFileSync(join(dir, '.env.example'), 'utf8')).toMatch(adapter === 'memory' ? /^(?![\s\S]*DATABASE_URL)/ : /\nDATABASE_URL=\S+\n$/);
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('```sh\nnpm install\nnpm start\n```');
    expect(readme).toContain('depends on storebridge ^0.1.0 from the npm registry');
  });

  test('--map copies the mapping file and serves through it', async () => {
    const map = join(work, 'map.json');
    writeFileSync(map, JSON.stringify({ version: 1, products: { table: 'p', id: 'id', lastUpdated: { column: 'u', type: 'epoch-ms' } } }));
    const dir = join(work, 'app-map');
    expect((await runCli(['init', dir, '--adapter', 'postgres', '--map', map, '--storebridge', '^0.1.0'])).code).toBe(0);
    expect(readFileSync(join(dir, 'storebridge-map.json'), 'utf8')).toBe(readFileSync(map, 'utf8'));
    expect(readFileSync(join(dir, 'adapter.js'), 'utf8')).toContain("require('storebridge/adapters/mapped')");
    expect(readFileSync(join(dir, 'test', 'store.test.js'), 'utf8')).not.toContain('runAdapterConformance');
  });

  test('usage mistakes: --map with memory, a folder that is not empty, a bad mapping file', async () => {
    const m = await runCli(['init', join(work, 'x'), '--adapter', 'memory', '--map', 'm.json']);
    expect(m.code).toBe(2);
    expect(m.stderr).toMatch(/^storebridge init: --map needs a database: --adapter sqlite, postgres or mysql/);
    const full = join(work, 'full');
    await runCli(['init', full, '--storebridge', '^0.1.0']);
    expect(await runCli(['init', full])).toMatchObject({ code: 1, stderr: `storebridge init: ${full} exists and is not empty: choose a new folder\n` });
    const bad = join(work, 'bad.json');
    writeFileSync(bad, '{"version": 1}');
    expect(await runCli(['init', join(work, 'y'), '--map', bad])).toMatchObject({ code: 1, stderr: `storebridge init: ${bad}: map products, orders or both\n` });
    expect(existsSync(join(work, 'y'))).toBe(false);
  });
});

/** `npm ARGS` in `dir`, as a user runs it (npm's cache first; better-sqlite3 from the local prebuild). */
async function npm(dir: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout } = await exec('npm', args, { cwd: dir, timeout: 240_000, env: { ...process.env, NODE_OPTIONS: '', npm_config_better_sqlite3_local_prebuilds: localSqlitePrebuild(join(work, 'prebuilds')), ...env } });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm ${args.join(' ')} failed in ${dir}:\n${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`);
  }
}

const INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund'];

describe('npm install, then npm test, in the folder', () => {
  test('an SQLite app: its tests pass, npm start serves, storebridge check passes', async () => {
    const dir = join(work, 'sqlite-app');
    const r = await runCli(['init', dir]);
    expect(r.code).toBe(0);
    const tarball = readdirSync(join(dir, 'vendor'))[0];
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies.storebridge).toBe(`file:vendor/${tarball}`);
    await npm(dir, INSTALL);
    const out = await npm(dir, ['test']);
    // Every conformance test and the endpoint checks' test (the count follows the suite as it grows).
    expect(out).toMatch(new RegExp(`\\n# pass ${ADAPTER_CONFORMANCE_TESTS.length + 1}\\n# fail 0\\n`));
    writeFileSync(join(dir, 'store.key'), 'init-app-key-7d3e\n');
    writeFileSync(join(dir, '.env'), readFileSync(join(dir, '.env.example'), 'utf8').replace('PORT=8080', 'PORT=0'));
    const app = spawn(process.execPath, ['server.js'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        app.stdout!.on('data', (d: Buffer) => {
          text += d;
          const m = /listening on (http:\/\/\S+)/.exec(text);
          if (m) resolve(m[1]);
        });
        app.on('exit', (code) => reject(new Error(`the app exited with ${code}`)));
      });
      const check = await runCli(['check', url, '--key-file', join(dir, 'store.key')]);
      expect(check.stdout).toMatch(/\n\d+ checks, 0 failed\n$/);
      expect(check.code).toBe(0);
      expect(existsSync(join(dir, 'data', 'store.db'))).toBe(true);
    } finally {
      app.kill('SIGTERM');
    }
  }, 300_000);
});

describeDatabase('postgres', 'npm install, then npm test, in an app over mapped PostgreSQL tables', () => {
  const prefix = uniquePrefix();
  const tables = { products: `${prefix}products`, orders: `${prefix}orders` };
  const { db } = connectKysely(DATABASE_URLS.postgres, { poolSize: 1 });
  afterAll(async () => {
    for (const t of Object.values(tables)) await sql`drop table if exists ${sql.table(t)}`.execute(db);
    await db.destroy();
  });

  test('map infer, init --map, npm install, npm test', async () => {
    await createPlainShop(db, 'postgres', tables);
    const inferred = await runCli(['map', 'infer', '--adapter', DATABASE_URLS.postgres, '--products-table', tables.products, '--orders-table', tables.orders]);
    const map = join(work, 'pg-map.json');
    writeFileSync(map, inferred.stdout);
    const dir = join(work, 'pg-app');
    expect((await runCli(['init', dir, '--adapter', 'postgres', '--map', map])).code).toBe(0);
    await npm(dir, INSTALL);
    const out = await npm(dir, ['test'], { DATABASE_URL: DATABASE_URLS.postgres });
    expect(out).toMatch(/\n# pass 1\n# fail 0\n/);
  }, 300_000);
});
