/**
 * The unique `sku` and `orderid` indexes on a database written by an older version (issue 20 B):
 * the migration first reports duplicates clearly (which values, how many items, the statement that
 * fixes them) and changes nothing; after the fix the store opens, every document is intact and the
 * value names its newest item. Blank values held twice are cleared without a word (never keys).
 * On SQLite, PostgreSQL and MariaDB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import { createSqlAdapter, SqlDuplicateKeysError, type SqlAdapter } from '../../adapters/sql';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import { sqlMigrations, tableNames } from '../../adapters/sql/sql-migrations';
import { describeDatabase, sharedDatabase, uniquePrefix } from './sql-databases';

const live = () => new AbortController().signal;

/** Tables as version 0001 left them, holding what its check-then-insert let through under load. */
async function legacyStore(db: Kysely<any>, kind: SqlKind, prefix: string): Promise<void> {
  const names = tableNames(prefix, undefined);
  const first = sqlMigrations(kind, names)['0001-items-and-counts'];
  const migrated = await new Migrator({ db, provider: { getMigrations: async () => ({ '0001-items-and-counts': first }) }, migrationTableName: names.migrations, migrationLockTableName: names.migrationLock }).migrateToLatest();
  if (migrated.error) throw migrated.error;
  const product = (id: string, lu: number, sku: string) => ({ _id: id, last_updated: lu, sku, doc: JSON.stringify({ _id: id, last_updated: lu, sku, title: id }) });
  const order = (id: string, lu: number, orderid: string) => ({ _id: id, last_updated: lu, doc: JSON.stringify({ _id: id, last_updated: lu, orderid, status: 'paid' }) });
  await db.insertInto(names.products).values([product('r1', 1, 'RACE'), product('r2', 3, 'RACE'), product('r3', 2, 'RACE'), product('t1', 1, 'TWO'), product('t2', 1, 'TWO'), product('b1', 1, ''), product('b2', 1, ''), product('u1', 1, 'ONE')]).execute();
  await db.insertInto(names.orders).values([order('o1', 5, 'MKT-1'), order('o2', 6, 'MKT-1'), order('o3', 5, 'MKT-2'), order('o4', 5, '')]).execute();
  await sql`update ${sql.id(names.counts)} set n = case entity when 'products' then 8 else 4 end`.execute(db);
}

/** `open(prefix)`: the store's adapter on those tables, migrating unless told not to. */
function suite(kind: SqlKind, db: () => Kysely<any>, openOn: (tablePrefix: string, migrate?: boolean) => Promise<SqlAdapter>) {
  test('duplicates are reported (values, counts, the fix) and nothing changes; after the fix the store opens, documents intact, each value naming its newest item', async () => {
    const prefix = uniquePrefix();
    await legacyStore(db(), kind, prefix);
    const open = () => openOn(prefix);
    let adapter: SqlAdapter | undefined;
    try {
      const skus = await open().then(() => undefined, (e: unknown) => e);
      expect(skus).toBeInstanceOf(SqlDuplicateKeysError);
      const e = skus as SqlDuplicateKeysError;
      expect([e.code, e.column, e.duplicates]).toEqual(['SQL_DUPLICATE_KEYS', 'sku', [{ value: 'RACE', count: 3 }, { value: 'TWO', count: 2 }]]);
      expect(e.message).toMatch(/^cannot make sku unique in sbt_\w+_products: 2 values are held by more than one item: "RACE" \(3 items\), "TWO" \(2 items\)\. Nothing was changed\. /);
      expect(e.message).toContain(e.fix);
      const rows = await db().selectFrom(`${prefix}products`).select(['_id', 'sku']).orderBy('_id').execute();
      expect(rows.map((r) => String(r.sku))).toEqual(['', '', 'RACE', 'RACE', 'RACE', 'TWO', 'TWO', 'ONE']); // b1 b2 r1 r2 r3 t1 t2 u1: unchanged
      await sql.raw(e.fix).execute(db());

      // The products are fixed; now the orders' turn (the orderid column exists: the fix can run).
      const orders = (await open().then(() => undefined, (x: unknown) => x)) as SqlDuplicateKeysError;
      expect([orders.column, orders.duplicates]).toEqual(['orderid', [{ value: 'MKT-1', count: 2 }]]);
      await sql.raw(orders.fix).execute(db());

      adapter = await open();
      expect(await adapter.products.count({ signal: live() })).toBe(8);
      expect((await adapter.productBySku('RACE', { signal: live() }))?._id).toBe('r2');
      expect((await adapter.productBySku('TWO', { signal: live() }))?._id).toBe('t2');
      expect((await adapter.orderByOrderId('MKT-1', { signal: live() }))?._id).toBe('o2');
      expect((await adapter.orderByOrderId('MKT-2', { signal: live() }))?._id).toBe('o3');
      expect(await adapter.productBySku('', { signal: live() })).toBeUndefined();
      for (const id of ['r1', 'r3', 't1']) expect((await adapter.products.get(id, { signal: live() }))?.sku).toBeDefined();
      // From now on the database refuses a second holder, whoever checks first.
      await expect(adapter.products.upsert({ _id: 'r9', sku: 'RACE' }, { lastUpdated: 'touch', now: 10, signal: live() })).rejects.toMatchObject({ code: 'DUPLICATE_KEY', holder: 'r2' });
    } finally {
      const drop = adapter ?? (await openOn(prefix, false));
      await drop.dropTables();
      await drop.close();
    }
  });
}

describe('unique keys on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-unique-'));
  const file = join(dir, 'store.db');
  let db: Kysely<any> | undefined;
  afterAll(async () => {
    await db?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  suite('sqlite', () => (db ??= connectKysely(`sqlite:${file}`, {}).db), (tablePrefix, migrate) => createSqlAdapter({ connection: `sqlite:${file}`, tablePrefix, migrate }));
});

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `unique keys on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}`, () => {
    const shared = sharedDatabase(kind);
    afterAll(shared.close);
    suite(kind, shared.db, (tablePrefix, migrate) => createSqlAdapter({ db: shared.db(), tablePrefix, migrate }));
  });
}
