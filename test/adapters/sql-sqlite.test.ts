/**
 * SQLite specifics: migrations from empty and re-run on a file, index plans for keyset seeks at
 * depth, the maintained count, concurrent upserts from several processes on one file, and lazy
 * loading of Kysely and the drivers.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CompiledQuery } from 'kysely';
import { createSqlAdapter, migrateSqlSchema, openSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import type { ListOptions } from '../../lib/adapter';

const MIGRATIONS = ['0001-items-and-counts', '0002-unique-product-sku', '0003-order-orderid-column', '0004-unique-order-orderid', '0005-idempotency-keys'];

const live = () => new AbortController().signal;
const ROOT = resolve(__dirname, '../..');
const DIST_SQL = join(ROOT, 'dist/adapters/sql/index.js');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'storebridge-sqlite-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function seedRaw(adapter: SqlAdapter, n: number, ties = 4): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) => {
    const doc = { _id: `p${String(i).padStart(6, '0')}`, last_updated: 1000 + Math.floor(i / ties), sku: `S${i}` };
    return { _id: doc._id, last_updated: doc.last_updated, sku: doc.sku, doc: JSON.stringify(doc) };
  });
  for (let i = 0; i < rows.length; i += 200) await adapter.db.insertInto(adapter.tables.products).values(rows.slice(i, i + 200)).execute();
  await adapter.products.recount({ signal: live() });
}

async function plan(adapter: SqlAdapter, options: Omit<ListOptions, 'signal'>): Promise<string> {
  const q = adapter.products.listQuery(options).compile();
  const r = await adapter.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]));
  return r.rows.map((x) => x.detail).join('\n');
}

describe('SQL adapter on SQLite', () => {
  test('migrations run from empty, and a re-run keeps the data and changes nothing', async () => {
    const file = join(dir, 'nested/dir/store.db');
    const a = await createSqlAdapter({ connection: `sqlite:${file}` });
    expect(existsSync(file)).toBe(true);
    const tables = await a.db.selectFrom('sqlite_master').select(['type', 'name']).orderBy('name').execute();
    expect(tables.map((t) => `${t.type}:${t.name}`)).toEqual(
      expect.arrayContaining([
        'table:storebridge_products',
        'table:storebridge_orders',
        'table:storebridge_counts',
        'table:storebridge_migrations',
        'index:storebridge_products_key',
        'index:storebridge_products_sku',
        'index:storebridge_orders_key',
      ]),
    );
    await a.orders.upsert({ _id: 'o1', status: 'paid' }, { lastUpdated: 'touch', now: 5, signal: live() });
    await a.close();

    const b = await createSqlAdapter({ connection: `sqlite:${file}` });
    expect(await b.orders.count({ signal: live() })).toBe(1);
    expect(await b.orders.get('o1', { signal: live() })).toEqual({ _id: 'o1', status: 'paid', last_updated: 5 });
    const again = await migrateSqlSchema(b.db, 'sqlite', b.tables);
    expect(again.results).toEqual([]);
    const ran = await b.db.selectFrom('storebridge_migrations').select('name').execute();
    expect(ran.map((r) => r.name)).toEqual(MIGRATIONS);
    await b.close();
  });

  test('keyset seeks use the (last_updated, _id) index at any depth, in both orders', async () => {
    const a = await createSqlAdapter({ connection: 'sqlite::memory:', tablePrefix: 'plan_' });
    await seedRaw(a, 5000);
    await a.db.executeQuery(CompiledQuery.raw('analyze'));
    for (const depth of [0, 2500, 4990]) {
      const key = { last_updated: 1000 + Math.floor(depth / 4), _id: `p${String(depth).padStart(6, '0')}` };
      for (const sortorder of ['asc', 'desc'] as const) {
        const p = await plan(a, { sortorder, limit: 20, after: key });
        expect(p).toMatch(/SEARCH plan_products USING (COVERING )?INDEX plan_products_key \(\(last_updated,_id\)[<>]\(\?,\?\)\)/);
        expect(p).not.toMatch(/TEMP B-TREE|SCAN/);
      }
    }
    // Offset pages walk the index in order (no sort), which is O(offset) by nature.
    expect(await plan(a, { sortorder: 'desc', limit: 20, offset: 4000 })).toMatch(/SCAN plan_products USING INDEX plan_products_key/);
    expect(await plan(a, { sortorder: 'desc', limit: 20, offset: 4000 })).not.toMatch(/TEMP B-TREE/);
    // And the seek returns the right rows at depth.
    const page = await a.products.list({ sortorder: 'asc', limit: 3, after: { last_updated: 1000 + Math.floor(4990 / 4), _id: 'p004990' }, signal: live() });
    expect(page.map((x) => x._id)).toEqual(['p004991', 'p004992', 'p004993']);
    expect(await a.products.count({ signal: live() })).toBe(5000);
    await a.close();
  });

  test('a new file gets 16 KiB pages; an existing file keeps its page size and its data', async () => {
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const pageSize = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return db.pragma('page_size', { simple: true });
      } finally {
        db.close();
      }
    };
    const fresh = join(dir, 'fresh.db');
    const a = await openSqlAdapter(`sqlite:${fresh}`);
    await a.products.upsert({ _id: 'p1', sku: 'S1' }, { lastUpdated: 'touch', now: 5, signal: live() });
    await a.close();
    expect(pageSize(fresh)).toBe(16_384);

    const old = join(dir, 'old.db');
    const legacy = new Database(old);
    legacy.pragma('page_size = 4096');
    legacy.exec('create table keep (x integer)');
    legacy.close();
    const b = await openSqlAdapter(`sqlite:${old}`);
    await b.products.upsert({ _id: 'p1', sku: 'S1' }, { lastUpdated: 'touch', now: 5, signal: live() });
    expect((await b.products.get('p1', { signal: live() }))?.sku).toBe('S1');
    await b.close();
    expect(pageSize(old)).toBe(4096);
  });

  test('the count is a maintained row, not count(*): it follows inserts only', async () => {
    const a = await createSqlAdapter({ connection: 'sqlite::memory:' });
    const opts = { lastUpdated: 'keep' as const, now: 0, signal: live() };
    await a.products.upsertMany(Array.from({ length: 30 }, (_, i) => ({ _id: `p${i}`, last_updated: i })), opts);
    await a.products.upsertMany(Array.from({ length: 30 }, (_, i) => ({ _id: `p${i}`, last_updated: i + 1 })), opts);
    const row = await a.db.selectFrom('storebridge_counts').select(['entity', 'n']).orderBy('entity').execute();
    expect(row).toEqual([
      { entity: 'orders', n: 0 },
      { entity: 'products', n: 30 },
    ]);
    expect(await a.products.count({ signal: live() })).toBe(30);
    await a.close();
  });

  test('concurrent upserts of one _id from several processes on one file: none lost, one row', async () => {
    if (!existsSync(DIST_SQL)) throw new Error('build first (npm run build): this test runs the compiled adapter in child processes');
    const file = join(dir, 'shared.db');
    const setup = await createSqlAdapter({ connection: `sqlite:${file}` });
    await setup.close();
    const writers = 3;
    const each = 25;
    const script = `
      const { openSqlAdapter } = require(${JSON.stringify(DIST_SQL)});
      (async () => {
        const a = await openSqlAdapter(process.argv[1]);
        const stamps = [];
        for (let i = 0; i < ${each}; i++) {
          const r = await a.orders.upsert({ _id: 'hot', feedback: process.argv[2] + '-' + i }, { lastUpdated: 'touch', now: 1000, signal: new AbortController().signal });
          stamps.push(r.item.last_updated);
        }
        await a.close();
        process.stdout.write(JSON.stringify(stamps));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const outputs = await Promise.all(
      Array.from({ length: writers }, (_, w) =>
        new Promise<number[]>((ok, fail) => {
          const child = spawn(process.execPath, ['-e', script, `sqlite:${file}`, `w${w}`], { stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          let err = '';
          child.stdout.on('data', (d) => (out += d));
          child.stderr.on('data', (d) => (err += d));
          child.on('close', (code) => (code === 0 ? ok(JSON.parse(out)) : fail(new Error(err))));
        }),
      ),
    );
    const all = outputs.flat().sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: writers * each }, (_, i) => 1000 + i));
    const a = await createSqlAdapter({ connection: `sqlite:${file}` });
    expect(await a.orders.count({ signal: live() })).toBe(1);
    expect((await a.orders.get('hot', { signal: live() }))?.last_updated).toBe(1000 + writers * each - 1);
    await a.close();
  });

  test('several processes opening one new file at once all migrate it successfully, once', async () => {
    if (!existsSync(DIST_SQL)) throw new Error('build first (npm run build)');
    const file = join(dir, 'fresh.db');
    const script = `require(${JSON.stringify(DIST_SQL)}).openSqlAdapter(process.argv[1]).then((a) => a.close(), (e) => { console.error(e.message); process.exit(1); });`;
    const codes = await Promise.all(
      Array.from({ length: 4 }, () => new Promise<number | null>((ok) => spawn(process.execPath, ['-e', script, `sqlite:${file}`], { stdio: 'inherit' }).on('close', ok))),
    );
    expect(codes).toEqual([0, 0, 0, 0]);
    const a = await createSqlAdapter({ connection: `sqlite:${file}` });
    expect((await a.db.selectFrom('storebridge_migrations').select('name').execute()).map((r) => r.name)).toEqual(MIGRATIONS);
    expect(await a.products.count({ signal: live() })).toBe(0);
    await a.close();
  });

  test('Kysely and the drivers load only when a SQL adapter is opened', () => {
    if (!existsSync(DIST_SQL)) throw new Error('build first (npm run build)');
    const script = `
      const sql = require(${JSON.stringify(DIST_SQL)});
      const loaded = () => Object.keys(require.cache).filter((p) => /node_modules\\/(kysely|pg|mysql2|better-sqlite3)\\//.test(p)).map((p) => p.split('node_modules/')[1].split('/')[0]);
      const before = [...new Set(loaded())];
      sql.openSqlAdapter('sqlite::memory:').then(async (a) => { await a.close(); console.log(JSON.stringify({ before, after: [...new Set(loaded())].sort() })); });`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ before: [], after: ['better-sqlite3', 'kysely'] });
  });

  test('table prefixes isolate adapters on one database file', async () => {
    const file = join(dir, 'two.db');
    const a = await createSqlAdapter({ connection: `sqlite:${file}`, tablePrefix: 'one_' });
    const b = await createSqlAdapter({ connection: `sqlite:${file}`, tablePrefix: 'two_' });
    await a.products.upsert({ _id: 'x' }, { lastUpdated: 'keep', now: 0, signal: live() });
    expect(await b.products.count({ signal: live() })).toBe(0);
    expect(await b.products.get('x', { signal: live() })).toBeUndefined();
    await a.close();
    await b.close();
  });
});
