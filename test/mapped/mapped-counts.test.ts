/**
 * `storebridge map counts` on SQLite, PostgreSQL and MariaDB, through the real CLI: the printed
 * statements run as printed in the database's own way (a multi-statement script), `--apply` runs
 * them, a second run changes nothing, and the adapter then answers `itemsTotal` from the kept
 * count: exact after the shop's own inserts and deletes behind its back (with a count cache of an
 * hour, so no `count(*)` could have answered) and after its own writes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { createMappedAdapter } from '../../adapters/mapped';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from '../adapters/sql-databases';
import { runCli } from '../cli/cli-process';
import { createPlainShop } from './mapped-fixtures';

const live = () => AbortSignal.timeout(10_000);

/** Runs a multi-statement script the way the database's own client would. */
async function runScript(kind: SqlKind, spec: string, script: string): Promise<void> {
  if (kind === 'sqlite') {
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Database(spec.slice('sqlite:'.length));
    db.exec(script);
    db.close();
  } else if (kind === 'postgres') {
    const { Client } = require('pg') as typeof import('pg');
    const client = new Client({ connectionString: spec });
    await client.connect();
    await client.query(script);
    await client.end();
  } else {
    const mysql = require('mysql2/promise') as typeof import('mysql2/promise');
    const conn = await mysql.createConnection({ uri: spec, multipleStatements: true });
    await conn.query(script);
    await conn.end();
  }
}

function countsSuite(kind: SqlKind, spec: () => string, open: () => Kysely<any>): void {
  const prefix = uniquePrefix();
  const tables = { products: `${prefix}products`, orders: `${prefix}orders` };
  let dir: string;
  let mapFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-counts-'));
    mapFile = join(dir, 'map.json');
    await createPlainShop(open(), kind, tables, { products: 30, orders: 7 });
    const inferred = await runCli(['map', 'infer', '--adapter', spec(), '--products-table', tables.products, '--orders-table', tables.orders]);
    const map = JSON.parse(inferred.stdout);
    map.orders.writes = { create: ['status', 'total', 'currency'], update: ['status'] };
    writeFileSync(mapFile, JSON.stringify(map));
  });

  afterAll(async () => {
    const db = open();
    for (const t of [tables.products, tables.orders]) await sql`drop table if exists ${sql.table(t)}`.execute(db);
    await sql`delete from storebridge_row_counts where table_name in (${tables.products}, ${tables.orders})`.execute(db).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  test('printed, run as printed or with --apply, then kept exact behind the adapter\'s back', async () => {
    const printed = await runCli(['map', 'counts', '--adapter', spec(), '--map', mapFile]);
    expect(printed.code).toBe(0);
    const script = printed.stdout.split(`-- ${tables.orders}\n`)[0].replace(`-- ${tables.products}\n`, '');
    expect(script).toMatch(/storebridge_row_counts/);
    await runScript(kind, spec(), script);
    const applied = await runCli(['map', 'counts', '--adapter', spec(), '--map', mapFile, '--apply']);
    expect({ code: applied.code, stdout: applied.stdout }).toEqual({ code: 0, stdout: `-- ${tables.products}: its count is kept already\n-- ${tables.orders}: its count is kept from now on\n` });

    const adapter = await createMappedAdapter({ connection: spec(), map: mapFile, countCacheMs: 3_600_000 });
    try {
      expect(await adapter.products.count({ signal: live() })).toBe(30);
      expect(await adapter.orders.count({ signal: live() })).toBe(7);
      const db = open();
      // The shop's own code, behind the adapter's back.
      await db.insertInto(tables.products).values({ sku: 'X-1', name: 'Extra', price: '1.00', stock: 1, updated_at: kind === 'sqlite' ? '2024-01-15T10:00:00.000Z' : '2024-01-15 10:00:00' }).execute();
      expect(await adapter.products.count({ signal: live() })).toBe(31);
      await sql`delete from ${sql.table(tables.products)} where sku in ('SKU-0', 'SKU-1', 'X-1')`.execute(db);
      expect(await adapter.products.count({ signal: live() })).toBe(28);
      // The adapter's own create.
      const created = await adapter.orders.upsert({ _id: (await adapter.newId('orders', {}, { signal: live() }))!, status: 'paid', total: { amount: 5, currency: 'EUR' } }, { lastUpdated: 'touch', now: Date.UTC(2024, 1, 1), signal: live() });
      expect(created.created).toBe(true);
      expect(await adapter.orders.count({ signal: live() })).toBe(8);
    } finally {
      await adapter.close();
    }
  });
}

describe('map counts on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-counts-sqlite-'));
  const spec = `sqlite:${join(dir, 'shop.db')}`;
  let db: Kysely<any> | undefined;
  countsSuite('sqlite', () => spec, () => (db ??= connectKysely(spec).db));
  afterAll(async () => {
    await db?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
});

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `map counts on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}`, () => {
    let db: Kysely<any> | undefined;
    countsSuite(kind, () => DATABASE_URLS[kind], () => (db ??= connectKysely(DATABASE_URLS[kind], { poolSize: 2 }).db));
    afterAll(async () => db?.destroy());
  });
}
