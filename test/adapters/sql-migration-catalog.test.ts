/**
 * A store's migrations ask the database's catalog about their own tables only (issue 22: a reverse
 * service keeps one table prefix per connection in one database, and Kysely's introspection of
 * every table made each new connection's first open O(tables), the fleet's O(N²)).
 *
 * Every query of a migration run is recorded (Kysely's `log`) on each database: none may name
 * another store's tables, and the run makes as many queries beside 6 other stores as beside 2.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, type LogEvent } from 'kysely';
import { createSqlAdapter, migrateSqlSchema } from '../../adapters/sql';
import { tableNames } from '../../adapters/sql/sql-migrations';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from './sql-databases';

/** The catalog of each database (SQLite's table list, PostgreSQL's system catalogs, the standard views). */
const CATALOG = /sqlite_master|pg_catalog|pg_attribute|pg_class|information_schema/i;

interface Recorded {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** A Kysely instance on `kind` that records every query it runs into `log`. */
function recordingDb(kind: SqlKind, sqliteFile: string, log: Recorded[]): Kysely<any> {
  const record = (event: LogEvent): void => {
    log.push({ sql: event.query.sql, parameters: event.query.parameters });
  };
  if (kind === 'sqlite') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Database = require('better-sqlite3');
    return new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(sqliteFile) }), log: record });
  }
  if (kind === 'postgres') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Pool } = require('pg');
    return new Kysely<any>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: DATABASE_URLS.postgres, max: 2 }) }), log: record });
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createPool } = require('mysql2');
  return new Kysely<any>({ dialect: new MysqlDialect({ pool: createPool({ uri: DATABASE_URLS.mysql, connectionLimit: 2 }) }), log: record });
}

function catalogSuite(kind: SqlKind): void {
  let dir: string;
  let db: Kysely<any>;
  const log: Recorded[] = [];
  const prefixes: string[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sb-catalog-'));
    db = recordingDb(kind, join(dir, 'db.sqlite'), log);
  });
  afterAll(async () => {
    for (const prefix of prefixes) {
      const adapter = await createSqlAdapter({ db, tablePrefix: prefix, migrate: false });
      await adapter.dropTables();
    }
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Opens `n` more stores on their own prefixes (their tables are what a migration must not read). */
  async function addStores(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const prefix = uniquePrefix();
      prefixes.push(prefix);
      await createSqlAdapter({ db, tablePrefix: prefix });
    }
  }

  /** The queries of one migration run of a new store on its own prefix. */
  async function migrationOfNewStore(): Promise<{ prefix: string; queries: Recorded[] }> {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    log.length = 0;
    const result = await migrateSqlSchema(db, kind, tableNames(prefix, undefined));
    expect(result.error).toBeUndefined();
    expect(result.results?.length).toBeGreaterThan(0);
    return { prefix, queries: [...log] };
  }

  test('a new store migrates asking the catalog about its own tables only', async () => {
    await addStores(2);
    const beside2 = await migrationOfNewStore();
    await addStores(4);
    const beside6 = await migrationOfNewStore();

    for (const { prefix, queries } of [beside2, beside6]) {
      const others = prefixes.filter((p) => p !== prefix);
      const text = queries.map((q) => `${q.sql} ${JSON.stringify(q.parameters)}`);
      expect(text.filter((t) => others.some((p) => t.includes(p)))).toEqual([]);
      // Kysely's introspection lists every table and its columns: every catalog read here is keyed by the store's own table names.
      const catalogReads = queries.filter((q) => CATALOG.test(q.sql.replace(/["`]/g, '')));
      expect(catalogReads.length).toBeGreaterThan(0);
      expect(catalogReads.filter((q) => !q.parameters.includes(`${prefix}migrations`))).toEqual([]);
    }
    // The same run beside more stores: as many queries, so the cost does not grow with them.
    expect(beside6.queries.length).toBe(beside2.queries.length);
  });

  test('a store opened again is up to date in one read, and a half-migrated one is finished', async () => {
    const { prefix } = await migrationOfNewStore();
    log.length = 0;
    const again = await migrateSqlSchema(db, kind, tableNames(prefix, undefined));
    expect(again.results).toEqual([]);
    expect(log).toHaveLength(1);

    // Without its last migration recorded (as if the run stopped there), the next open runs it.
    const names = tableNames(prefix, undefined);
    await db.deleteFrom(names.migrations).where('name', '=', '0005-idempotency-keys').execute();
    await db.schema.dropTable(names.idempotency).execute();
    const finished = await migrateSqlSchema(db, kind, names);
    expect(finished.results?.map((r) => [r.migrationName, r.status])).toEqual([['0005-idempotency-keys', 'Success']]);
    const adapter = await createSqlAdapter({ db, tablePrefix: prefix, migrate: false });
    await adapter.products.upsert({ _id: 'p1', sku: 'S1' }, { lastUpdated: 'touch', now: 1, signal: new AbortController().signal });
    expect(await adapter.products.count({ signal: new AbortController().signal })).toBe(1);
  });
}

describe('SQL migrations on SQLite', () => catalogSuite('sqlite'));
describeDatabase('postgres', 'SQL migrations on PostgreSQL', () => catalogSuite('postgres'));
describeDatabase('mysql', 'SQL migrations on MariaDB', () => catalogSuite('mysql'));
