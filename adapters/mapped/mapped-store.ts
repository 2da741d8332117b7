/**
 * One mapped entity's `EntityStore`: pages read with a keyset (or offset) query on the mapped
 * table in `(last_updated, _id)` order, child rows read with one `IN (…)` query per child table and
 * page, writes in one transaction that locks the row (as the SQL adapter's do), re-reading what it
 * stored. See docs/mapping.md.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, RawBuilder, Transaction } from 'kysely';
import { jsonEqual, sameContent, uniqueKeyOf, type EntityStore, type ListOptions, type SignalOptions, type UpsertResult, type WriteOptions } from '../../lib/adapter';
import type { Entity } from '../../lib/contract/entities';
import { DuplicateKeyError, UnstorableValueError } from '../../lib/errors';
import { keysetPredicate, loadKysely, SQL_DIALECTS, type SqlDialect, type SqlKind } from '../sql/sql-dialects';
import { abortable, columnText, runWriteTransaction } from '../sql/sql-run';
import { readCount } from './mapped-counts';
import { storableMs, timeBound, type ColumnInfo, type IdKey, type TimeKey } from './mapped-keys';
import { buildItem, planNode, type PlannedNode, type Row, type RowNode, type TableRules, type WriteRules } from './mapped-rows';
import type { KeyLocks, MappedKeyRule } from './mapped-unique';
import type { ChildTable, EntityMapping, FieldSource, TableWrites } from './mapping';
import { MappedWriteRefusedError } from './mapping-errors';

/** The alias of the selected time, in milliseconds or as stored. */
const LU = 'storebridge_last_updated';

/** Parent keys per `IN (…)` query of child rows. */
const IN_CHUNK = 500;

/** One table the mapping reads: its columns, what to select, and its child tables. */
export interface TableRuntime {
  readonly table: string;
  readonly columns: ReadonlyMap<string, ColumnInfo>;
  /** The columns a read selects: the mapped ones, the keys of child tables, a child's own key and order. */
  readonly select: readonly string[];
  readonly children: ReadonlyArray<{ readonly child: ChildTable; readonly runtime: TableRuntime }>;
}

export interface EntityRuntime extends TableRuntime {
  readonly mapping: EntityMapping;
  readonly time: TimeKey;
  readonly id: IdKey;
  /** The database keeps the table's row count (`storebridge map counts`), and every row has a time. */
  readonly counted: boolean;
  /** The `sku` / `orderid` column's rule, when the mapping reads it from a plain column. */
  readonly key?: MappedKeyRule;
}

export interface StoreContext {
  readonly db: Kysely<any>;
  readonly kind: SqlKind;
  readonly maxWriteAttempts: number;
  /** How long a `count(*)` answers `itemsTotal` (0: every time); a write through the adapter renews it. */
  readonly countCacheMs: number;
}

type Item = { _id: string; last_updated?: number };

/** A value as a statement parameter: JSON members as JSON text. */
function dbValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'object' && value !== null && !Buffer.isBuffer(value) && !(value instanceof Date)) return JSON.stringify(value);
  return value;
}

/** A column value as a grouping key (drivers return numbers, strings, bigints or Buffers for keys). */
const groupKey = (v: unknown) => (Buffer.isBuffer(v) ? `b:${v.toString('hex')}` : `v:${String(v)}`);

export class MappedEntityStore<T extends Item> implements EntityStore<T> {
  private countCache?: { n: number; at: number; generation: number };
  /** Incremented by every write: a count started before it is not cached. */
  private generation = 0;
  private reservedId = -1n;

  constructor(
    private readonly ctx: StoreContext,
    readonly runtime: EntityRuntime,
  ) {}

  get entity(): Entity {
    return this.runtime.mapping.entity;
  }

  private get sql() {
    return loadKysely().sql;
  }

  private get dialect(): SqlDialect {
    return SQL_DIALECTS[this.ctx.kind];
  }

  private columnsOf(rt: TableRuntime): RawBuilder<unknown> {
    return this.sql.join(rt.select.map((c) => this.sql.ref(c)));
  }

  private served(): RawBuilder<unknown> {
    return this.sql`${this.sql.ref(this.runtime.time.column)} is not null`;
  }

  /**
   * Whether pages are bounded first: MariaDB has no incremental sort and no index can hold an
   * expression (`expressionIndexes`), such as an integer id's text (a generated column cannot read an AUTO_INCREMENT one), so a page sorted by
   * `CAST(id AS BINARY)` would sort every row after the position. Instead one index-only query on
   * the time column finds the time of the page's last row, and the page sorts only the rows up to
   * it (the page, plus the rows tying with its first and last time).
   */
  private get bounded(): boolean {
    return !this.dialect.expressionIndexes && !this.runtime.id.direct;
  }

  /** The keyset condition in the time column's terms, or `false` when nothing can follow the position. */
  private afterCondition(sortorder: ListOptions['sortorder'], after: NonNullable<ListOptions['after']>, timeOnly: boolean): RawBuilder<unknown> | false | undefined {
    const { sql } = this;
    const { time, id } = this.runtime;
    const bound = timeBound(time, after.last_updated);
    // Beyond every representable time: nothing follows it ascending; everything does descending.
    if (!bound) return sortorder === 'asc' ? false : undefined;
    if (timeOnly) {
      // The rows strictly later than the position's time (a bound's count must not include rows at it).
      const op = sql.raw(sortorder === 'asc' ? (bound.exact ? '>' : '>=') : '<');
      return sql`${time.sort} ${op} ${bound.value}`;
    }
    // Between two representable times: "from the next one on", whatever the id (no id is empty).
    const position = { last_updated: bound.value, _id: bound.exact ? after._id : '' };
    return keysetPredicate(this.ctx.kind, sortorder, position, { lastUpdated: time.sort, id: id.sort, expanded: !id.direct });
  }

  /** The time of the last row a page can hold (bounded paging); `undefined` when fewer rows follow. */
  private async pageBound({ sortorder, limit, offset = 0, after }: Omit<ListOptions, 'signal'>, db: Kysely<any>): Promise<unknown> {
    const { sql } = this;
    const { time, table } = this.runtime;
    const condition = after ? this.afterCondition(sortorder, after, true) : undefined;
    const where = condition ? sql`${this.served()} and ${condition}` : this.served();
    const skip = limit - 1 + (after ? 0 : offset);
    const { rows } = await sql<Row>`select ${time.select} as ${sql.id(LU)} from ${sql.table(table)} where ${where} order by ${time.sort} ${sql.raw(sortorder)} limit 1 offset ${sql.raw(String(skip))}`.execute(db);
    const ms = rows.length > 0 ? time.toMs(rows[0][LU]) : undefined;
    return ms === undefined ? undefined : time.value(ms);
  }

  /** The page query (exposed for plan checks); `upper` is a bounded page's last time. */
  listQuery({ sortorder, limit, offset = 0, after }: Omit<ListOptions, 'signal'>, upper?: unknown): RawBuilder<Row> | undefined {
    const { sql } = this;
    const { time, id } = this.runtime;
    let where = this.served();
    if (after) {
      const condition = this.afterCondition(sortorder, after, false);
      if (condition === false) return undefined;
      if (condition) where = sql`${where} and ${condition}`;
    }
    if (upper !== undefined) where = sql`${where} and ${time.sort} ${sql.raw(sortorder === 'asc' ? '<=' : '>=')} ${upper}`;
    const dir = sql.raw(sortorder);
    const page = sql<Row>`select ${this.columnsOf(this.runtime)}, ${time.select} as ${sql.id(LU)} from ${sql.table(this.runtime.table)} where ${where} order by ${time.sort} ${dir}, ${id.sort} ${dir} limit ${sql.raw(String(limit))}`;
    return !after && offset > 0 ? sql<Row>`${page} offset ${sql.raw(String(offset))}` : page;
  }

  async list(options: ListOptions): Promise<T[]> {
    options.signal.throwIfAborted();
    const { db } = this.ctx;
    return abortable(options.signal, async () => {
      const upper = this.bounded ? await this.pageBound(options, db) : undefined;
      const query = this.listQuery(options, upper);
      return query ? this.items(db, (await query.execute(db)).rows) : [];
    });
  }

  /** Items of entity rows: their child rows read, the members built. */
  private async items(db: Kysely<any>, rows: Row[]): Promise<T[]> {
    const nodes: RowNode[] = rows.map((row) => ({ row, children: new Map() }));
    await this.loadChildren(db, this.runtime, nodes);
    return nodes.map((node) => this.itemOf(node));
  }

  private itemOf(node: RowNode): T {
    const { id, time, mapping } = this.runtime;
    const _id = id.text(node.row[id.column]);
    const last_updated = time.toMs(node.row[LU]);
    if (last_updated === undefined) throw new Error(`${mapping.table} ${_id}: ${time.column} ${JSON.stringify(columnText(node.row[LU]))} is not a time of type ${time.type}`);
    return { _id, last_updated, ...buildItem(mapping.fields, node) } as unknown as T;
  }

  /** Reads the child rows of `nodes` (one query per child table and chunk of parents), recursively. */
  private async loadChildren(db: Kysely<any>, rt: TableRuntime, nodes: readonly RowNode[]): Promise<void> {
    const { sql } = this;
    for (const { child, runtime } of rt.children) {
      const keys = [...new Map(nodes.map((n) => [groupKey(n.row[child.parentKey]), n.row[child.parentKey]])).values()].filter((k) => k !== null && k !== undefined);
      const groups = new Map<string, RowNode[]>();
      for (let i = 0; i < keys.length; i += IN_CHUNK) {
        const chunk = keys.slice(i, i + IN_CHUNK);
        const result = await sql<Row>`select ${this.columnsOf(runtime)} from ${sql.table(child.table)} where ${sql.ref(child.key)} in (${sql.join(chunk)}) order by ${sql.ref(child.orderBy)}`.execute(db);
        for (const row of result.rows) {
          const k = groupKey(row[child.key]);
          if (!groups.has(k)) groups.set(k, []);
          groups.get(k)!.push({ row, children: new Map() });
        }
      }
      for (const n of nodes) n.children.set(child, groups.get(groupKey(n.row[child.parentKey])) ?? []);
      await this.loadChildren(db, runtime, [...groups.values()].flat());
    }
  }

  /**
   * The count the database keeps (`storebridge map counts`), else `count(*)` of the served rows,
   * kept `countCacheMs`: `itemsTotal` is asked on every list request (docs/mapping.md "itemsTotal").
   */
  async count({ signal }: SignalOptions): Promise<number> {
    signal.throwIfAborted();
    if (this.runtime.counted) return abortable(signal, () => readCount(this.ctx.db, this.runtime.table));
    const cached = this.countCache;
    if (cached && cached.generation === this.generation && Date.now() - cached.at < this.ctx.countCacheMs) return cached.n;
    const { sql } = this;
    const generation = this.generation;
    const at = Date.now();
    const { rows } = await abortable(signal, () => sql<{ n: unknown }>`select count(*) as n from ${sql.table(this.runtime.table)} where ${this.served()}`.execute(this.ctx.db));
    const n = Number(rows[0].n);
    if (generation === this.generation) this.countCache = { n, at, generation };
    return n;
  }

  /** The entity row with this id (locked for a write transaction), with its child rows. */
  private async readNode(db: Kysely<any>, idValue: unknown, forUpdate: boolean): Promise<RowNode | undefined> {
    const { sql } = this;
    const lock = forUpdate && this.dialect.rowLocks ? sql` for update` : sql``;
    const { rows } = await sql<Row>`select ${this.columnsOf(this.runtime)}, ${this.runtime.time.select} as ${sql.id(LU)} from ${sql.table(this.runtime.table)} where ${this.runtime.id.equals(idValue)} and ${this.served()}${lock}`.execute(db);
    if (rows.length === 0) return undefined;
    const node: RowNode = { row: rows[0], children: new Map() };
    await this.loadChildren(db, this.runtime, [node]);
    return node;
  }

  async get(id: string, { signal }: SignalOptions): Promise<T | undefined> {
    signal.throwIfAborted();
    const param = this.runtime.id.param(id);
    if ('problem' in param) return undefined;
    const node = await abortable(signal, () => this.readNode(this.ctx.db, param.value, false));
    return node && this.itemOf(node);
  }

  /**
   * The item this `sku` (products) or `orderid` (orders) names: of the rows holding it, the one with
   * the lowest id (`MappedKeyRule.holderOrder`). `null` when the key is not read from a plain column
   * (the caller scans).
   */
  async byKey(value: string, { signal }: SignalOptions): Promise<T | undefined | null> {
    const rule = this.runtime.key;
    if (!rule) return null;
    signal.throwIfAborted();
    const key = uniqueKeyOf(this.entity, { [rule.member]: value });
    const holding = key === undefined ? undefined : rule.holding(key);
    if (!holding) return undefined;
    const { sql } = this;
    const node = await abortable(signal, async () => {
      const { rows } = await sql<Row>`select ${this.columnsOf(this.runtime)}, ${this.runtime.time.select} as ${sql.id(LU)} from ${sql.table(this.runtime.table)} where ${holding} and ${this.served()} order by ${rule.holderOrder} limit 1`.execute(this.ctx.db);
      if (rows.length === 0) return undefined;
      const found: RowNode = { row: rows[0], children: new Map() };
      await this.loadChildren(this.ctx.db, this.runtime, [found]);
      return found;
    });
    return node && this.itemOf(node);
  }

  // -------------------------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------------------------

  /** The write rules of a table for one kind of write; `undefined` when the mapping does not allow it. */
  private rules(rt: TableRuntime, writes: TableWrites, mode: 'update' | 'create'): TableRules | undefined {
    const columns = writes[mode];
    if (!columns) return undefined;
    const own: WriteRules = {
      columns: new Set(columns),
      notNull: (column) => rt.columns.get(column)?.nullable === false,
      checkValue: (value, where) => {
        if (!this.dialect.textHoldsNul && typeof value === 'string' && value.includes('\u0000')) {
          throw new UnstorableValueError(`${this.entity}.upsert`, where, 'PostgreSQL text cannot hold U+0000 (NUL)');
        }
      },
    };
    return {
      own,
      child: (child, m) => {
        const runtime = rt.children.find((c) => c.child === child)!.runtime;
        return this.rules(runtime, child.writes, m);
      },
    };
  }

  /**
   * Why the write webhooks must refuse this item (as it will be stored: the body over the stored
   * item), before anything is written (empty: none).
   */
  async writeProblems(item: T, signal: AbortSignal): Promise<string[]> {
    const param = this.runtime.id.param(item._id);
    if ('problem' in param) return [`_id: ${param.problem}`];
    const nul = this.dialect.textHoldsNul ? undefined : nulPath(item);
    if (nul !== undefined) return [`${nul}: PostgreSQL text cannot hold U+0000 (NUL)`];
    const stored = await abortable(signal, () => this.readNode(this.ctx.db, param.value, false));
    const mode = stored ? 'update' : 'create';
    if (!this.runtime.mapping.writes[mode]) return [refusal(this.entity, mode)];
    const key = this.keyInId(item);
    if (key !== undefined && key !== item._id) {
      return [`${this.runtime.key!.member}: ${JSON.stringify(key)} cannot be stored apart from the _id ${JSON.stringify(item._id)}: the column ${this.runtime.id.column} holds both here`];
    }
    return stored ? this.removalProblems(this.itemOf(stored), item) : [];
  }

  /** The item's `sku` / `orderid` when the mapping reads it from the id column itself. */
  private keyInId(item: object): string | undefined {
    const rule = this.runtime.key;
    return rule?.column.name === this.runtime.id.column ? uniqueKeyOf(this.entity, item) : undefined;
  }

  /**
   * Members a partial write removes (sent as null: the stored item has them, the item as it will be
   * lacks them) from columns that refuse NULL: refused rather than silently kept.
   */
  private removalProblems(stored: T, item: T): string[] {
    const { fields, writes } = this.runtime.mapping;
    const updated = new Set(writes.update);
    const has = (x: T, m: string) => (x as Record<string, unknown>)[m] !== undefined;
    return Object.entries(fields)
      .filter(([member]) => has(stored, member) && !has(item, member))
      .flatMap(([member, source]) =>
        plainColumns(source)
          .filter((c) => updated.has(c) && this.runtime.columns.get(c)?.nullable === false)
          .map((c) => `${member}: cannot be removed: its column ${c} is NOT NULL (send a value instead)`),
      );
  }

  async upsert(item: T, options: WriteOptions): Promise<UpsertResult<T>> {
    options.signal.throwIfAborted();
    const { sql } = this;
    const { id, table } = this.runtime;
    const param = id.param(item._id);
    if ('problem' in param) throw new UnstorableValueError(`${this.entity}.upsert`, '_id', param.problem);
    const ref = sql.ref(id.column);
    const write = (db: Kysely<any>, locks: KeyLocks) =>
      runWriteTransaction(
        db,
        {
          kind: this.ctx.kind,
          signal: options.signal,
          maxAttempts: this.ctx.maxWriteAttempts,
          lockSqlite: (trx) => sql`update ${sql.table(table)} set ${ref} = ${ref} where 1 = 0`.execute(trx),
        },
        (trx) => this.writeOne(trx, locks, item, param.value, options),
      );
    const key = this.runtime.key;
    const result = key ? await key.session(this.ctx.db, write) : await write(this.ctx.db, []);
    if (result.changed) this.generation++;
    return result;
  }

  /**
   * One write in its transaction: the row locked and read, the write planned over it (a `merge`
   * keeps the columns of the members the item lacks), the key rule, then the rows written and read
   * back. `locks` collects the key locks a MariaDB session releases after the transaction.
   */
  private async writeOne(trx: Transaction<any>, locks: KeyLocks, item: T, idValue: unknown, options: WriteOptions): Promise<UpsertResult<T>> {
    const { mapping, time, id } = this.runtime;
    const existing = await this.readNode(trx, idValue, true);
    // An id this process assigned (max + 1) that another process took meanwhile: never write over its item.
    if (existing && options.create) throw new DuplicateKeyError(this.entity, '_id', item._id, item._id);
    const mode = existing ? 'update' : 'create';
    const rules = this.rules(this.runtime, mapping.writes, mode);
    if (!rules) throw new MappedWriteRefusedError(`${this.entity}.upsert: ${refusal(this.entity, mode)}`);
    const planned = planNode(mapping.fields, item, existing, rules, '', { [id.column]: idValue }, options.merge);
    const before = existing && this.itemOf(existing);
    const after = { _id: item._id, ...buildItem(mapping.fields, planned) } as unknown as T;
    let lastUpdated: number;
    if (options.lastUpdated === 'keep') {
      lastUpdated = storableMs(time, item.last_updated ?? 0);
      if (before && jsonEqual(before, { ...after, last_updated: lastUpdated })) return { item: before, changed: false, created: false };
    } else {
      if (before && sameContent(before, after)) return { item: before, changed: false, created: false };
      // max(now, previous + 1), in the column's resolution: monotonic per item whatever the clock does.
      lastUpdated = Math.max(storableMs(time, options.now), before ? before.last_updated! + time.resolutionMs : 0);
    }
    await this.runtime.key?.claim(trx, locks, idValue, before, after, options.lastUpdated);
    options.signal.throwIfAborted();
    await this.writeEntityRow(trx, planned, mode, idValue, lastUpdated);
    await this.writeChildren(trx, this.runtime, planned);
    const stored = await this.readNode(trx, idValue, false);
    return { item: this.itemOf(stored!), changed: true, created: !existing };
  }

  private async writeEntityRow(trx: Transaction<any>, planned: PlannedNode, mode: 'update' | 'create', idValue: unknown, lastUpdated: number): Promise<void> {
    const { sql } = this;
    const { mapping, time, id, table } = this.runtime;
    const columns = mapping.writes[mode]!;
    const lu = time.write(lastUpdated);
    if (mode === 'create') {
      // The id and time columns are the adapter's: a mapping cannot list them in writes.
      const names = [id.column, ...columns, time.column];
      const values = [idValue, ...columns.map((c) => dbValue(planned.row[c])), lu];
      await sql`insert into ${sql.table(table)} (${sql.join(names.map((c) => sql.ref(c)))}) values (${sql.join(values)})`.execute(trx);
      return;
    }
    const sets = [...columns.map((c) => sql`${sql.ref(c)} = ${dbValue(planned.row[c])}`), sql`${sql.ref(time.column)} = ${lu}`];
    await sql`update ${sql.table(table)} set ${sql.join(sets)} where ${this.runtime.id.equals(idValue)}`.execute(trx);
  }

  /** Deletes, updates and inserts the child rows of a planned node, table by table, recursively. */
  private async writeChildren(trx: Transaction<any>, rt: TableRuntime, node: PlannedNode): Promise<void> {
    const { sql } = this;
    for (const { child, runtime } of rt.children) {
      const at = (row: Row) => sql`${sql.ref(child.key)} = ${row[child.key]} and ${sql.ref(child.orderBy)} = ${row[child.orderBy]}`;
      for (const old of node.removed.get(child) ?? []) await sql`delete from ${sql.table(child.table)} where ${at(old.row)}`.execute(trx);
      for (const n of node.children.get(child) ?? []) {
        if (!n.original) {
          // A new row under a new parent row that has no mapped key yet cannot be attached: skipped.
          if (n.row[child.key] === undefined || n.row[child.key] === null) continue;
          const names = [child.key, ...(child.writes.create ?? []).filter((c) => c !== child.key && n.row[c] !== undefined)];
          await sql`insert into ${sql.table(child.table)} (${sql.join(names.map((c) => sql.ref(c)))}) values (${sql.join(names.map((c) => dbValue(n.row[c])))})`.execute(trx);
        } else if (n.written && child.writes.update && child.writes.update.length > 0) {
          const sets = child.writes.update.map((c) => sql`${sql.ref(c)} = ${dbValue(n.row[c])}`);
          await sql`update ${sql.table(child.table)} set ${sql.join(sets)} where ${at(n.original)}`.execute(trx);
        }
        await this.writeChildren(trx, runtime, n);
      }
    }
  }

  /**
   * The id of an item being created: its `sku` / `orderid` when the id column holds that too (an
   * order numbered by its `order_no`: the number is the id, so a repeated create finds it), else for
   * id columns the kit's `<noun>-<uuid>` cannot go into: the next value of a PostgreSQL sequence, a
   * new UUID, or for other integer ids one more than the largest (reserved in this process; another
   * process creating at the same moment can take it).
   */
  async newId(item: object, signal: AbortSignal): Promise<string | undefined> {
    const { id, table, columns } = this.runtime;
    const { sql } = this;
    const key = this.keyInId(item);
    // The write core refuses an assigned id that is not safe in a raw URL (lib/server/ids.ts): such a key is not one.
    if (key !== undefined && !('problem' in id.param(key)) && !/[#?/% ]/.test(key)) return key;
    if (id.uuid) return randomUUID();
    if (!id.integer) return undefined;
    signal.throwIfAborted();
    const { nextSequenceValue } = this.dialect;
    if (nextSequenceValue && columns.get(id.column)?.sequence) {
      const qualified = sql.table(table).compile(this.ctx.db).sql;
      const { rows } = await nextSequenceValue(qualified, id.column).execute(this.ctx.db);
      return String(rows[0].n);
    }
    const { rows } = await sql<{ n: unknown }>`select max(${sql.ref(id.column)}) as n from ${sql.table(table)}`.execute(this.ctx.db);
    const max = rows[0].n === null ? 0n : BigInt(columnText(rows[0].n));
    this.reservedId = max + 1n > this.reservedId + 1n ? max + 1n : this.reservedId + 1n;
    return String(this.reservedId);
  }
}

function refusal(entity: Entity, mode: 'update' | 'create'): string {
  return `this store does not ${mode} ${entity} through its webhooks: the mapping file's ${entity}.writes has no "${mode}" list (docs/mapping.md "Writes")`;
}

/** The columns a member's source sets whole (no JSON path), through objects and one-row arrays. */
function plainColumns(source: FieldSource): string[] {
  if (source.kind === 'column') return source.path.length === 0 ? [source.column] : [];
  if (source.kind === 'object') return Object.values(source.members).flatMap(plainColumns);
  if (source.kind === 'row') return Object.values(source.element).flatMap(plainColumns);
  return [];
}

/** The path of the first string holding U+0000 in an item, if any. */
function nulPath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path || '(value)' : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const found = nulPath(v, path ? `${path}.${k}` : k);
    if (found !== undefined) return found;
  }
  return undefined;
}
