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
import { loadKysely, type SqlKind } from '../sql/sql-dialects';

/** The table holding the counts (in the connection's default schema). */
export const COUNTS_TABLE = 'storebridge_row_counts';

function triggerNames(table: string): { insert: string; delete: string; both: string } {
  const base = table.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 40);
  return { insert: `${base}_sb_count_ins`, delete: `${base}_sb_count_del`, both: `${base}_sb_count` };
}

/** The install statements for one table, in order. */
function installStatements(kind: SqlKind, table: string): RawBuilder<unknown>[] {
  const { sql } = loadKysely();
  const counts = sql.table(COUNTS_TABLE);
  const t = sql.table(table);
  const names = triggerNames(table);
  const key = sql.lit(table);
  const create = sql`create table if not exists ${counts} (table_name varchar(255) not null primary key, n bigint not null)`;
  const bump = (delta: string) => sql`update ${counts} set n = n ${sql.raw(delta)} where table_name = ${key}`;
  if (kind === 'sqlite') {
    return [
      create,
      sql`insert or replace into ${counts} (table_name, n) select ${key}, count(*) from ${t}`,
      sql`create trigger ${sql.id(names.insert)} after insert on ${t} begin ${bump('+ 1')}; end`,
      sql`create trigger ${sql.id(names.delete)} after delete on ${t} begin ${bump('- 1')}; end`,
    ];
  }
  if (kind === 'postgres') {
    return [
      create,
      sql`create or replace function storebridge_count_rows() returns trigger language plpgsql as $$
begin
  update ${counts} set n = n + (case when tg_op = 'INSERT' then 1 else -1 end) where table_name = tg_argv[0];
  return null;
end $$`,
      sql`lock table ${t} in share row exclusive mode`,
      sql`insert into ${counts} (table_name, n) select ${key}, count(*) from ${t} on conflict (table_name) do update set n = excluded.n`,
      sql`create trigger ${sql.id(names.both)} after insert or delete on ${t} for each row execute function storebridge_count_rows(${key})`,
    ];
  }
  return [
    sql`${create} engine=InnoDB`,
    sql`lock tables ${t} write, ${counts} write`,
    sql`create trigger ${sql.id(names.insert)} after insert on ${t} for each row ${bump('+ 1')}`,
    sql`create trigger ${sql.id(names.delete)} after delete on ${t} for each row ${bump('- 1')}`,
    sql`replace into ${counts} (table_name, n) select ${key}, count(*) from ${t}`,
    sql`unlock tables`,
  ];
}

/** The install for one table as text to run in the database's own client. */
export function countsScript(db: Kysely<any>, kind: SqlKind, table: string): string {
  const statements = installStatements(kind, table).map((s) => s.compile(db).sql);
  const wrapped = kind === 'sqlite' ? ['begin immediate', ...statements, 'commit'] : kind === 'postgres' ? ['begin', ...statements, 'commit'] : statements;
  return `${wrapped.join(';\n')};`;
}

/** Runs the install for one table (one transaction; on MariaDB one session under LOCK TABLES). */
export async function installCounts(db: Kysely<any>, kind: SqlKind, table: string): Promise<void> {
  const statements = installStatements(kind, table);
  if (kind === 'mysql') {
    await db.connection().execute(async (conn) => {
      try {
        for (const s of statements) await s.execute(conn);
      } finally {
        await loadKysely().sql`unlock tables`.execute(conn);
      }
    });
    return;
  }
  await db.transaction().execute(async (trx) => {
    for (const s of statements) await s.execute(trx);
  });
}

/** Whether the table's count row and its triggers are in place. */
export async function countsInstalled(db: Kysely<any>, kind: SqlKind, table: string): Promise<boolean> {
  const { sql } = loadKysely();
  const names = triggerNames(table);
  let triggers: number;
  try {
    const row = await sql<{ n: unknown }>`select n from ${sql.table(COUNTS_TABLE)} where table_name = ${table}`.execute(db);
    if (row.rows.length === 0) return false;
  } catch {
    return false; // no counts table
  }
  if (kind === 'sqlite') {
    triggers = Number((await sql<{ c: number }>`select count(*) as c from sqlite_master where type = 'trigger' and name in (${names.insert}, ${names.delete})`.execute(db)).rows[0].c);
    return triggers === 2;
  }
  if (kind === 'postgres') {
    triggers = Number((await sql<{ c: number }>`select count(*) as c from pg_trigger where tgname = ${names.both} and tgrelid = to_regclass(${sql.table(table).compile(db).sql})`.execute(db)).rows[0].c);
    return triggers === 1;
  }
  triggers = Number((await sql<{ c: number }>`select count(*) as c from information_schema.triggers where trigger_schema = database() and trigger_name in (${names.insert}, ${names.delete})`.execute(db)).rows[0].c);
  return triggers === 2;
}

/** The maintained count of a table. */
export async function readCount(db: Kysely<any>, table: string): Promise<number> {
  const { sql } = loadKysely();
  const { rows } = await sql<{ n: unknown }>`select n from ${sql.table(COUNTS_TABLE)} where table_name = ${table}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
