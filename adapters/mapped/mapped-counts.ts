/**
 * An exact row count of a shop's table kept by the database itself, so `itemsTotal` is one
 * primary-key read instead of a `count(*)`: a row in `storebridge_row_counts` per mapped table,
 * moved by an AFTER INSERT and an AFTER DELETE trigger on it. The shop's own code writes these
 * tables too, so only a trigger sees every insert and delete (the SQL adapter, which alone writes
 * its tables, keeps its count in its own transactions instead).
 *
 * Installing it is the owner's decision, like the paging index: `storebridge map counts` prints
 * the statements (or runs them with `--apply`); the adapter uses the count when it finds both the
 * row and the triggers. Each install is atomic: the count is taken while the table is locked
 * against writes, in the same transaction as the triggers' creation (MariaDB, whose DDL cannot be
 * in a transaction: under LOCK TABLES).
 */
import type { Kysely, RawBuilder } from 'kysely';
import { loadKysely, SQL_DIALECTS, type CountTriggerNames, type SqlKind } from '../sql/sql-dialects';

/** The table holding the counts (in the connection's default schema). */
export const COUNTS_TABLE = 'storebridge_row_counts';

function triggerNames(table: string): CountTriggerNames {
  const base = table.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 40);
  return { insert: `${base}_sb_count_ins`, delete: `${base}_sb_count_del`, both: `${base}_sb_count` };
}

/** The install statements for one table, in order (the dialect's `rowCountInstall`). */
function install(kind: SqlKind, table: string): ReturnType<typeof SQL_DIALECTS.sqlite.rowCountInstall> {
  const { sql } = loadKysely();
  return SQL_DIALECTS[kind].rowCountInstall(sql.table(COUNTS_TABLE), sql.table(table), sql.lit(table), triggerNames(table));
}

/** The install for one table as text to run in the database's own client. */
export function countsScript(db: Kysely<any>, kind: SqlKind, table: string): string {
  const { transactionalDdl, rowLocks } = SQL_DIALECTS[kind];
  const statements = install(kind, table).steps.map((s) => s.compile(db).sql);
  // One transaction where DDL can be in one; without row locks (SQLite) it takes the write lock first.
  const wrapped = transactionalDdl ? [rowLocks ? 'begin' : 'begin immediate', ...statements, 'commit'] : statements;
  return `${wrapped.join(';\n')};`;
}

/** Runs the install for one table (one transaction; on MariaDB one session under LOCK TABLES). */
export async function installCounts(db: Kysely<any>, kind: SqlKind, table: string): Promise<void> {
  const { steps, unlock } = install(kind, table);
  if (unlock) {
    await db.connection().execute(async (conn) => {
      try {
        for (const s of steps) await s.execute(conn);
      } finally {
        await unlock.execute(conn);
      }
    });
    return;
  }
  await db.transaction().execute(async (trx) => {
    for (const s of steps) await s.execute(trx);
  });
}

/** Whether the table's count row and its triggers are in place. */
export async function countsInstalled(db: Kysely<any>, kind: SqlKind, table: string): Promise<boolean> {
  const { sql } = loadKysely();
  try {
    const row = await sql<{ n: unknown }>`select n from ${sql.table(COUNTS_TABLE)} where table_name = ${table}`.execute(db);
    if (row.rows.length === 0) return false;
  } catch {
    return false; // no counts table
  }
  return SQL_DIALECTS[kind].rowCountTriggersFound(db, table, triggerNames(table));
}

/** The maintained count of a table. */
export async function readCount(db: Kysely<any>, table: string): Promise<number> {
  const { sql } = loadKysely();
  const { rows } = await sql<{ n: unknown }>`select n from ${sql.table(COUNTS_TABLE)} where table_name = ${table}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
