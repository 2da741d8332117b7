/**
 * The root cause of a storage failure reaches the log, and the store answers a clear 500 without
 * internals (issue 20, E): a full database (SQLite's SQLITE_FULL, from `max_page_count`; the real
 * full disk is in test/faults/disk-full.test.ts), a read-only one, a lock held too long, on SQLite,
 * PostgreSQL and MariaDB. Before, SQLite's own rollback after SQLITE_FULL made Kysely's rollback
 * fail with "cannot rollback - no transaction is active", and that was all the log said.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import { Pool } from 'pg';
import { createSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import { storageFailureOf } from '../../adapters/sql/sql-failures';
import { demoCatalog } from '../../lib/demo';
import { StorageError, type StorageFailure } from '../../lib/errors';
import { messageChain, type Logger } from '../../lib/logger';
import { createStoreListener } from '../../lib/server';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from './sql-databases';

const live = () => new AbortController().signal;
const KEY = 'storage-failure-key';

/** The store over `adapter` on loopback, with a logger that keeps what it is given. */
async function storeOver(adapter: SqlAdapter): Promise<{ base: string; logged: Array<Record<string, unknown>>; close(): Promise<void> }> {
  const logged: Array<Record<string, unknown>> = [];
  const logger: Logger = { info: () => undefined, warn: () => undefined, error: (obj) => void logged.push(obj as Record<string, unknown>) };
  const server: Server = createServer(createStoreListener({ adapter, svcKeys: [KEY], rateLimit: false, logger }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    logged,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Writes a new product through the store; its answer. */
async function write(base: string, id: string): Promise<{ status: number; body: unknown }> {
  const product = { ...demoCatalog(1).products[0], _id: id, sku: `SKU-${id}`, description: 'x'.repeat(20_000) };
  const res = await fetch(`${base}/products?jobid=1&id=${id}`, { method: 'POST', headers: { SvcKey: KEY, 'content-type': 'application/json' }, body: JSON.stringify(product) });
  return { status: res.status, body: await res.json() };
}

/** The rules of a refused write: 500 naming the failure, no internals; the log with the driver's words. */
function expectStorageFailure(answer: { status: number; body: unknown }, logged: Array<Record<string, unknown>>, failure: StorageFailure, words: string, driver: RegExp): void {
  expect(answer).toEqual({ status: 500, body: { error: `the store could not complete the request: ${words}; its log has the details` } });
  expect(logged.length).toBeGreaterThan(0);
  const last = logged[logged.length - 1];
  expect(last).toMatchObject({ operation: 'writeProduct', code: 'STORAGE_FAILED', failure });
  expect(last.err).toBeInstanceOf(StorageError);
  expect(messageChain(last.err)).toMatch(driver);
  expect(messageChain(last.err)).not.toMatch(/cannot rollback|no transaction is active/);
}

describe('storage failures on SQLite', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'storebridge-storage-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** An adapter over a better-sqlite3 handle the test can reach (for its pragmas). */
  async function sqlite(file: string, options: { busyTimeoutMs?: number } = {}): Promise<{ adapter: SqlAdapter; database: Database.Database }> {
    const database = new Database(file);
    database.pragma('journal_mode = WAL');
    database.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    const adapter = await createSqlAdapter({ dialect: new SqliteDialect({ database }), maxWriteAttempts: 2 });
    return { adapter, database };
  }

  test('a full database (SQLITE_FULL): 500 "the database storage is full", the log says SQLITE_FULL, reads go on, writes work again once there is room', async () => {
    const { adapter, database } = await sqlite(join(dir, 'full.db'));
    const store = await storeOver(adapter);
    try {
      expect((await write(store.base, 'fits')).status).toBe(200);
      // No page more than the file has now: the next row that needs a page does not fit.
      database.pragma(`max_page_count = ${database.pragma('page_count', { simple: true })}`);
      let answer = { status: 200, body: {} as unknown };
      for (let i = 0; i < 50 && answer.status === 200; i++) answer = await write(store.base, `more-${i}`);
      expectStorageFailure(answer, store.logged, 'full', 'the database storage is full', /SQLITE_FULL/);
      const read = await fetch(`${store.base}/products/fits?jobid=1`, { headers: { SvcKey: KEY } });
      expect(read.status).toBe(200);
      database.pragma('max_page_count = 1073741823');
      expect((await write(store.base, 'after')).status).toBe(200);
    } finally {
      await store.close();
      await adapter.close();
    }
  });

  test('a read-only database (SQLITE_READONLY): 500 "the database is read-only"', async () => {
    const { adapter, database } = await sqlite(join(dir, 'ro.db'));
    const store = await storeOver(adapter);
    try {
      database.pragma('query_only = 1');
      expectStorageFailure(await write(store.base, 'ro'), store.logged, 'read-only', 'the database is read-only', /SQLITE_READONLY|readonly/);
    } finally {
      await store.close();
      await adapter.close();
    }
  });

  test('a lock held by another process past busy_timeout (SQLITE_BUSY): 500 "the database is locked by another writer"', async () => {
    const file = join(dir, 'locked.db');
    const { adapter } = await sqlite(file, { busyTimeoutMs: 50 });
    const store = await storeOver(adapter);
    const other = new Database(file);
    try {
      other.exec('begin immediate');
      expectStorageFailure(await write(store.base, 'locked'), store.logged, 'locked', 'the database is locked by another writer', /SQLITE_BUSY/);
    } finally {
      other.exec('rollback');
      other.close();
      await store.close();
      await adapter.close();
    }
  });
});

describeDatabase('postgres', 'storage failures on PostgreSQL', () => {
  test('read-only (25006) and a lock not granted in time (55P03): 500 naming each, the log with the SQLSTATE words', async () => {
    const tablePrefix = uniquePrefix();
    const owner = await createSqlAdapter({ connection: DATABASE_URLS.postgres, tablePrefix, poolSize: 2 });
    const pool = (options: string) => new Pool({ connectionString: DATABASE_URLS.postgres, max: 2, options });
    const readOnly = await createSqlAdapter({ db: new Kysely<any>({ dialect: new PostgresDialect({ pool: pool('-c default_transaction_read_only=on') }) }), tablePrefix, migrate: false, destroyOnClose: true });
    const impatient = await createSqlAdapter({ db: new Kysely<any>({ dialect: new PostgresDialect({ pool: pool('-c lock_timeout=200') }) }), tablePrefix, migrate: false, destroyOnClose: true });
    const a = await storeOver(readOnly);
    const b = await storeOver(impatient);
    try {
      expectStorageFailure(await write(a.base, 'ro'), a.logged, 'read-only', 'the database is read-only', /read-only transaction/);
      await owner.db.transaction().execute(async (trx) => {
        await sql`lock table ${sql.table(owner.tables.counts)} in access exclusive mode`.execute(trx);
        expectStorageFailure(await write(b.base, 'locked'), b.logged, 'locked', 'the database is locked by another writer', /lock timeout/);
      });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await Promise.all([readOnly.close(), impatient.close()]);
      await owner.dropTables();
      await owner.close();
    }
  });
});

describeDatabase('mysql', 'storage failures on MariaDB', () => {
  test('read-only (1792) and a lock wait timeout (1205): 500 naming each, the log with the server words', async () => {
    const tablePrefix = uniquePrefix();
    const owner = await createSqlAdapter({ connection: DATABASE_URLS.mysql, tablePrefix, poolSize: 2 });
    const pool = (statement: string) => {
      const p = createPool({ uri: DATABASE_URLS.mysql, connectionLimit: 2 });
      p.on('connection', (c) => c.query(statement));
      return new Kysely<any>({ dialect: new MysqlDialect({ pool: p as any }) });
    };
    const readOnly = await createSqlAdapter({ db: pool('set session transaction read only'), tablePrefix, migrate: false, destroyOnClose: true });
    const impatient = await createSqlAdapter({ db: pool('set session innodb_lock_wait_timeout = 1'), tablePrefix, migrate: false, destroyOnClose: true });
    const a = await storeOver(readOnly);
    const b = await storeOver(impatient);
    try {
      expectStorageFailure(await write(a.base, 'ro'), a.logged, 'read-only', 'the database is read-only', /READ ONLY transaction/i);
      await owner.db.transaction().execute(async (trx) => {
        await trx.selectFrom(owner.tables.counts).selectAll().forUpdate().execute();
        expectStorageFailure(await write(b.base, 'locked'), b.logged, 'locked', 'the database is locked by another writer', /Lock wait timeout/);
      });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await Promise.all([readOnly.close(), impatient.close()]);
      await owner.dropTables();
      await owner.close();
    }
  });
});

test('the classification of driver failures, per driver', () => {
  const e = (props: Record<string, unknown>, message = 'x') => Object.assign(new Error(message), props);
  const cases: Array<[Error, StorageFailure | undefined]> = [
    [e({ code: 'SQLITE_FULL' }), 'full'],
    [e({ code: 'SQLITE_IOERR_WRITE' }), 'io'],
    [e({ code: 'SQLITE_READONLY_DBMOVED' }), 'read-only'],
    [e({ code: 'SQLITE_BUSY_SNAPSHOT' }), 'locked'],
    [e({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }), undefined],
    [e({ code: '53100' }), 'full'], // PostgreSQL disk_full
    [e({ code: '25006' }), 'read-only'],
    [e({ code: '55P03' }), 'locked'],
    [e({ code: '57P01' }), 'unreachable'], // admin_shutdown
    [e({ code: '08006' }), 'unreachable'],
    [e({ code: '23505' }), undefined], // a unique violation is not a storage failure
    [e({ code: 'ER_RECORD_FILE_FULL', errno: 1114 }), 'full'],
    [e({ code: 'ER_ERROR_ON_WRITE', errno: 1026 }, 'Error writing file \'./ibtmp1\' (Errcode: 28 "No space left on device")'), 'full'],
    [e({ code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 }), 'locked'],
    [e({ code: 'ER_LOCK_DEADLOCK', errno: 1213 }), undefined], // retried by the adapter, not a storage failure
    [e({ code: 'PROTOCOL_CONNECTION_LOST' }), 'unreachable'],
    [e({ code: 'ENOSPC' }), 'full'],
    [e({ code: 'EROFS' }), 'read-only'],
    [e({ code: 'ECONNREFUSED' }), 'unreachable'],
    [e({}, 'Connection terminated unexpectedly'), 'unreachable'],
    [e({}, "Can't add new command when connection is in closed state"), 'unreachable'],
    [e({}, 'syntax error'), undefined],
  ];
  for (const [err, failure] of cases) expect({ err: `${(err as { code?: string }).code ?? ''} ${err.message}`, failure: storageFailureOf(err) }).toEqual({ err: `${(err as { code?: string }).code ?? ''} ${err.message}`, failure });
});
