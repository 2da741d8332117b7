'use strict';
/**
 * Fast seeding of the SQL adapter's tables with demo products: the adapter migrates the schema,
 * then rows go in with bulk inserts inside transactions (SQLite: one prepared statement, 20,000 rows
 * per transaction; PostgreSQL: multi-row INSERT … SELECT FROM unnest, 5,000 rows per statement),
 * and the maintained counts row is set once. Seeded tables are cached between runs (same row count
 * → reused); `node bench/run.js --clean` removes them.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const kit = require('./kit');

const CACHE_DIR = path.join(os.tmpdir(), 'storebridge-bench');
const PG_URL = process.env.STOREBRIDGE_BENCH_POSTGRES_URL || process.env.STOREBRIDGE_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';

function* productRows(n) {
  const { demoProduct } = kit.demo();
  for (let i = 0; i < n; i++) {
    const p = demoProduct(i);
    yield [p._id, p.last_updated, p.sku, JSON.stringify(p)];
  }
}

/** A SQLite file holding `n` demo products (cached). Returns its path. */
async function sqliteCatalog(n) {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const file = path.join(CACHE_DIR, `products-${n}.db`);
  const Database = require('better-sqlite3');
  if (fs.existsSync(file)) {
    const db = new Database(file, { readonly: true });
    try {
      const row = db.prepare(`select n from storebridge_counts where entity = 'products'`).get();
      if (row && Number(row.n) === n) return file;
    } catch {
      // not a complete seed: rebuilt below
    } finally {
      db.close();
    }
  }
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  const tmp = `${file}.seeding`;
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(tmp + suffix, { force: true });
  const adapter = await kit.sql().openSqlAdapter(`sqlite:${tmp}`);
  await adapter.close();
  const db = new Database(tmp);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  const insert = db.prepare('insert into storebridge_products (_id, last_updated, sku, doc) values (?, ?, ?, ?)');
  const batch = db.transaction((rows) => {
    for (const r of rows) insert.run(r);
  });
  let rows = [];
  for (const r of productRows(n)) {
    rows.push(r);
    if (rows.length === 20_000) {
      batch(rows);
      rows = [];
    }
  }
  batch(rows);
  db.prepare(`update storebridge_counts set n = ? where entity = 'products'`).run(n);
  db.pragma('journal_mode = WAL');
  db.close();
  fs.renameSync(tmp, file);
  return file;
}

/** PostgreSQL tables (prefix `sbbench_<n>_`) holding `n` demo products (cached). Returns the connection spec. */
async function postgresCatalog(n) {
  const prefix = `sbbench_${n}_`;
  const spec = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}tablePrefix=${prefix}`;
  const { Client } = require('pg');
  const adapter = await kit.sql().openSqlAdapter(spec);
  await adapter.close();
  const client = new Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query(`select n from ${prefix}counts where entity = 'products'`);
    const { rows: real } = await client.query(`select count(*)::int as c from ${prefix}products`);
    if (Number(rows[0].n) === n && real[0].c === n) return spec;
    await client.query(`truncate ${prefix}products`);
    let batch = [[], [], [], []];
    const flush = async () => {
      if (batch[0].length === 0) return;
      await client.query(
        `insert into ${prefix}products (_id, last_updated, sku, doc) select * from unnest($1::text[], $2::bigint[], $3::text[], $4::text[])`,
        batch,
      );
      batch = [[], [], [], []];
    };
    await client.query('begin');
    for (const r of productRows(n)) {
      for (let k = 0; k < 4; k++) batch[k].push(r[k]);
      if (batch[0].length === 5000) await flush();
    }
    await flush();
    await client.query(`update ${prefix}counts set n = $1 where entity = 'products'`, [n]);
    await client.query('commit');
    await client.query(`analyze ${prefix}products`);
    return spec;
  } finally {
    await client.end();
  }
}

/**
 * A shop's own products table, for the mapped adapter: integer ids, sku, name, price, stock and an
 * update time four rows per second (ISO text on SQLite, a microsecond `timestamp` on PostgreSQL),
 * with the paging index the adapter's start-up check advises. Cached like the catalogs.
 */
const SHOP_TABLE = 'shop_products';

function* shopRows(n) {
  const base = Date.UTC(2024, 0, 1);
  for (let i = 0; i < n; i++) yield [i + 1, `SKU-${i}`, `Product ${i}`, Math.round(i * 1.37) / 100 + 1, i % 50, base + Math.floor(i / 4) * 1000];
}

/** The mapping of the shop table (what `storebridge map infer` prints for it, without the notes). */
function shopMapping(table, type) {
  const def = { const: 'default' };
  return {
    version: 1,
    products: {
      table,
      id: 'id',
      lastUpdated: { column: 'updated_at', type },
      fields: { sku: 'sku', title: 'name', variations: { fromRow: { prices: { fromRow: { tag: def, currency: { const: 'USD' }, number: 'price' } }, availabilities: { fromRow: { tag: def, quantity: 'stock' } } } } },
    },
  };
}

/** A SQLite file holding the shop table with `n` rows (cached). Returns `{ spec, map }`. */
async function sqliteShop(n) {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const file = path.join(CACHE_DIR, `shop-${n}.db`);
  const result = { spec: `sqlite:${file}`, map: shopMapping(SHOP_TABLE, 'iso-text') };
  const Database = require('better-sqlite3');
  if (fs.existsSync(file)) {
    const db = new Database(file, { readonly: true });
    try {
      if (Number(db.prepare(`select max(id) as n from ${SHOP_TABLE}`).get().n) === n) return result;
    } catch {
      // rebuilt below
    } finally {
      db.close();
    }
  }
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.exec(`create table ${SHOP_TABLE} (id integer primary key, sku text not null, name text not null, price real, stock integer, updated_at text not null)`);
  const insert = db.prepare(`insert into ${SHOP_TABLE} values (?, ?, ?, ?, ?, ?)`);
  const batch = db.transaction((rows) => {
    for (const r of rows) insert.run(r);
  });
  let rows = [];
  for (const r of shopRows(n)) {
    rows.push([...r.slice(0, 5), new Date(r[5]).toISOString()]);
    if (rows.length === 20_000) {
      batch(rows);
      rows = [];
    }
  }
  batch(rows);
  db.exec(`create index ${SHOP_TABLE}_storebridge_page on ${SHOP_TABLE} (updated_at, cast(id as text))`);
  db.pragma('journal_mode = WAL');
  db.close();
  return result;
}

/** PostgreSQL's shop table `sbbench_shop_<n>` with `n` rows (cached). Returns `{ spec, map }`. */
async function postgresShop(n) {
  const table = `sbbench_shop_${n}`;
  const result = { spec: PG_URL, map: shopMapping(table, 'timestamp') };
  const { Client } = require('pg');
  const client = new Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const exists = await client.query(`select max(id) as n from ${table}`).then((r) => Number(r.rows[0].n), () => -1);
    if (exists === n) return result;
    await client.query(`drop table if exists ${table}`);
    await client.query(`create table ${table} (id integer primary key, sku text not null, name text not null, price numeric(10, 2), stock integer, updated_at timestamp not null)`);
    let batch = [[], [], [], [], [], []];
    const flush = async () => {
      if (batch[0].length === 0) return;
      await client.query(`insert into ${table} select * from unnest($1::int[], $2::text[], $3::text[], $4::numeric[], $5::int[], $6::timestamp[])`, batch);
      batch = [[], [], [], [], [], []];
    };
    for (const r of shopRows(n)) {
      const row = [...r.slice(0, 5), new Date(r[5]).toISOString().replace('Z', '')];
      for (let k = 0; k < 6; k++) batch[k].push(row[k]);
      if (batch[0].length === 5000) await flush();
    }
    await flush();
    await client.query(`create index ${table}_storebridge_page on ${table} (date_trunc('milliseconds', updated_at), (cast(id as text) collate "C"))`);
    await client.query(`analyze ${table}`);
    return result;
  } finally {
    await client.end();
  }
}

/** Whether PostgreSQL answers at the bench URL. */
async function postgresAvailable() {
  const { Client } = require('pg');
  const client = new Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/** Removes every cached seed (SQLite files and PostgreSQL tables). */
async function clean() {
  fs.rmSync(CACHE_DIR, { recursive: true, force: true });
  if (!(await postgresAvailable())) return;
  const { Client } = require('pg');
  const client = new Client({ connectionString: PG_URL });
  await client.connect();
  const { rows } = await client.query(`select tablename from pg_tables where tablename like 'sbbench\\_%'`);
  for (const r of rows) await client.query(`drop table if exists "${r.tablename}"`);
  await client.end();
}

module.exports = { sqliteCatalog, postgresCatalog, sqliteShop, postgresShop, postgresAvailable, clean, CACHE_DIR, PG_URL };
