/**
 * What names a mapped item besides its id: a product's `sku` and an order's `orderid`
 * (`UNIQUE_MEMBERS`), when the mapping reads it from a column. A `touch` write may not take a key
 * another row has (`DuplicateKeyError`), also when many run at once, and lookups by the key
 * (`productBySku`, `orderByOrderId`) answer the row that holds it. docs/mapping.md "SKUs and order
 * numbers" says the same for users.
 *
 * A shop's table may have no unique index on that column, so the rule cannot lean on the database
 * refusing a second row: each write that takes a key locks that key in its transaction first, then
 * looks for another row holding it (PostgreSQL: a transaction-scoped advisory lock; MariaDB: a named
 * `GET_LOCK`, released after the transaction ends; SQLite: the write transaction already holds the
 * database's write lock). Under READ COMMITTED the look-up after the lock sees every row a writer
 * before it committed, so of concurrent creates of one key one stores and the others are refused.
 * With a unique index on the column the database refuses the second row itself: no lock, and the
 * retried transaction finds the holder; every write is then checked as the index compares (a `keep`
 * write too: the database would refuse it), so its refusal is a `DuplicateKeyError`, not a retry.
 */
import type { Kysely, RawBuilder, Transaction } from 'kysely';
import { uniqueKeyOf, UNIQUE_MEMBERS, type UniqueMember, type WriteOptions } from '../../lib/adapter';
import type { Entity } from '../../lib/contract/entities';
import { DuplicateKeyError } from '../../lib/errors';
import { loadKysely, SQL_DIALECTS, type SqlKind } from '../sql/sql-dialects';
import { columnText } from '../sql/sql-run';
import { idKey, isIntegerType, type ColumnInfo, type IdKey } from './mapped-keys';
import { indexName, rows, splitTable } from './mapped-inspect';
import type { EntityMapping } from './mapping';

/** How long a MariaDB write waits for another writer of the same key (`GET_LOCK`), in seconds. */
const KEY_LOCK_WAIT_S = 50;

/**
 * A unique index on the key column alone: `full` (every row, blank values too), `partial`
 * (PostgreSQL and SQLite `WHERE …`: taken to leave blank values out, as the advised one does), or none.
 */
export type KeyIndex = 'full' | 'partial' | 'none';

type Item = { _id: string };

/** The statements releasing the session's key locks after a write's transaction (MariaDB's `GET_LOCK`; elsewhere none). */
export type KeyLocks = RawBuilder<unknown>[];

/** The unique member of one mapped entity, read from a plain column. */
export class MappedKeyRule {
  readonly member: UniqueMember;
  /** Parameters and exact equality for the key column (as for an id: integers, NUL on PostgreSQL). */
  private readonly value: IdKey;

  constructor(
    private readonly kind: SqlKind,
    private readonly table: string,
    readonly entity: Entity,
    readonly column: ColumnInfo,
    private readonly id: IdKey,
    /** Whether the mapping's writes set the column (otherwise writes never change a key). */
    readonly writable: boolean,
    readonly index: KeyIndex,
  ) {
    this.member = UNIQUE_MEMBERS[entity];
    this.value = idKey(kind, column, undefined);
  }

  /** Whether writes lock the key they take: the database does not refuse a second row itself. */
  private get locks(): boolean {
    return this.writable && this.index === 'none';
  }

  /**
   * Rows holding the non-blank `key`, exactly (the kit's rule: case and trailing spaces count), or
   * `undefined` when no row can hold it (not an integer for an integer column, NUL on PostgreSQL).
   * The blank test is the advised partial index's own predicate, so that index serves the look-up.
   */
  holding(key: string): RawBuilder<unknown> | undefined {
    const p = this.value.param(key);
    if ('problem' in p) return undefined;
    const { sql } = loadKysely();
    return sql`${this.value.equals(p.value)} and ${nonBlank(this.kind, this.column)}`;
  }

  /** Which of several rows holding one key holds it: the lowest id (the oldest row of an auto-increment table). */
  get holderOrder(): RawBuilder<unknown> {
    const { sql } = loadKysely();
    return sql`${sql.ref(this.id.column)}, ${this.id.sort}`;
  }

  /**
   * Runs one write (`run`, its transaction and retries): on MariaDB, when writes lock keys, on one
   * connection whose key locks are released after the transaction ended (`GET_LOCK` belongs to the
   * session: released before the commit, a waiting writer could look before the row is visible).
   */
  session<R>(db: Kysely<any>, run: (db: Kysely<any>, locks: KeyLocks) => Promise<R>): Promise<R> {
    if (!SQL_DIALECTS[this.kind].sessionKeyLocks || !this.locks) return run(db, []);
    return db.connection().execute(async (conn) => {
      const locks: KeyLocks = [];
      try {
        return await run(conn, locks);
      } finally {
        // A failed release means a lost connection, whose locks the server has freed already.
        for (const release of locks) await release.execute(conn).catch(() => undefined);
      }
    });
  }

  /**
   * The rule for a write about to store `after` over `before` (in its transaction, after the row's
   * own lock): a `touch` write may not take a key another row has, and a row keeps the key it has.
   * Under a unique index every value the index holds is checked as it compares them (a full one
   * holds blanks too), for `keep` writes too: the database would refuse them. Throws `DuplicateKeyError`.
   */
  async claim(trx: Transaction<any>, locks: KeyLocks, idValue: unknown, before: Item | undefined, after: Item, mode: WriteOptions['lastUpdated']): Promise<void> {
    if (!this.writable || (this.locks && mode === 'keep')) return;
    const { sql } = loadKysely();
    // A full index holds blank values too; otherwise a blank names nothing (`uniqueKeyOf`).
    const keyOf = (item: Item | undefined) => {
      const value = (item as Record<string, unknown> | undefined)?.[this.member];
      return this.index === 'full' ? (typeof value === 'string' ? value : undefined) : item && uniqueKeyOf(this.entity, item);
    };
    const key = keyOf(after);
    if (key === undefined || key === keyOf(before)) return;
    const p = this.value.param(key);
    if ('problem' in p) return;
    let where: RawBuilder<unknown>;
    if (this.locks) {
      where = this.holding(key)!;
      await this.lock(trx, locks, key);
    } else {
      // As the index compares (a case-insensitive collation: case apart), so that what it would refuse is found.
      const equal = sql`${sql.ref(this.column.name)} = ${p.value}`;
      where = this.index === 'partial' ? sql`${equal} and ${nonBlank(this.kind, this.column)}` : equal;
    }
    const { rows: found } = await sql<{ id: unknown }>`select ${sql.ref(this.id.column)} as id from ${sql.table(this.table)} where ${where} and not (${this.id.equals(idValue)}) order by ${this.holderOrder} limit 1`.execute(trx);
    if (found.length > 0) throw new DuplicateKeyError(this.entity, this.member, key, columnText(found[0].id));
  }

  /** Waits for the other writers of `key` in this table to end their transactions. */
  private async lock(trx: Transaction<any>, locks: KeyLocks, key: string): Promise<void> {
    const got = await SQL_DIALECTS[this.kind].lockKey(trx, this.table, key, KEY_LOCK_WAIT_S);
    if (!got) throw new Error(`${this.table}: waited ${KEY_LOCK_WAIT_S} s for another write of the ${this.member} ${JSON.stringify(key)}`);
    if (got.release) locks.push(got.release);
  }
}

/** `column` holds a non-blank value (the kit's blank: empty or spaces); a column of numbers, dates or UUIDs always does. */
function nonBlank(kind: SqlKind, column: ColumnInfo): RawBuilder<unknown> {
  const { sql } = loadKysely();
  const ref = sql.ref(column.name);
  const textual = !isIntegerType(kind, column.type) && (column.type === '' || /char|text|clob|string|binary|blob/.test(column.type));
  return textual ? sql`trim(${ref}) <> ''` : sql`${ref} is not null`;
}

// ---------------------------------------------------------------------------------------------
// At start-up
// ---------------------------------------------------------------------------------------------

/** The unique index on `column` alone, as the catalog describes it. */
export async function keyIndex(db: Kysely<any>, kind: SqlKind, table: string, column: string): Promise<KeyIndex> {
  const { schema, name } = splitTable(table);
  const found = await SQL_DIALECTS[kind].uniqueIndexesOn(db, table, schema, name, column);
  if (found.some((f) => !f.partial)) return 'full';
  return found.length > 0 ? 'partial' : 'none';
}

/**
 * Opens the key rule of an entity: `undefined` when the key is not read from a plain column (a JSON
 * path or a constant: lookups then scan, and writes cannot keep it unique, which a warning says
 * when the mapping writes it). Warns, with the statement, when writes set the column and no unique
 * index holds it, and names values several rows already share.
 */
export async function openKeyRule(db: Kysely<any>, kind: SqlKind, mapping: EntityMapping, columns: ReadonlyMap<string, ColumnInfo>, id: IdKey): Promise<{ rule?: MappedKeyRule; warnings: string[] }> {
  const member = UNIQUE_MEMBERS[mapping.entity];
  const source = mapping.fields[member];
  if (source?.kind !== 'column') return { warnings: [] };
  const writable = [...(mapping.writes.update ?? []), ...(mapping.writes.create ?? [])].includes(source.column);
  const where = `${mapping.entity}.fields.${member}`;
  if (source.path.length > 0) {
    return { warnings: writable ? [`${mapping.table}: ${where} is read from inside the JSON of ${source.column}, where this adapter cannot keep each ${member} on one row; map ${member} to a column of its own to have creates with a ${member} another row has refused`] : [] };
  }
  const index = await keyIndex(db, kind, mapping.table, source.column);
  const rule = new MappedKeyRule(kind, mapping.table, mapping.entity, columns.get(source.column)!, id, writable, index);
  return { rule, warnings: writable && index === 'none' ? await keyIndexWarnings(db, kind, mapping.table, rule) : [] };
}

/** The advice for a writable key column without a unique index: the statement, and the values rows already share. */
async function keyIndexWarnings(db: Kysely<any>, kind: SqlKind, table: string, rule: MappedKeyRule): Promise<string[]> {
  const { sql } = loadKysely();
  const column = rule.column.name;
  const ref = sql.ref(column);
  const statement = sql`create unique index ${sql.id(indexName(table, rule.member))} on ${sql.table(table)} (${ref})`;
  const { partialIndexes } = SQL_DIALECTS[kind];
  const text = (partialIndexes ? sql`${statement} where ${nonBlank(kind, rule.column)}` : statement).compile(db).sql;
  const caveat = !partialIndexes ? ` (MariaDB and MySQL have no partial index: blank values collide in this one, so store a missing ${rule.member} as NULL; in a case-insensitive collation it also refuses values that differ only in case)` : '';
  const warnings = [`${table}: no unique index on ${column}, so each write that takes ${rule.member === 'sku' ? 'a' : 'an'} ${rule.member} locks it and looks for another row holding it, and the shop's own writes are not held to it${caveat}; run: ${text}`];
  const shared = await rows(db, sql`select ${ref} as k, count(*) as n from ${sql.table(table)} where ${nonBlank(kind, rule.column)} group by ${ref} having count(*) > 1 order by count(*) desc limit 3`);
  if (shared.length > 0) {
    const shown = shared.map((r) => `${JSON.stringify(columnText(r.k))} (${Number(r.n)} rows)`).join(', ');
    warnings.push(`${table}: some values of ${column} are on more than one row, e.g. ${shown}: the unique index cannot be created until they differ; until then a look-up by ${rule.member} answers the row with the lowest id`);
  }
  return warnings;
}
