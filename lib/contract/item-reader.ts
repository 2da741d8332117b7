/**
 * The tolerant item reader: turns an item as real peers send it into the webhook form, and says
 * what it had to change. Deployed stores and daemons (docs/interface.md "What deployed peers
 * send") write numbers as strings (`"quantity": "50"`), ids and buyer ids as numbers, dates as
 * epoch milliseconds (`dateClosed: 0`), `null` for absent members, and leave `_id` out (keying the
 * item by `sku` / `orderid`). The spec's own reverse form writes quantities and money as strings.
 *
 * Every change is lossless or refused: a numeric string becomes a number only when the double
 * writes back as the same decimal (`decimalStringToNumber`); anything the reader cannot convert
 * exactly is left as it is, and the schema then refuses the item with a message naming the field.
 *
 * **It repairs rather than refuses where nothing is lost.** A member whose value is empty (`null`,
 * or `""` where a number or an object belongs) is absent; a member whose *required* part is empty
 * (a video `{"url": null}`, a price without its `number`, a `total` without its `currency`) is
 * dropped whole, the smallest optional unit that holds it (an array entry, an optional member), and
 * the item is kept. An item is quarantined only when no valid item remains: no usable id, or a
 * value present that cannot be read without loss (`quantity: "2.5"`, `title: {…}`). An item is
 * returned only when it is valid afterwards, so nothing invalid is ever stored, and each
 * normalisation is listed (path and kind) for the caller to count and report.
 *
 * @example
 * ```ts
 * const r = readItem('orders', { orderid: 1001, dateCreated: 1517360038797, total: { amount: '450.5', currency: 'MXN' } });
 * // r.ok, r.item = { _id: '1001', orderid: '1001', dateCreated: '2018-01-31T00:53:58.797Z', total: { amount: 450.5, currency: 'MXN' } }
 * // r.normalisations.map((n) => n.kind) = ['string-from-number', 'id-from-natural-key', 'date-from-epoch-ms', 'number-from-string']
 * ```
 */
import type { z } from 'zod';
import { decimalStringToNumber } from './converters';
import { entityOf } from './entities';
import { parseWire } from './parse';
import type { Entity, ItemOf } from './entities';

export const NORMALISATION_KINDS = [
  /** `"50"` where a number belongs. */
  'number-from-string',
  /** `1001` where a string belongs (ids, `orderid`, `sku`, `buyer.id`, `barcode`, …). */
  'string-from-number',
  /** An epoch-ms number for `dateCreated`/`dateClosed` (`0`: not set, becomes `""`). */
  'date-from-epoch-ms',
  /** `last_updated` as `"<ms> - <n>"` (a deployed daemon's row counter): the milliseconds are kept. */
  'timestamp-from-composite',
  /** A `null` member or array entry: treated as absent. */
  'null-dropped',
  /** `""` where a number, an object, an array or `_id` belongs: treated as absent. */
  'empty-dropped',
  /** A member whose required part was empty (a video `{"url": null}`, a price without `number`): dropped whole, the item kept. */
  'incomplete-member-dropped',
  /** No `_id`: the item is keyed by its `sku` (products) or `orderid` (orders). */
  'id-from-natural-key',
] as const;
export type NormalisationKind = (typeof NORMALISATION_KINDS)[number];

export interface Normalisation {
  /** Dotted path of the member, e.g. `variations.0.prices.0.number`. */
  readonly path: string;
  readonly kind: NormalisationKind;
}

export type ReadItemResult<T> =
  | { readonly ok: true; readonly item: T; readonly normalisations: readonly Normalisation[]; readonly unknownFields: readonly string[] }
  | { readonly ok: false; readonly error: string; readonly normalisations: readonly Normalisation[] };

/** What the reader knows of a schema: where strings and numbers belong, and which members are required. */
type Leaf = 'string' | 'number' | 'date' | 'timestamp' | 'other';
type Node =
  | { readonly fields: ReadonlyMap<string, Node>; readonly required: ReadonlySet<string> }
  | { readonly element: Node }
  | { readonly leaf: Leaf };

const DATE_FIELDS = new Set(['dateCreated', 'dateClosed']);
const compiled = new WeakMap<z.ZodType, Node>();

type Def = { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; innerType?: z.ZodType; in?: z.ZodType };
const defOf = (schema: z.ZodType) => (schema as unknown as { def: Def }).def;

/** Whether a member's schema accepts its absence. */
function isOptional(schema: z.ZodType): boolean {
  const def = defOf(schema);
  if (def.type === 'optional' || def.type === 'default') return true;
  if (def.type === 'nullable' || def.type === 'readonly') return isOptional(def.innerType!);
  return def.type === 'pipe' && isOptional(def.in!);
}

function nodeOf(schema: z.ZodType, field = ''): Node {
  const cached = field === '' ? compiled.get(schema) : undefined;
  if (cached) return cached;
  const def = defOf(schema);
  let node: Node;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
      return nodeOf(def.innerType!, field);
    case 'pipe':
      return nodeOf(def.in!, field);
    case 'object': {
      const fields = new Map<string, Node>();
      const required = new Set<string>();
      for (const [key, child] of Object.entries(def.shape!)) {
        fields.set(key, nodeOf(child, key));
        if (!isOptional(child)) required.add(key);
      }
      node = { fields, required };
      break;
    }
    case 'array':
      node = { element: nodeOf(def.element!) };
      break;
    case 'string':
      node = { leaf: DATE_FIELDS.has(field) ? 'date' : 'string' };
      break;
    case 'number':
      node = { leaf: field === 'last_updated' ? 'timestamp' : 'number' };
      break;
    default:
      node = { leaf: 'other' };
  }
  if (field === '') compiled.set(schema, node);
  return node;
}

const COMPOSITE_TIMESTAMP = /^(\d{1,16})\s*-\s*\d+$/;
const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

/** The converted leaf, or `undefined` to leave the value as it is (the schema then judges it). */
function convertLeaf(leaf: Leaf, value: unknown): { value: unknown; kind: NormalisationKind } | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) {
    if (leaf === 'string') return { value: String(value), kind: 'string-from-number' };
    if (leaf === 'date') {
      if (value === 0) return { value: '', kind: 'date-from-epoch-ms' };
      const d = new Date(value);
      return Number.isSafeInteger(value) && !Number.isNaN(d.getTime()) ? { value: d.toISOString(), kind: 'date-from-epoch-ms' } : undefined;
    }
    return undefined;
  }
  if (typeof value !== 'string' || (leaf !== 'number' && leaf !== 'timestamp')) return undefined;
  if (leaf === 'timestamp') {
    const m = COMPOSITE_TIMESTAMP.exec(value);
    if (m) return { value: Number(m[1]), kind: 'timestamp-from-composite' };
  }
  if (!NUMERIC.test(value)) return undefined;
  try {
    return { value: decimalStringToNumber(value.trim()), kind: 'number-from-string' };
  } catch {
    return undefined; // not exactly representable: left for the schema to refuse
  }
}

/** What an empty value is, where `node` belongs: `null` anywhere; `""` where no string belongs. */
function emptyKind(value: unknown, node: Node): NormalisationKind | undefined {
  if (value === null) return 'null-dropped';
  if (value !== '') return undefined;
  return 'leaf' in node && (node.leaf === 'string' || node.leaf === 'date' || node.leaf === 'other') ? undefined : 'empty-dropped';
}

/** Walks `value` along `node`, converting leaves and dropping empty members in place (array entries are left to `repair`). */
function normalise(value: unknown, node: Node, path: string, out: Normalisation[]): void {
  if ('element' in node) {
    if (!Array.isArray(value)) return;
    for (let i = 0; i < value.length; i++) normaliseMember(value, i, node.element, path ? `${path}.${i}` : String(i), out);
    return;
  }
  if (!('fields' in node) || typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const record = value as Record<string, unknown>;
  for (const [key, child] of node.fields) {
    if (Object.prototype.hasOwnProperty.call(record, key)) normaliseMember(record, key, child, path ? `${path}.${key}` : key, out);
  }
}

function normaliseMember(container: Record<string, unknown> | unknown[], key: string | number, node: Node, path: string, out: Normalisation[]): void {
  const value = (container as Record<string | number, unknown>)[key];
  const empty = emptyKind(value, node);
  if (empty) {
    if (Array.isArray(container)) return; // an empty entry: `repair` drops it (indices must not move mid-walk)
    delete (container as Record<string, unknown>)[key as string];
    out.push({ path, kind: empty });
    return;
  }
  if ('leaf' in node) {
    const converted = convertLeaf(node.leaf, value);
    if (converted) {
      (container as Record<string | number, unknown>)[key] = converted.value;
      out.push({ path, kind: converted.kind });
    }
    return;
  }
  normalise(value, node, path, out);
}

/** One step of a path from the item down to a member: the container, the key, and what the schema says of the member. */
interface Step {
  readonly container: Record<string, unknown> | unknown[];
  readonly key: string | number;
  /** Whether the member may be left out: an array entry, a record's entry, an optional member. */
  readonly droppable: boolean;
}

/** The steps from `item` to the member at `path`, while the value has the shape to follow. */
function stepsTo(item: Record<string, unknown>, root: Node, path: ReadonlyArray<PropertyKey>): Step[] {
  const steps: Step[] = [];
  let value: unknown = item;
  let node: Node | undefined = root;
  for (const seg of path) {
    if (typeof value !== 'object' || value === null || typeof seg === 'symbol') break;
    const container = value as Record<string, unknown> | unknown[];
    let droppable = true; // an array entry, or the entry of a record (a node the reader does not map)
    if (node && 'fields' in node && typeof seg === 'string') {
      droppable = !node.required.has(seg);
      node = node.fields.get(seg);
    } else node = node && 'element' in node ? node.element : undefined;
    steps.push({ container, key: seg as string | number, droppable });
    value = (container as Record<string | number, unknown>)[seg as string | number];
  }
  return steps;
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === '';
const dotted = (steps: readonly Step[], upTo: number) => steps.slice(0, upTo + 1).map((s) => s.key).join('.');

/**
 * Drops the smallest optional unit holding each empty value the schema refused (a missing required
 * part, a `null` entry), in place. Returns false when an issue is not an empty value (something
 * would be lost) or has no optional unit around it (the item's own `_id`).
 */
function repair(item: Record<string, unknown>, root: Node, issues: readonly z.core.$ZodIssue[], out: Normalisation[]): boolean {
  const drops = new Map<object, Map<string | number, { path: string; kind: NormalisationKind }>>();
  for (const issue of issues) {
    const steps = stepsTo(item, root, issue.path);
    if (steps.length !== issue.path.length) return false;
    const last = steps[steps.length - 1];
    const value = last && (last.container as Record<string | number, unknown>)[last.key];
    if (!last || !isEmpty(value)) return false;
    let at = steps.length - 1;
    while (at >= 0 && !steps[at].droppable) at--;
    if (at < 0) return false;
    const unit = steps[at];
    const kind: NormalisationKind = at < steps.length - 1 ? 'incomplete-member-dropped' : value === null ? 'null-dropped' : 'empty-dropped';
    let keys = drops.get(unit.container);
    if (!keys) drops.set(unit.container, (keys = new Map()));
    if (!keys.has(unit.key)) keys.set(unit.key, { path: dotted(steps, at), kind });
  }
  for (const [container, keys] of drops) {
    // Array entries from the last one down, so the indices still to drop do not move.
    for (const key of [...keys.keys()].sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? b - a : 0))) {
      if (Array.isArray(container)) container.splice(key as number, 1);
      else delete (container as Record<string, unknown>)[key as string];
      out.push(keys.get(key)!);
    }
  }
  return drops.size > 0;
}

/** Rounds of repair before the reader gives up (each one can only remove members, so few are ever needed). */
const MAX_REPAIRS = 4;

/**
 * Reads one item of `entity` as a peer sent it: normalises it **in place** (pass freshly parsed
 * JSON, or a copy), repairs what is empty (`repair`), then parses it with the webhook schema
 * (unknown members stripped and listed, forbidden keys refused). `label` prefixes paths in the
 * error (e.g. `products.3`).
 */
export function readItem<E extends Entity>(entity: E, raw: unknown, label = ''): ReadItemResult<ItemOf<E>> {
  const d = entityOf(entity);
  const normalisations: Normalisation[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, error: `${label ? `${label}: ` : ''}expected a JSON object (a ${d.noun})`, normalisations };
  }
  const root = nodeOf(d.schema);
  normalise(raw, root, '', normalisations);
  const item = raw as Record<string, unknown>;
  if (item._id === '') {
    delete item._id;
    normalisations.push({ path: '_id', kind: 'empty-dropped' });
  }
  if (item._id === undefined) {
    const natural = item[d.naturalKey];
    if (typeof natural === 'string' && natural !== '') {
      item._id = natural;
      normalisations.push({ path: '_id', kind: 'id-from-natural-key' });
    }
  }
  let parsed = parseWire(d.schema, item, label);
  for (let round = 0; !parsed.ok && round < MAX_REPAIRS; round++) {
    const checked = d.schema.safeParse(item);
    if (checked.success || !repair(item, root, checked.error.issues, normalisations)) break;
    parsed = parseWire(d.schema, item, label);
  }
  if (!parsed.ok) return { ok: false, error: parsed.error, normalisations };
  return { ok: true, item: parsed.value as ItemOf<E>, normalisations, unknownFields: parsed.unknownFields };
}
