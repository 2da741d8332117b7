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

module.exports = { sqliteCatalog, postgresCatalog, postgresAvailable, clean, CACHE_DIR, PG_URL };
