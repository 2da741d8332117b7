/**
 * PostgreSQL and MariaDB specifics: migrations from empty, re-run and raced; index plans for
 * keyset seeks; concurrent upserts of one _id from several connections and several pools.
 */
import { CompiledQuery, sql } from 'kysely';
import { createSqlAdapter, migrateSqlSchema, type SqlAdapter } from '../../adapters/sql';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { ListOptions } from '../../lib/adapter';
import { DATABASE_URLS, describeDatabase, dropAndClose, sharedDatabase, uniquePrefix, type ServerKind } from './sql-databases';

const MIGRATIONS = ['0001-items-and-counts', '0002-unique-product-sku', '0003-order-orderid-column', '0004-unique-order-orderid', '0005-idempotency-keys'];

const live = () => new AbortController().signal;

async function seedRaw(adapter: SqlAdapter, n: number): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) => {
    const doc = { _id: `p${String(i).padStart(6, '0')}`, last_updated: 1000 + Math.floor(i / 4) };
    return { _id: doc._id, last_updated: doc.last_updated, doc: JSON.stringify(doc) };
  });
  for (let i = 0; i < rows.length; i += 500) await adapter.db.insertInto(adapter.tables.products).values(rows.slice(i, i + 500)).execute();
  await adapter.products.recount({ signal: live() });
}

async function explain(kind: ServerKind, adapter: SqlAdapter, options: Omit<ListOptions, 'signal'>): Promise<string> {
  const q = adapter.products.listQuery(options).compile();
  const r = await adapter.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]));
  return kind === 'postgres' ? r.rows.map((x) => x['QUERY PLAN']).join('\n') : JSON.stringify(r.rows);
}

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `SQL adapter on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}`, () => {
    const database = sharedDatabase(kind);
    afterAll(database.close);

    test('migrations run from empty, a re-run changes nothing, and racing migrators both succeed', async () => {
      const tablePrefix = uniquePrefix();
      const [a, b] = await Promise.all([createSqlAdapter({ db: database.db(), tablePrefix }), createSqlAdapter({ db: database.db(), tablePrefix })]);
      try {
        await a.orders.upsert({ _id: 'o1', status: 'paid' }, { lastUpdated: 'touch', now: 7, signal: live() });
        const again = await migrateSqlSchema(database.db(), kind, a.tables);
        expect(again.results).toEqual([]);
        const c = await createSqlAdapter({ db: database.db(), tablePrefix });
        expect(await c.orders.get('o1', { signal: live() })).toEqual({ _id: 'o1', status: 'paid', last_updated: 7 });
        expect(await c.orders.count({ signal: live() })).toBe(1);
        const ran = await database.db().selectFrom(a.tables.migrations).select('name').execute();
        expect(ran.map((r) => r.name)).toEqual(MIGRATIONS);
      } finally {
        await dropAndClose(a);
      }
    });

    test('keyset seeks are index range scans in both orders; offset pages are right', async () => {
      const a = await createSqlAdapter({ db: database.db(), tablePrefix: uniquePrefix() });
      try {
        await seedRaw(a, 4000);
        await sql`analyze ${kind === 'postgres' ? sql`` : sql`table `}${sql.table(a.tables.products)}`.execute(a.db);
        const table = a.tables.products;
        for (const sortorder of ['asc', 'desc'] as const) {
          const plan = await explain(kind, a, { sortorder, limit: 20, after: { last_updated: 1900, _id: 'p003600' } });
          if (kind === 'postgres') {
            expect(plan).toMatch(new RegExp(`Index Scan${sortorder === 'desc' ? ' Backward' : ''} using ${table}_key on ${table}`));
            expect(plan).toMatch(/Index Cond: \(ROW\(last_updated, _id\) [<>] ROW\(/);
            expect(plan).not.toMatch(/Seq Scan|Sort/);
          } else {
            const [row] = JSON.parse(plan) as Array<{ key: string; type: string; Extra?: string }>;
            expect(row).toMatchObject({ key: `${table}_key`, type: 'range' });
            expect(row.Extra ?? '').not.toMatch(/filesort/);
          }
        }
        if (kind === 'postgres') {
          // An offset page walks the index. (MariaDB's optimizer picks a table scan and a sort for
          // offsets that are deep relative to the table: offset paging is O(offset) either way.)
          const offsetPlan = await explain(kind, a, { sortorder: 'asc', limit: 20, offset: 100 });
          expect(offsetPlan).not.toMatch(/Sort Key|Seq Scan/);
        }
        const offsetPage = await a.products.list({ sortorder: 'asc', limit: 2, offset: 3000, signal: live() });
        expect(offsetPage.map((x) => x._id)).toEqual(['p003000', 'p003001']);
        const page = await a.products.list({ sortorder: 'desc', limit: 3, after: { last_updated: 1900, _id: 'p003600' }, signal: live() });
        expect(page.map((x) => x._id)).toEqual(['p003599', 'p003598', 'p003597']);
      } finally {
        await dropAndClose(a);
      }
    });

    test('concurrent upserts of one _id from two pools (several connections each): none lost, one row', async () => {
      const tablePrefix = uniquePrefix();
      const other = connectKysely(DATABASE_URLS[kind], { poolSize: 4 }).db;
      const a = await createSqlAdapter({ db: database.db(), tablePrefix });
      const b = await createSqlAdapter({ db: other, tablePrefix, destroyOnClose: true });
      try {
        const n = 12;
        const write = (adapter: SqlAdapter, who: string, i: number) =>
          adapter.orders.upsert({ _id: 'hot', feedback: `${who}${i}` }, { lastUpdated: 'touch', now: 500, signal: live() });
        const results = await Promise.all(Array.from({ length: n }, (_, i) => [write(a, 'a', i), write(b, 'b', i)]).flat());
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(results.map((r) => r.item.last_updated).sort((x, y) => x! - y!)).toEqual(Array.from({ length: 2 * n }, (_, i) => 500 + i));
        expect(await a.orders.count({ signal: live() })).toBe(1);
        expect((await b.orders.get('hot', { signal: live() }))?.last_updated).toBe(500 + 2 * n - 1);
        // Concurrent creates of many new ids from both pools are all counted exactly.
        await Promise.all(Array.from({ length: 20 }, (_, i) => [write(a, 'x', i), b.orders.upsert({ _id: `new${i}` }, { lastUpdated: 'keep', now: 0, signal: live() })]).flat());
        expect(await a.orders.count({ signal: live() })).toBe(21);
      } finally {
        await b.close();
        await dropAndClose(a);
      }
    });

    test('the server cancels statements longer than statementTimeoutMs', async () => {
      const a = await createSqlAdapter({ connection: DATABASE_URLS[kind], tablePrefix: uniquePrefix(), statementTimeoutMs: 200, poolSize: 1 });
      try {
        const slow = kind === 'postgres' ? sql`select pg_sleep(3)` : sql`select sleep(3)`;
        await expect(slow.execute(a.db)).rejects.toThrow(/statement timeout|max_statement_time|interrupted/i);
        expect(await a.products.count({ signal: live() })).toBe(0);
      } finally {
        await a.dropTables();
        await a.close();
      }
    });

    if (kind === 'postgres') {
      test('the schema option puts the tables in their own schema', async () => {
        const schema = uniquePrefix().slice(0, -1);
        const a = await createSqlAdapter({ db: database.db(), schema, tablePrefix: '' });
        try {
          await a.products.upsert({ _id: 'p', sku: 'S' }, { lastUpdated: 'keep', now: 0, signal: live() });
          const r = await sql<{ n: string }>`select count(*) as n from ${sql.id(schema, 'products')}`.execute(database.db());
          expect(Number(r.rows[0].n)).toBe(1);
          expect((await a.productBySku('S', { signal: live() }))?._id).toBe('p');
        } finally {
          await sql`drop schema ${sql.id(schema)} cascade`.execute(database.db());
          await a.close();
        }
      });
    }
  });
}
