/**
 * What the mapped adapter checks when it opens: every mapped table and column exists (else it
 * stops with a one-line `MappingMismatchError` naming it), the time column holds what the mapping
 * says, and an index serves the paging order (else a warning with the statement to run).
 */
import type { Kysely, RawBuilder } from 'kysely';
import { loadKysely, SQL_DIALECTS, type SqlKind } from '../sql/sql-dialects';
import { columnText } from '../sql/sql-run';
import { isoFormatOf, type ColumnInfo, type IdKey, type IsoFormat, type TimeKey } from './mapped-keys';
import { MappingMismatchError } from './mapping-errors';

/** `schema.table` split (PostgreSQL, MariaDB); SQLite ignores the schema. */
export function splitTable(table: string): { schema?: string; name: string } {
  const dot = table.indexOf('.');
  return dot < 0 ? { name: table } : { schema: table.slice(0, dot), name: table.slice(dot + 1) };
}

type Rows = Array<Record<string, unknown>>;

export async function rows(db: Kysely<any>, query: RawBuilder<unknown>): Promise<Rows> {
  return (await query.execute(db)).rows as Rows;
}

/** The columns of a table or view, by name; `undefined` when there is no such table. */
export async function describeTable(db: Kysely<any>, kind: SqlKind, table: string): Promise<Map<string, ColumnInfo> | undefined> {
  const { schema, name } = splitTable(table);
  const found = await SQL_DIALECTS[kind].columnsOf(db, schema, name);
  return found.length === 0 ? undefined : new Map(found.map((c) => [c.name, c]));
}

/**
 * The columns of a table, checked to include every mapped one. `uses` names each column's role
 * for the message (`products.fields.title`).
 */
export async function requireTable(db: Kysely<any>, kind: SqlKind, table: string, uses: ReadonlyMap<string, string>): Promise<Map<string, ColumnInfo>> {
  const columns = await describeTable(db, kind, table);
  if (!columns) throw new MappingMismatchError(`the mapping names the table "${table}", which this database does not have (or this user cannot see)`, table);
  for (const [column, use] of uses) {
    if (!columns.has(column)) {
      throw new MappingMismatchError(`the table "${table}" has no column "${column}" (mapped as ${use}); its columns: ${[...columns.keys()].join(', ')}`, table, column);
    }
  }
  return columns;
}

/**
 * The layout of an ISO text time column, from its smallest and largest values, checked to be one
 * layout: text order is time order only then. `undefined` for an empty table.
 */
export async function isoLayout(db: Kysely<any>, table: string, column: string): Promise<IsoFormat | undefined> {
  const { sql } = loadKysely();
  const ref = sql.ref(column);
  const [r] = await rows(db, sql`select min(${ref}) as lo, max(${ref}) as hi, min(length(${ref})) as shortest, max(length(${ref})) as longest from ${sql.table(table)} where ${ref} is not null`);
  if (r.lo === null || r.lo === undefined) return undefined;
  const where = `${table}.${column}`;
  if (typeof r.lo === 'number' || typeof r.lo === 'bigint') {
    throw new MappingMismatchError(`${where} holds numbers, not text: map it as epoch-ms or epoch-s`, table, column);
  }
  const [lo, hi] = [isoFormatOf(columnText(r.lo)), isoFormatOf(columnText(r.hi))];
  for (const f of [lo, hi]) if (typeof f === 'string') throw new MappingMismatchError(`${where}: ${f}`, table, column);
  const a = lo as IsoFormat;
  const b = hi as IsoFormat;
  if (Number(r.shortest) !== Number(r.longest) || a.separator !== b.separator || a.fraction !== b.fraction || a.zone !== b.zone) {
    throw new MappingMismatchError(
      `${where} holds ISO text in more than one layout (${JSON.stringify(columnText(r.lo))} … ${JSON.stringify(columnText(r.hi))}, lengths ${r.shortest} to ${r.longest}): text order is then not time order; rewrite the column in one layout`,
      table,
      column,
    );
  }
  return a;
}

/** Whether some row has no time (such rows are not served: they have no `last_updated`). */
export async function hasNullTimes(db: Kysely<any>, table: string, column: string): Promise<boolean> {
  const { sql } = loadKysely();
  return (await rows(db, sql`select 1 as x from ${sql.table(table)} where ${sql.ref(column)} is null limit 1`)).length > 0;
}

/** The name of an index the adapter advises: `<table>_storebridge_<purpose>`. */
export function indexName(table: string, purpose: string): string {
  return `${splitTable(table).name.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 40)}_storebridge_${purpose}`;
}

/**
 * What to do for an index to serve the paging order: `run: <statement>`, or what to change. On
 * MariaDB (no expression index) an id that is not byte-ordered (an integer, a linguistic collation) is paged by bounding
 * with the time column (`MappedEntityStore.bounded`), so an index on that column is what it needs.
 */
export function pagingIndexAdvice(db: Kysely<any>, kind: SqlKind, table: string, time: TimeKey, id: IdKey): string {
  const { sql } = loadKysely();
  const name = indexName(table, 'page');
  const text = (q: RawBuilder<unknown>) => q.compile(db).sql;
  const { expressionIndexes } = SQL_DIALECTS[kind];
  if (!expressionIndexes && text(time.sort) !== text(sql.ref(time.column))) {
    return `no index can hold a time truncated to milliseconds: declare ${table}.${time.column} DATETIME(3) or TIMESTAMP(3) (or coarser) to page from an index on (${time.column}, ${id.column})`;
  }
  const idPart = expressionIndexes ? id.sort : sql.ref(id.column);
  return `run: ${text(sql`create index ${sql.id(name)} on ${sql.table(table)} (${time.sort}, ${idPart})`)}`;
}

/** The warnings about an entity table's paging: rows without a time, no index for the paging order. */
export async function pagingWarnings(db: Kysely<any>, kind: SqlKind, table: string, time: TimeKey, id: IdKey): Promise<string[]> {
  const { sql } = loadKysely();
  const dialect = SQL_DIALECTS[kind];
  const warnings: string[] = [];
  if (await hasNullTimes(db, table, time.column)) {
    warnings.push(`${table}: rows whose ${time.column} is NULL are not served (an item needs a last_updated); give them a time to serve them`);
  }
  const served = sql`${sql.ref(time.column)} is not null`;
  // A bounded page (MariaDB, an id that is not byte-ordered) needs the time's order from an index; any other, the whole key's.
  const page =
    !dialect.expressionIndexes && !id.direct
      ? sql`select ${time.sort} from ${sql.table(table)} where ${served} order by ${time.sort} limit 1 offset 19`
      : sql`select ${sql.ref(id.column)} from ${sql.table(table)} where ${served} order by ${time.sort}, ${id.sort} limit 20`;
  if (!(await dialect.indexServesOrder(db, page))) {
    warnings.push(`${table}: no index serves the paging order, so every page sorts the table in the database (slow on large tables); ${pagingIndexAdvice(db, kind, table, time, id)}`);
  }
  return warnings;
}
