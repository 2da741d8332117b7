/**
 * The reverse service's state store in the SQL adapter's own database: one key-value table,
 * `<prefix>reverse_state (k primary key, v text)`, beside the adapter's item tables (same prefix,
 * same PostgreSQL schema). Batches are one transaction, so a crash never leaves half a call's
 * changes. `writeIf` is a conditional `UPDATE … WHERE k = ? AND v = ?` (or an insert that does
 * nothing when the key exists) at the start of that transaction: the row lock it takes holds off
 * another replica's batch until this one commits, and a batch whose guard no longer matches
 * changes nothing. The table is created on open when missing (`create table if not exists`); the adapter's
 * own migrations are not involved.
 *
 * @example
 * ```ts
 * import { openSqlAdapter, createSqlReverseStateStore } from 'storebridge/adapters/sql';
 * import { createReverseService } from 'storebridge/reverse';
 * const adapter = await openSqlAdapter('postgres://app@db:5432/sync');
 * const service = createReverseService({ adapter, connections, stateStore: await createSqlReverseStateStore(adapter) });
 * ```
 */
import type { Kysely, RawBuilder } from 'kysely';
import type { ReverseStateStore, StateChange, StateGuard } from '../../lib/reverse/service/reverse-state-store';
import { defineOptions, readOption } from '../../lib/options';
import { SQL_NAME, type SqlAdapter } from './sql-adapter';
import { loadKysely, SQL_DIALECTS } from './sql-dialects';
import { columnText as text } from './sql-run';
import { inTransaction, storageFailures } from './sql-failures';

export interface SqlReverseStateOptions {
  /** The table's name. Default: the adapter's table prefix + `reverse_state`. */
  readonly table?: string;
}

/** `createSqlReverseStateStore`'s options, declared once (`lib/options.ts`). */
const parseStateOptions = defineOptions('createSqlReverseStateStore', {
  table: SQL_NAME.optional(),
});
/** Keys per `IN (…)` list of a read. */
const READ_BATCH = 500;


/** The state table's name: `options.table`, else the adapter's table prefix + `reverse_state`. */
function stateTableName(adapter: SqlAdapter, options: SqlReverseStateOptions): string {
  return options.table ?? `${adapter.tables.products.replace(/products$/, '')}reverse_state`;
}

/** Opens (and creates when missing) the state table of `adapter`'s database. */
export async function createSqlReverseStateStore(adapter: SqlAdapter, options: SqlReverseStateOptions = {}): Promise<ReverseStateStore> {
  const { sql, CompiledQuery } = loadKysely();
  const db: Kysely<any> = adapter.db;
  const dialect = SQL_DIALECTS[adapter.kind];
  const names = adapter.tables;
  // The default name (the adapter's prefix + `reverse_state`) is checked the same way as a given one.
  const name = readOption('table', SQL_NAME, stateTableName(adapter, parseStateOptions(options)));
  const table = names.schema ? sql.id(names.schema, name) : sql.id(name);
  // Keys as the adapter's ids (byte order and exact equality, whatever the database's locale), values as its documents.
  const c = dialect.columns;
  await sql`create table if not exists ${table} (${sql.id('k')} ${sql.raw(c.id)} not null primary key, ${sql.id('v')} ${sql.raw(c.doc)} not null)${sql.raw(c.tableSuffix)}`.execute(db);

  // The read's SQL by number of keys, compiled once: every daemon call reads its connection's
  // state (2 keys), and building the query each time was a fifth of a poll's work in the service.
  const readSqlByCount = new Map<number, string>();
  const readSql = (n: number): string => {
    let text = readSqlByCount.get(n);
    if (text === undefined) {
      const placeholders = Array.from({ length: n }, () => '');
      text = sql`select ${sql.id('k')}, ${sql.id('v')} from ${table} where ${sql.id('k')} in (${sql.join(placeholders)})`.compile(db).sql;
      if (readSqlByCount.size < 16) readSqlByCount.set(n, text);
    }
    return text;
  };

  const upsert = (k: string, v: string): RawBuilder<unknown> => dialect.upsertKeyValue(table, k, v);

  /** Applies the changes inside `trx`. */
  const apply = async (trx: Kysely<any>, changes: readonly StateChange[]) => {
    for (const change of changes) {
      if (change.value === null) await sql`delete from ${table} where ${sql.id('k')} = ${change.key}`.execute(trx);
      else await upsert(change.key, change.value).execute(trx);
    }
  };

  return {
    // Driver failures become StorageError (disk full, connection lost, …): the service's log names the cause.
    read: (keys) =>
      storageFailures(async () => {
        const out = new Map<string, string>();
        for (let i = 0; i < keys.length; i += READ_BATCH) {
          const slice = keys.slice(i, i + READ_BATCH);
          const rows = await db.executeQuery<{ k: unknown; v: unknown }>(CompiledQuery.raw(readSql(slice.length), slice));
          for (const row of rows.rows) out.set(text(row.k), text(row.v));
        }
        return out;
      }),
    async write(changes: readonly StateChange[]) {
      if (changes.length === 0) return;
      await storageFailures(() =>
        inTransaction(db, undefined, (trx) => apply(trx, changes)),
      );
    },
    async writeIf(guard: StateGuard, changes: readonly StateChange[]): Promise<boolean> {
      const own = changes.filter((c) => c.key === guard.key).at(-1);
      const rest = changes.filter((c) => c.key !== guard.key);
      let conflict = false;
      try {
        await storageFailures(() =>
          inTransaction(db, undefined, async (trx) => {
            // The guard first: it locks the state row (or claims its key) for the rest of the batch.
            let claimed: bigint | undefined;
            if (guard.expected === null) {
              const value = own?.value ?? null;
              if (value === null) throw new Error('writeIf: a batch guarded by an absent key must create it');
              claimed = (await dialect.insertKeyValueIfAbsent(table, guard.key, value).execute(trx)).numAffectedRows;
            } else if (own && own.value !== null) {
              claimed = (await sql`update ${table} set ${sql.id('v')} = ${own.value} where ${sql.id('k')} = ${guard.key} and ${sql.id('v')} = ${guard.expected}`.execute(trx)).numAffectedRows;
            } else {
              claimed = (await sql`delete from ${table} where ${sql.id('k')} = ${guard.key} and ${sql.id('v')} = ${guard.expected}`.execute(trx)).numAffectedRows;
            }
            if (!claimed || claimed < 1n) {
              conflict = true;
              throw new Error('writeIf: the guard does not match');
            }
            await apply(trx, rest);
          }),
        );
        return true;
      } catch (err) {
        if (conflict) return false;
        throw err;
      }
    },
  };
}

/** Drops the state table (tests, uninstalling). */
export async function dropSqlReverseState(adapter: SqlAdapter, options: SqlReverseStateOptions = {}): Promise<void> {
  const { sql } = loadKysely();
  const names = adapter.tables;
  const name = stateTableName(adapter, options);
  await sql`drop table if exists ${names.schema ? sql.id(names.schema, name) : sql.id(name)}`.execute(adapter.db);
}
