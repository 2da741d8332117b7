/**
 * The mapping file: which of a shop's tables and columns hold the products and orders the
 * webhooks serve. Its zod schema is derived from the contract's item schemas
 * (`lib/contract/webhook.ts`), so every member the contract has can be mapped, under the same
 * name, and a constant is checked with the member's own schema: the format is stated once. The
 * JSON Schema shipped as `docs/mapping.schema.json` is generated from it (`mappingJsonSchema()`,
 * `storebridge map schema`). The format is documented in docs/mapping.md.
 *
 * @example The smallest useful file: one flat table, read only.
 * ```json
 * {
 *   "version": 1,
 *   "products": {
 *     "table": "products",
 *     "id": "id",
 *     "lastUpdated": { "column": "updated_at", "type": "iso-text" },
 *     "fields": { "sku": "sku", "title": "name" }
 *   }
 * }
 * ```
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import * as webhook from '../../lib/contract/webhook';
import { OrderSchema, ProductSchema } from '../../lib/contract/webhook';
import type { Entity } from '../../lib/contract/entities';
import { InvalidMappingError } from './mapping-errors';
import { ENTITIES, entityOf } from '../../lib/contract/entities';

/** How the `last_updated` column holds time. */
export const TIME_TYPES = ['epoch-ms', 'epoch-s', 'timestamp', 'iso-text'] as const;
export type TimeType = (typeof TIME_TYPES)[number];

/** The one version of the format so far. */
export const MAPPING_VERSION = 1;

// ---------------------------------------------------------------------------------------------
// The schema, derived from the contract
// ---------------------------------------------------------------------------------------------

type AnySchema = z.ZodType;

/** Names of the parts of the schema, as the JSON Schema's `$defs` show them. */
const names = z.registry<{ id: string }>();
const named = <S extends AnySchema>(id: string, schema: S): S => {
  names.add(schema, { id });
  return schema;
};

const ColumnName = named('ColumnName', z
  .string()
  .regex(/^[^.\u0000-\u001f]{1,128}$/, 'must be a column name: 1 to 128 characters, no dot or control character')
  .describe('a column of the table (quoted in every statement, so any name but one with a dot works)'));
const TableName = named('TableName', z
  .string()
  .regex(/^[^.\u0000-\u001f]{1,128}(\.[^.\u0000-\u001f]{1,128})?$/, 'must be a table name, or schema.table')
  .describe('a table or a view: name, or schema.name (PostgreSQL)'));
const Review = named('Review', z
  .string()
  .describe('a note for a person to review (storebridge map infer writes one on every guess); the adapter ignores it')).optional();
const JsonPath = z
  .string()
  .regex(/^[^.]+(\.[^.]+)*$/, 'must be a dotted path into the JSON value: brand, dims.weight, tags.0')
  .describe('where the value is inside the column\'s JSON: member names and array indexes joined by dots');

/** `{column, path?}`: a column's value, or (with `path`) a value inside the JSON the column holds. */
const ColumnSource = named('ColumnSource', z.object({ column: ColumnName, path: JsonPath.optional(), review: Review }).strict());

/** Which columns of a table the write webhooks may set. */
const Writes = named('Writes', z
  .object({
    update: z.array(ColumnName).optional().describe('the columns an update sets (the others are left as they are); absent: updates are refused'),
    create: z.array(ColumnName).optional().describe('the columns a create sets besides the id and time columns; absent: creates are refused'),
    review: Review,
  })
  .strict());

const ChildWrites = named('ChildWrites', Writes.extend({
  delete: z.boolean().optional().describe('delete the rows a write no longer lists (default false: they stay, and are read back)'),
}).strict());

function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  while (s._zod.def.type === 'optional') s = (s as z.ZodOptional<AnySchema>).unwrap();
  return s;
}

function scalarSource(leaf: AnySchema): AnySchema {
  return z.union([ColumnName, ColumnSource, z.object({ const: leaf, review: Review }).strict()]);
}

const maps = new Map<z.ZodObject, z.ZodObject>();

/** The contract's objects by name (`$defs` of the JSON Schema: `VariationFields`, `MoneyFields`, …). */
const CONTRACT_NAMES = new Map<z.ZodObject, string>(
  Object.entries(webhook)
    .filter(([name, value]) => name.endsWith('Schema') && value instanceof z.ZodObject)
    .map(([name, value]) => [value as z.ZodObject, name.slice(0, -'Schema'.length)]),
);

/** The map of an object: one optional source per member of the contract's object (one schema per object, reused). */
function mapOf(object: z.ZodObject, omit: readonly string[] = []): z.ZodObject {
  const cached = omit.length === 0 ? maps.get(object) : undefined;
  if (cached) return cached;
  const shape: Record<string, AnySchema> = {};
  for (const [name, member] of Object.entries(object.shape)) {
    if (!omit.includes(name)) shape[name] = sourceOf(unwrap(member as AnySchema)).optional();
  }
  const map = z.object(shape).strict();
  if (omit.length === 0) {
    const name = CONTRACT_NAMES.get(object);
    if (name) names.add(map, { id: `${name}Fields` });
    maps.set(object, map);
  }
  return map;
}

function listSource(element: z.ZodObject): AnySchema {
  const fields = mapOf(element);
  return z.union([
    ColumnSource.describe('the whole array, as JSON in the column (or at path inside it)'),
    z.object({ fromRow: fields, review: Review }).strict().describe('one element made of the same row\'s columns (none when all its columns are NULL)'),
    z
      .object({
        table: TableName,
        key: ColumnName.describe('the child table\'s column holding the parent\'s key'),
        parentKey: ColumnName.optional().describe('the parent\'s column that key refers to (default: the entity\'s id column; required under a child table)'),
        orderBy: ColumnName.describe('the child column the elements are ordered by (ascending): a position or the child\'s primary key'),
        fields,
        writes: ChildWrites.optional(),
        review: Review,
      })
      .strict()
      .describe('one element per row of a child table joined by key'),
  ]);
}

function sourceOf(schema: AnySchema): AnySchema {
  const def = schema._zod.def as { type: string; element?: AnySchema; valueType?: AnySchema };
  switch (def.type) {
    case 'string':
    case 'number':
      return scalarSource(schema);
    case 'object':
      return z.union([ColumnSource, mapOf(schema as z.ZodObject)]);
    case 'record':
      return z.union([ColumnSource, z.record(z.string(), scalarSource(unwrap(def.valueType!)))]);
    case 'array': {
      const element = unwrap(def.element!);
      return element._zod.def.type === 'object' ? listSource(element as z.ZodObject) : ColumnSource;
    }
    default:
      throw new Error(`the mapping schema has no source for a contract member of type ${def.type}`);
  }
}

function entitySchema(item: z.ZodObject) {
  return z
    .object({
      table: TableName,
      id: z.union([
        ColumnName,
        z
          .object({
            column: ColumnName,
            sortColumn: ColumnName.optional().describe('a column holding the id as bytes in the same order (e.g. a generated VARBINARY column with an index): paging sorts by it'),
            review: Review,
          })
          .strict(),
      ]),
      lastUpdated: z
        .object({
          column: ColumnName,
          type: z.enum(TIME_TYPES).describe('epoch-ms, epoch-s: an integer; timestamp: the database\'s timestamp type; iso-text: ISO 8601 text in one format'),
          review: Review,
        })
        .strict(),
      fields: mapOf(item, ['_id', 'last_updated']).optional(),
      writes: Writes.optional().describe('absent: the write webhooks are refused for this entity'),
      review: Review,
    })
    .strict();
}

/** The whole file. At least one of `products` and `orders`. */
export const MappingSchema = z
  .object({
    $schema: z.string().optional(),
    version: z.literal(MAPPING_VERSION),
    products: entitySchema(ProductSchema).optional(),
    orders: entitySchema(OrderSchema).optional(),
    review: Review,
  })
  .strict()
  .refine((m) => m.products !== undefined || m.orders !== undefined, { message: 'map products, orders or both' });

/** The JSON Schema of the mapping file (draft 2020-12), generated from `MappingSchema`. */
export function mappingJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(MappingSchema, { io: 'input', metadata: names }),
    title: 'storebridge mapping file',
    description: 'Which tables and columns hold the products and orders storebridge serves (docs/mapping.md).',
  };
}

// ---------------------------------------------------------------------------------------------
// The parsed, normalized mapping
// ---------------------------------------------------------------------------------------------

/** The JSON type of a scalar member: how a column's value is read into it. */
export type LeafKind = 'string' | 'number' | 'integer';

/** Where one member's value comes from. */
export type FieldSource =
  /** A column; `path` (maybe empty) reaches into its JSON. `leaf` is absent for a whole object or array. */
  | { readonly kind: 'column'; readonly column: string; readonly path: readonly string[]; readonly leaf?: LeafKind }
  | { readonly kind: 'const'; readonly value: unknown }
  /** An object (or a record such as `extraattributes`) made of other sources. */
  | { readonly kind: 'object'; readonly members: FieldMap }
  /** An array of one element made of the same row's columns. */
  | { readonly kind: 'row'; readonly element: FieldMap }
  | ChildTable;

export type FieldMap = Readonly<Record<string, FieldSource>>;

/** The columns a write may set on one table; `undefined`: that kind of write is refused. */
export interface TableWrites {
  readonly update?: readonly string[];
  readonly create?: readonly string[];
  /** Child tables: delete the rows a write no longer lists. */
  readonly delete: boolean;
}

export interface ChildTable {
  readonly kind: 'table';
  readonly table: string;
  readonly key: string;
  /** The parent row's column `key` refers to. */
  readonly parentKey: string;
  readonly orderBy: string;
  readonly fields: FieldMap;
  readonly writes: TableWrites;
}

export interface EntityMapping {
  readonly entity: Entity;
  readonly table: string;
  readonly id: { readonly column: string; readonly sortColumn?: string };
  readonly lastUpdated: { readonly column: string; readonly type: TimeType };
  readonly fields: FieldMap;
  readonly writes: TableWrites;
}

export type Mapping = { readonly [E in Entity]?: EntityMapping };

type Raw = Record<string, unknown>;

const isColumnSource = (v: unknown): v is { column: string; path?: string } =>
  typeof v === 'object' && v !== null && typeof (v as Raw).column === 'string';

function leafKind(schema: AnySchema): LeafKind {
  if (schema._zod.def.type === 'string') return 'string';
  return (schema as z.ZodNumber).isInt ? 'integer' : 'number';
}

function columnSource(v: { column: string; path?: string }, leaf?: LeafKind): FieldSource {
  return { kind: 'column', column: v.column, path: v.path ? v.path.split('.') : [], ...(leaf ? { leaf } : {}) };
}

/** Walks a parsed map beside the contract's object schema (which says what each member is). */
function normalizeMap(raw: Raw, object: z.ZodObject, where: string, parentKey: string | undefined): FieldMap {
  const out: Record<string, FieldSource> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name] = normalizeSource(value, unwrap(object.shape[name] as AnySchema), `${where}.${name}`, parentKey);
  }
  return out;
}

function normalizeSource(value: unknown, schema: AnySchema, where: string, parentKey: string | undefined): FieldSource {
  const def = schema._zod.def as { type: string; element?: AnySchema };
  if (def.type === 'string' || def.type === 'number') {
    if (typeof value === 'string') return { kind: 'column', column: value, path: [], leaf: leafKind(schema) };
    if ('const' in (value as Raw)) return { kind: 'const', value: (value as Raw).const };
    return columnSource(value as { column: string; path?: string }, leafKind(schema));
  }
  if (isColumnSource(value)) return columnSource(value);
  if (def.type === 'record') {
    const members: Record<string, FieldSource> = {};
    for (const [k, v] of Object.entries(value as Raw)) members[k] = normalizeSource(v, z.string(), `${where}.${k}`, parentKey);
    return { kind: 'object', members };
  }
  if (def.type === 'object') return { kind: 'object', members: normalizeMap(value as Raw, schema as z.ZodObject, where, parentKey) };
  const element = unwrap(def.element!) as z.ZodObject;
  const v = value as Raw;
  if (v.fromRow !== undefined) return { kind: 'row', element: normalizeMap(v.fromRow as Raw, element, `${where}.fromRow`, parentKey) };
  const resolvedParent = (v.parentKey as string | undefined) ?? parentKey;
  if (resolvedParent === undefined) throw new InvalidMappingError(`${where}.parentKey: required for a child table under a child table (the parent table's column that key refers to)`);
  return {
    kind: 'table',
    table: v.table as string,
    key: v.key as string,
    parentKey: resolvedParent,
    orderBy: v.orderBy as string,
    // A grandchild's parent is this child table, which has no declared id column.
    fields: normalizeMap((v.fields ?? {}) as Raw, element, `${where}.fields`, undefined),
    writes: normalizeWrites(v.writes as Raw | undefined),
  };
}

function normalizeWrites(raw: Raw | undefined): TableWrites {
  return { update: raw?.update as string[] | undefined, create: raw?.create as string[] | undefined, delete: raw?.delete === true };
}

/** The columns a table's fields write: every column source's column (JSON paths included). */
export function mappedColumns(fields: FieldMap): Set<string> {
  const out = new Set<string>();
  for (const source of Object.values(fields)) {
    if (source.kind === 'column') out.add(source.column);
    else if (source.kind === 'object') for (const c of mappedColumns(source.members)) out.add(c);
    else if (source.kind === 'row') for (const c of mappedColumns(source.element)) out.add(c);
  }
  return out;
}

/** A write list may only name columns the fields fill (or, for a child table, its position column). */
function checkWrites(where: string, writes: TableWrites, fields: FieldMap, implicit: readonly string[], reserved: readonly string[]): void {
  const mapped = mappedColumns(fields);
  for (const kind of ['update', 'create'] as const) {
    for (const column of writes[kind] ?? []) {
      if (reserved.includes(column)) throw new InvalidMappingError(`${where}.writes.${kind}: "${column}" is set by the adapter itself (the id or the time column); leave it out`);
      if (!mapped.has(column) && !implicit.includes(column)) {
        throw new InvalidMappingError(`${where}.writes.${kind}: column "${column}" is not mapped by any field, so no value would be written to it`);
      }
    }
  }
  for (const [name, source] of Object.entries(fields)) checkChildWrites(`${where}.fields.${name}`, source);
}

function checkChildWrites(where: string, source: FieldSource): void {
  if (source.kind === 'table') checkWrites(where, source.writes, source.fields, [source.orderBy], [source.key]);
  else if (source.kind === 'object') for (const [k, s] of Object.entries(source.members)) checkChildWrites(`${where}.${k}`, s);
  else if (source.kind === 'row') for (const [k, s] of Object.entries(source.element)) checkChildWrites(`${where}.${k}`, s);
}


function normalizeEntity(entity: Entity, raw: Raw): EntityMapping {
  const id = typeof raw.id === 'string' ? { column: raw.id } : (raw.id as { column: string; sortColumn?: string });
  const lastUpdated = raw.lastUpdated as { column: string; type: TimeType };
  const fields = normalizeMap((raw.fields ?? {}) as Raw, entityOf(entity).schema, `${entity}.fields`, id.column);
  const writes = normalizeWrites(raw.writes as Raw | undefined);
  checkWrites(entity, writes, fields, [], [id.column, lastUpdated.column]);
  return {
    entity,
    table: raw.table as string,
    id: { column: id.column, ...(id.sortColumn ? { sortColumn: id.sortColumn } : {}) },
    lastUpdated: { column: lastUpdated.column, type: lastUpdated.type },
    fields,
    writes,
  };
}

/** The most specific message of a zod error: a union's best branch instead of "Invalid input". */
function issueText(issue: z.core.$ZodIssue, base: ReadonlyArray<PropertyKey> = []): string {
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // The branch with the fewest problems (then the deepest one) is the one the author meant.
    const rank = (branch: z.core.$ZodIssue[]) => branch.length * 100 - branch[0].path.length;
    const best = issue.errors.reduce((a, b) => (rank(b) < rank(a) ? b : a));
    return issueText(best[0], path);
  }
  const where = path.map(String).join('.');
  return where ? `${where}: ${issue.message}` : issue.message;
}

/**
 * Checks and normalizes a parsed mapping file. Throws `InvalidMappingError` naming the member.
 *
 * @example
 * ```ts
 * const mapping = parseMapping(JSON.parse(readFileSync('storebridge-map.json', 'utf8')));
 * ```
 */
export function parseMapping(input: unknown, origin = 'the mapping'): Mapping {
  const parsed = MappingSchema.safeParse(input);
  if (!parsed.success) throw new InvalidMappingError(`${origin}: ${issueText(parsed.error.issues[0])}`);
  try {
    const out: { -readonly [E in Entity]?: EntityMapping } = {};
    for (const entity of ENTITIES) {
      const raw = parsed.data[entity] as Raw | undefined;
      if (raw) out[entity] = normalizeEntity(entity, raw);
    }
    return out;
  } catch (err) {
    if (err instanceof InvalidMappingError) throw new InvalidMappingError(`${origin}: ${err.message}`);
    throw err;
  }
}

/** Reads and parses a mapping file (JSON). Throws `InvalidMappingError` naming the file. */
export function readMappingFile(path: string): Mapping {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InvalidMappingError(`cannot read the mapping file ${JSON.stringify(path)} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InvalidMappingError(`the mapping file ${JSON.stringify(path)} is not JSON: ${(err as Error).message}`);
  }
  return parseMapping(json, path);
}
