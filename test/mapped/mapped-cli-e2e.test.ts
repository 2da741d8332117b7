/**
 * Issue 24's "done when", through the real CLI on SQLite, PostgreSQL and MariaDB: a shop's plain
 * `products` and `orders` tables (integer ids, an update time in the shop's own format), then
 * `storebridge map infer`, `storebridge serve --map` with the inferred file as printed, and
 * `storebridge check`: every must-level check passes. The start-up check names a missing column
 * in one line, and its index warning holds a statement that, once run, makes the warning go.
 * With writes added to the inferred file, issue 19's and 20 B's repros over two `serve` processes
 * on one database (as two replicas): the same order create (same `orderid`) repeated and raced
 * leaves one order, and 200 parallel creates of one SKU leave one product.
 * Tables have random names on the shared servers and are dropped afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from '../adapters/sql-databases';
import { BIN, ROOT, runCli } from '../cli/cli-process';
import { createPlainShop } from './mapped-fixtures';

const KEY = 'mapped-e2e-key-5d1c9a';

interface Serving {
  readonly child: ChildProcess;
  readonly url: string;
  readonly stderr: () => string;
}

/** `storebridge serve …` until it prints its URL (rejects with stderr when it exits first). */
function serve(args: string[]): Promise<Serving> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { cwd: ROOT, env: { ...process.env, STOREBRIDGE_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (m) resolve({ child, url: m[1], stderr: () => err });
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

async function stop(s: Serving): Promise<void> {
  const exited = new Promise((resolve) => s.child.on('exit', resolve));
  s.child.kill('SIGTERM');
  await exited;
}

/** `storebridge check URL --json`: the must-level checks that failed, and the checks by name. */
async function check(url: string): Promise<{ code: number | null; failed: string[]; detail: Record<string, string> }> {
  const r = await runCli(['check', url, '--json'], { STOREBRIDGE_KEY: KEY });
  const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as { checks: Array<{ name: string; ok: boolean; level: string; detail: string }> };
  return {
    code: r.code,
    failed: report.checks.filter((c) => !c.ok && c.level === 'must').map((c) => `${c.name}: ${c.detail}`),
    detail: Object.fromEntries(report.checks.map((c) => [c.name, c.detail])),
  };
}

/** A write webhook call (the key in the header), its status and JSON body. */
async function write(url: string, body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const r = await fetch(url, { method: 'POST', headers: { SvcKey: KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

/** Every `{column, review}` source of an inferred file (they are the guesses). */
function guesses(value: unknown, out: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null) return out;
  const v = value as Record<string, unknown>;
  if (typeof v.column === 'string') out.push(v);
  for (const child of Object.values(v)) guesses(child, out);
  return out;
}

function scenario(kind: SqlKind, spec: () => string, db: () => Kysely<any>): void {
  const prefix = uniquePrefix();
  const tables = { products: `${prefix}products`, orders: `${prefix}orders` };
  let dir: string;
  let mapFile: string;
  let map: Record<string, any>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-mapped-e2e-'));
    mapFile = join(dir, 'storebridge-map.json');
    await createPlainShop(db(), kind, tables);
  });

  afterAll(async () => {
    for (const t of [tables.products, tables.orders]) await sql`drop table if exists ${sql.table(t)}`.execute(db());
    rmSync(dir, { recursive: true, force: true });
  });

  test('map infer prints a mapping file, every guess marked for review, writes off', async () => {
    const r = await runCli(['map', 'infer', '--adapter', spec(), '--products-table', tables.products, '--orders-table', tables.orders]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    map = JSON.parse(r.stdout);
    writeFileSync(mapFile, r.stdout);
    expect(map.products.id.column).toBe('id');
    expect(map.products.lastUpdated).toMatchObject({ column: 'updated_at', type: kind === 'sqlite' ? 'iso-text' : 'timestamp' });
    expect(map.products.fields.title.column).toBe('name');
    expect(map.products.fields.variations.fromRow.prices.fromRow.number.column).toBe('price');
    expect(map.products.fields.variations.fromRow.availabilities.fromRow.quantity.column).toBe('stock');
    expect(map.orders.fields.total).toMatchObject({ amount: { column: 'total' }, currency: { column: 'currency' } });
    expect(map.orders.fields.buyer.email.column).toBe('email');
    const all = guesses(map);
    expect(all.length).toBeGreaterThanOrEqual(12);
    expect(all.filter((g) => typeof g.review !== 'string')).toEqual([]);
    expect(map.products.writes).toBeUndefined();
  });

  test('serve --map with the file as printed passes every must-level check', async () => {
    const s = await serve(['--adapter', spec(), '--map', mapFile]);
    try {
      const r = await check(s.url);
      expect(r.failed).toEqual([]);
      expect(r.code).toBe(0);
      expect(r.detail['products.paging-asc']).toMatch(/ 60 distinct items = itemsTotal/);
      expect(r.detail['orders.paging-desc']).toMatch(/ 15 distinct items = itemsTotal/);
      expect(r.detail['products.sort-order']).toBe('asc and desc follow (last_updated, _id)');
    } finally {
      await stop(s);
    }
    expect(s.stderr()).not.toContain(KEY);
  });

  test('the index warning names a statement; once it runs, the warning is gone and the checks still pass', async () => {
    const first = await serve(['--adapter', spec(), '--map', mapFile]);
    await stop(first);
    const warnings = first.stderr().trim().split('\n').filter((l) => l.includes('warning'));
    expect(warnings).toHaveLength(2);
    for (const [i, table] of [tables.products, tables.orders].entries()) {
      expect(warnings[i]).toMatch(new RegExp(`^storebridge serve: warning: ${table}: no index serves the paging order, .*; run: `));
      const advice = warnings[i].slice(warnings[i].indexOf('; run: ') + '; run: '.length);
      await sql.raw(advice).execute(db());
    }
    const again = await serve(['--adapter', spec(), '--map', mapFile]);
    try {
      expect((await check(again.url)).failed).toEqual([]);
    } finally {
      await stop(again);
    }
    expect(again.stderr()).not.toMatch(/warning/);
  });

  test('writes added: one order per orderid and one product per SKU over two serve processes, advice printed, check passes', async () => {
    const writable = join(dir, 'writable.json');
    const products = { update: ['sku', 'name', 'price', 'stock'], create: ['sku', 'name', 'price', 'stock'] };
    const orders = { update: ['status'], create: ['order_number', 'status', 'total', 'currency', 'email'] };
    expect(map.orders.fields.orderid.column).toBe('order_number');
    writeFileSync(writable, JSON.stringify({ ...map, products: { ...map.products, writes: products }, orders: { ...map.orders, writes: orders } }));
    const replicas = await Promise.all([0, 1].map(() => serve(['--adapter', spec(), '--map', writable, '--rate-limit', 'off'])));
    const url = (i: number) => replicas[i % 2].url;
    const rows = async (table: string, column: string, value: string) => Number((await sql<{ n: unknown }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} = ${value}`.execute(db())).rows[0].n);
    try {
      // Issue 19: a create sent again after a lost reply (no id, the same orderid), then raced.
      const order = (orderid: string) => ({ orderid, status: 'paid', total: { amount: 12.5, currency: 'EUR' }, buyer: { email: 'b@example.test' } });
      const first = await write(`${url(0)}/orders?jobid=7`, order('MKT-1'));
      const again = await write(`${url(1)}/orders?jobid=7`, order('MKT-1'));
      expect([first.status, again.status]).toEqual([200, 200]);
      expect(again.body.order).toEqual(first.body.order);
      const raced = await Promise.all(Array.from({ length: 20 }, (_, i) => write(`${url(i)}/orders?jobid=8`, order('MKT-2'))));
      expect(raced.map((r) => r.status)).toEqual(raced.map(() => 200));
      expect(new Set(raced.map((r) => r.body.order._id)).size).toBe(1);
      expect([await rows(tables.orders, 'order_number', 'MKT-1'), await rows(tables.orders, 'order_number', 'MKT-2')]).toEqual([1, 1]);
      // Issue 20 B: 200 parallel creates of one SKU, no id.
      const created = await Promise.all(Array.from({ length: 200 }, (_, i) => write(`${url(i)}/products?jobid=9`, { sku: 'RACE', title: 'r' })));
      expect(await rows(tables.products, 'sku', 'RACE')).toBe(1);
      const stored = created.filter((r) => r.status === 200);
      expect(stored.length).toBeGreaterThanOrEqual(1);
      // Two replicas may give two creates one new integer id (docs/mapping.md "Writes"): the second then writes that row.
      const id = stored[0].body.product._id as string;
      expect(stored.filter((r) => r.body.product._id !== id)).toEqual([]);
      const refused = created.filter((r) => r.status !== 200);
      expect(new Set(refused.map((r) => `${r.status} ${r.body.reasons?.[0]?.msg}`))).toEqual(new Set([`400 sku: "RACE" is already used by product "${id}"`]));
      const r = await check(url(0));
      expect(r.failed).toEqual([]);
    } finally {
      await Promise.all(replicas.map(stop));
    }
    for (const [table, column] of [[tables.products, 'sku'], [tables.orders, 'order_number']]) {
      expect(replicas[0].stderr()).toMatch(new RegExp(`warning: ${table}: no unique index on ${column}, so each write that takes an? (sku|orderid) locks it .*; run: create unique index `));
    }
  }, 120_000);

  test('a column the table lacks stops serve with one line naming it', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ ...map, products: { ...map.products, fields: { ...map.products.fields, title: 'nmae' } } }));
    const r = await runCli(['serve', '--port', '0', '--adapter', spec(), '--map', broken], { STOREBRIDGE_KEY: KEY });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^storebridge: the table "${tables.products}" has no column "nmae" \\(mapped as products\\.fields\\.title\\); its columns: id, sku, name, price, stock, updated_at\\n$`));
    const missing = join(dir, 'missing.json');
    writeFileSync(missing, JSON.stringify({ ...map, orders: { ...map.orders, table: `${prefix}no_such_table` } }));
    const m = await runCli(['serve', '--port', '0', '--adapter', spec(), '--map', missing], { STOREBRIDGE_KEY: KEY });
    expect({ code: m.code, stderr: m.stderr }).toEqual({ code: 1, stderr: `storebridge: the mapping names the table "${prefix}no_such_table", which this database does not have (or this user cannot see)\n` });
  });
}

describe('SQLite: map infer, serve --map, check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-mapped-sqlite-'));
  const file = join(dir, 'shop.db');
  let db: Kysely<any> | undefined;
  const open = () => (db ??= connectKysely(`sqlite:${file}`).db);
  scenario('sqlite', () => `sqlite:${file}`, open);
  afterAll(async () => {
    await db?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
});

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}: map infer, serve --map, check`, () => {
    let db: Kysely<any> | undefined;
    const open = () => (db ??= connectKysely(DATABASE_URLS[kind], { poolSize: 2 }).db);
    scenario(kind, () => DATABASE_URLS[kind], open);
    afterAll(async () => db?.destroy()); // after the scenario's own afterAll, which drops its tables
  });
}
