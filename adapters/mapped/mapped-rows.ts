/**
 * Rows to items and items to rows, by the mapping: pure functions, no database.
 *
 * A `RowNode` is one table row with the rows of its child tables (variations, images, order
 * lines). `buildItem` makes the webhook-form members of a node; `planWrite` makes the node a write
 * would leave behind (the writable columns set from the item, everything else as it was), which
 * is also how a write tells whether it changes anything: the item the planned node reads as is
 * compared with the stored one.
 */
import type { WriteOptions } from '../../lib/adapter';
import { FORBIDDEN_KEYS } from '../../lib/contract/webhook';
import { columnText } from '../sql/sql-run';
import type { ChildTable, FieldMap, FieldSource, LeafKind } from './mapping';

export type Row = Record<string, unknown>;

/** One row and, per child table of its map, its child rows in `orderBy` order. */
export interface RowNode {
  readonly row: Row;
  readonly children: Map<ChildTable, RowNode[]>;
}

/** A node as a write leaves it. `original` is the stored row it updates (absent: a new row). */
export interface PlannedNode extends RowNode {
  readonly original?: Row;
  /** Whether the row's writable columns were set (an existing row whose table allows updates). */
  readonly written: boolean;
  readonly children: Map<ChildTable, PlannedNode[]>;
  /** Stored child rows the write no longer lists, to delete (`writes.delete`). */
  readonly removed: Map<ChildTable, RowNode[]>;
}

type Json = Record<string, unknown>;

type WriteMerge = NonNullable<WriteOptions['merge']>;

/** A column value read as JSON (text is parsed; drivers hand some JSON columns over already parsed). */
function asJson(raw: unknown): unknown {
  if (typeof raw === 'string' || Buffer.isBuffer(raw)) {
    try {
      return JSON.parse(columnText(raw));
    } catch {
      return undefined;
    }
  }
  return raw;
}

function at(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const seg of path) {
    if (typeof v !== 'object' || v === null || FORBIDDEN_KEYS.has(seg) || !Object.prototype.hasOwnProperty.call(v, seg)) return undefined;
    v = (v as Json)[seg];
  }
  return v;
}

/**
 * A database value as a scalar member. Values that cannot be one (text in a price column) are
 * left out rather than failing the whole page: the reader repairs, it does not refuse.
 */
export function leafValue(raw: unknown, leaf: LeafKind): string | number | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (leaf === 'string') {
    if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? undefined : raw.toISOString();
    if (typeof raw === 'object' && !Buffer.isBuffer(raw)) return JSON.stringify(raw);
    return columnText(raw);
  }
  const n = typeof raw === 'number' ? raw : typeof raw === 'bigint' ? Number(raw) : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n)) return undefined;
  return leaf === 'integer' && !Number.isSafeInteger(n) ? undefined : n;
}

/** A member's value from a node; `data` is whether any column or child row contributed (constants alone do not make an element). */
function sourceValue(source: FieldSource, node: RowNode): { value: unknown; data: boolean } {
  switch (source.kind) {
    case 'const':
      return { value: source.value, data: false };
    case 'column': {
      const raw = node.row[source.column];
      const whole = source.path.length > 0 || source.leaf === undefined ? at(asJson(raw), source.path) : raw;
      const value = source.leaf ? leafValue(whole, source.leaf) : whole ?? undefined;
      return { value, data: value !== undefined };
    }
    case 'object': {
      const { item, data } = build(source.members, node);
      return { value: data ? item : undefined, data };
    }
    case 'row': {
      const { item, data } = build(source.element, node);
      return { value: data ? [item] : undefined, data };
    }
    case 'table': {
      const rows = node.children.get(source) ?? [];
      return { value: rows.length > 0 ? rows.map((r) => build(source.fields, r).item) : undefined, data: rows.length > 0 };
    }
  }
}

function build(fields: FieldMap, node: RowNode): { item: Json; data: boolean } {
  const item: Json = {};
  let data = false;
  for (const [name, source] of Object.entries(fields)) {
    const v = sourceValue(source, node);
    if (v.value !== undefined) item[name] = v.value;
    data ||= v.data;
  }
  return { item, data };
}

/** The members a node maps to (without `_id` and `last_updated`, which the adapter adds). */
export function buildItem(fields: FieldMap, node: RowNode): Json {
  return build(fields, node).item;
}

// ---------------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------------

/** What a write may do on one table, and how to tell a column that must not be set to NULL. */
export interface WriteRules {
  /** Columns this write sets on this row (the table's update or create list). */
  readonly columns: ReadonlySet<string>;
  /** A column that refuses NULL: an absent member leaves it as it is (or to its default). */
  notNull(column: string): boolean;
  /** Refuses a value the column cannot hold (PostgreSQL text and NUL); `where` names the member. */
  checkValue(value: unknown, where: string): void;
}

function setAt(base: unknown, path: readonly string[], value: unknown): Json {
  const root: Json = typeof base === 'object' && base !== null && !Array.isArray(base) ? structuredClone(base as Json) : {};
  let obj = root;
  for (const seg of path.slice(0, -1)) {
    const next = obj[seg];
    obj = obj[seg] = typeof next === 'object' && next !== null ? (next as Json) : {};
  }
  const last = path[path.length - 1];
  if (value === undefined) delete obj[last];
  else obj[last] = value;
  return root;
}

/**
 * Sets the row's writable columns from one object of the item (a map level), recursing into child
 * tables. With `merge` (the item's top level of a partial write), a member the item lacks leaves
 * its columns and child rows as they are, unless `merge.remove` names it: then it is written as
 * absent (NULL, its JSON path deleted, its child rows gone), as `mergeMembers` drops it.
 */
function applyFields(fields: FieldMap, doc: unknown, node: { row: Row; children: Map<ChildTable, PlannedNode[]>; removed: Map<ChildTable, RowNode[]> }, rules: TableRules, where: string, merge?: WriteMerge): void {
  const d = (typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? doc : {}) as Json;
  for (const [name, source] of Object.entries(fields)) {
    const value = d[name];
    if (merge && value === undefined && !merge.remove.includes(name)) continue;
    const path = where ? `${where}.${name}` : name;
    switch (source.kind) {
      case 'const':
        break;
      case 'column':
        if (!rules.own.columns.has(source.column)) break;
        if (source.path.length > 0) {
          node.row[source.column] = setAt(asJson(node.row[source.column]), source.path, value);
        } else if (value === undefined || value === null) {
          if (!rules.own.notNull(source.column)) node.row[source.column] = null;
        } else {
          rules.own.checkValue(value, path);
          node.row[source.column] = value;
        }
        break;
      case 'object':
        applyFields(source.members, value, node, rules, path);
        break;
      case 'row':
        applyFields(source.element, Array.isArray(value) ? value[0] : undefined, node, rules, `${path}.0`);
        break;
      case 'table':
        planChildren(source, Array.isArray(value) ? value : [], node, rules, path);
        break;
    }
  }
}

/** The rules of every table a write touches: the entity's and each child table's. */
export interface TableRules {
  readonly own: WriteRules;
  /** The rules for a child table's updated and created rows (`undefined`: that kind is not allowed). */
  child(child: ChildTable, mode: 'update' | 'create'): TableRules | undefined;
}

/**
 * Child rows are matched to the written elements by position (`orderBy` order): the first stored
 * row takes the first element, and so on. Matched rows are updated (when the child table allows
 * updates), elements past the stored rows are inserted (when it allows creates), stored rows past
 * the elements are deleted (when it allows deletes) or else kept.
 */
function planChildren(child: ChildTable, elements: readonly unknown[], parent: { row: Row; children: Map<ChildTable, PlannedNode[]>; removed: Map<ChildTable, RowNode[]> }, rules: TableRules, where: string): void {
  const stored = (parent.children.get(child) ?? []) as RowNode[];
  const update = rules.child(child, 'update');
  const create = rules.child(child, 'create');
  const out: PlannedNode[] = [];
  const removed: RowNode[] = [];
  const length = Math.max(stored.length, elements.length);
  for (let i = 0; i < length; i++) {
    const old = stored[i];
    if (old && i < elements.length) out.push(update ? planNode(child.fields, elements[i], old, update, `${where}.${i}`) : keepNode(old));
    else if (old && child.writes.delete) removed.push(old);
    else if (old) out.push(keepNode(old));
    else if (create) {
      const node = planNode(child.fields, elements[i], undefined, create, `${where}.${i}`);
      node.row[child.key] = parent.row[child.parentKey];
      if (create.own.columns.has(child.orderBy) && node.row[child.orderBy] === undefined) node.row[child.orderBy] = i;
      out.push(node);
    }
  }
  parent.children.set(child, out);
  parent.removed.set(child, removed);
}

/** A stored node as a write leaves it untouched (its children too). */
function keepNode(node: RowNode): PlannedNode {
  const children = new Map<ChildTable, PlannedNode[]>();
  for (const [child, rows] of node.children) children.set(child, rows.map(keepNode));
  return { row: { ...node.row }, original: node.row, written: false, children, removed: new Map() };
}

/**
 * The node a write leaves: `existing` with the writable columns set from `doc` (all of them, or with
 * `merge` only those of the members `doc` has or removes), or a new row starting from `seed` (its
 * key columns, which child rows refer to).
 */
export function planNode(fields: FieldMap, doc: unknown, existing: RowNode | undefined, rules: TableRules, where = '', seed: Row = {}, merge?: WriteMerge): PlannedNode {
  const node: PlannedNode = {
    row: existing ? { ...existing.row } : { ...seed },
    ...(existing ? { original: existing.row } : {}),
    written: true,
    children: new Map(existing ? [...existing.children].map(([c, rows]) => [c, rows.map(keepNode)]) : []),
    removed: new Map(),
  };
  applyFields(fields, doc, node, rules, where, merge);
  return node;
}
