/**
 * The key columns are declared to compare by bytes on every database, whatever its default: ids
 * list in code-point (UTF-8 byte) order and match exactly only then. The conformance suite's
 * id-order property checks the behaviour; this checks the declarations in each database's catalog,
 * which matters where the behaviour cannot show a mistake: the test PostgreSQL's database
 * collation is C.UTF-8 (code-point order already), so a column without `COLLATE "C"` would pass the
 * property here and fail on a server whose default is en_US.UTF-8. MariaDB's default collation is
 * utf8mb4_general_ci (case-insensitive, every astral character equal).
 */
import { sql } from 'kysely';
import { createSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import { describeDatabase, dropAndClose, isolatedAdapter, sharedDatabase } from './sql-databases';

type Column = { table_name: string; column_name: string; data_type: string; collation_name: string | null };

async function columns(adapter: SqlAdapter, query: ReturnType<typeof sql<Column>>): Promise<Record<string, Omit<Column, 'table_name' | 'column_name'>>> {
  const { rows } = await query.execute(adapter.db);
  const out: Record<string, Omit<Column, 'table_name' | 'column_name'>> = {};
  for (const r of rows) {
    const table = r.table_name.endsWith('products') ? 'products' : 'orders';
    out[`${table}.${r.column_name}`] = { data_type: String(r.data_type).toLowerCase(), collation_name: r.collation_name };
  }
  return out;
}

test('SQLite: key columns use the BINARY collation (memcmp) over a UTF-8 database', async () => {
  const adapter = await createSqlAdapter({ connection: 'sqlite::memory:' });
  try {
    const { rows } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'table' and name in (${adapter.tables.products}, ${adapter.tables.orders})`.execute(adapter.db);
    expect(rows).toHaveLength(2);
    for (const r of rows) expect({ table: r.name, collate: /collate/i.test(r.sql) }).toEqual({ table: r.name, collate: false });
    const { rows: enc } = await sql<{ encoding: string }>`pragma encoding`.execute(adapter.db);
    expect(enc[0].encoding).toBe('UTF-8');
  } finally {
    await adapter.close();
  }
});

describeDatabase('postgres', 'PostgreSQL: key columns', () => {
  const database = sharedDatabase('postgres');
  afterAll(database.close);
  test('_id and sku are text COLLATE "C" (byte order whatever the database default)', async () => {
    const adapter = await isolatedAdapter(database.db());
    try {
      const found = await columns(
        adapter,
        sql<Column>`select table_name, column_name, data_type, collation_name from information_schema.columns
          where table_schema = current_schema() and table_name in (${adapter.tables.products}, ${adapter.tables.orders}) and column_name in ('_id', 'sku')`,
      );
      const c = { data_type: 'text', collation_name: 'C' };
      expect(found).toEqual({ 'products._id': c, 'products.sku': c, 'orders._id': c });
    } finally {
      await dropAndClose(adapter);
    }
  });
});

describeDatabase('mysql', 'MariaDB: key columns', () => {
  const database = sharedDatabase('mysql');
  afterAll(database.close);
  test('_id and sku are VARBINARY (bytes, no padding, no case folding); doc is utf8mb4_bin, whatever the database default', async () => {
    const adapter = await isolatedAdapter(database.db());
    try {
      const { rows: defaults } = await sql<{ co: string }>`select @@collation_database as co`.execute(adapter.db);
      const found = await columns(
        adapter,
        sql<Column>`select table_name as table_name, column_name as column_name, data_type as data_type, collation_name as collation_name from information_schema.columns
          where table_schema = database() and table_name in (${adapter.tables.products}, ${adapter.tables.orders}) and column_name in ('_id', 'sku', 'doc')`,
      );
      const binary = { data_type: 'varbinary', collation_name: null };
      const doc = { data_type: 'longtext', collation_name: 'utf8mb4_bin' };
      expect(found).toEqual({ 'products._id': binary, 'products.sku': binary, 'products.doc': doc, 'orders._id': binary, 'orders.doc': doc });
      // The reason the declarations matter: this server's default is not binary.
      expect(defaults[0].co).not.toMatch(/_bin$/);
    } finally {
      await dropAndClose(adapter);
    }
  });
});
