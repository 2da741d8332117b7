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
 * An item is returned only when it is valid afterwards, so nothing invalid is ever stored, and each
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
import type { Entity, ItemOf } from './webhook';

export const NORMALISATION_KINDS = [
  /** `"50"` where a number belongs. */
  'number-from-string',
  /** `1001` where a string belongs (ids, `orderid`, `sku`, `buyer.id`, `barcode`, …). */
  'string-from-number',
  /** An epoch-ms number for `dateCreated`/`dateClosed` (`0`: not set, becomes `""`). */
  'date-from-epoch-ms',
  /** `last_updated` as `"<ms> - <n>"` (a deployed daemon's row counter): the milliseconds are kept. */
  'timestamp-from-composite',
  /** A `null` member: treated as absent. */
  'null-dropped',
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

/** What the reader knows of a schema: where strings and numbers belong. */
type Leaf = 'string' | 'number' | 'date' | 'timestamp' | 'other';
type Node = { readonly fields: ReadonlyMap<string, Node> } | { readonly element: Node } | { readonly leaf: Leaf };

const DATE_FIELDS = new Set(['dateCreated', 'dateClosed']);
const compiled = new WeakMap<z.ZodType, Node>();

function nodeOf(schema: z.ZodType, field = ''): Node {
  const cached = field === '' ? compiled.get(schema) : undefined;
  if (cached) return cached;
  const def = (schema as unknown as { def: { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; innerType?: z.ZodType; in?: z.ZodType } }).def;
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
      for (const [key, child] of Object.entries(def.shape!)) fields.set(key, nodeOf(child, key));
      node = { fields };
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

/** Walks `value` along `node`, converting leaves and dropping nulls in place. */
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
  if (value === null && !Array.isArray(container)) {
    delete (container as Record<string, unknown>)[key as string];
    out.push({ path, kind: 'null-dropped' });
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

/**
 * Reads one item of `entity` as a peer sent it: normalises it **in place** (pass freshly parsed
 * JSON, or a copy), then parses it with the webhook schema (unknown members stripped and listed,
 * forbidden keys refused). `label` prefixes paths in the error (e.g. `products.3`).
 */
export function readItem<E extends Entity>(entity: E, raw: unknown, label = ''): ReadItemResult<ItemOf<E>> {
  const d = entityOf(entity);
  const normalisations: Normalisation[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, error: `${label ? `${label}: ` : ''}expected a JSON object (a ${d.noun})`, normalisations };
  }
  normalise(raw, nodeOf(d.schema), '', normalisations);
  const item = raw as Record<string, unknown>;
  if (item._id === undefined) {
    const natural = item[d.naturalKey];
    if (typeof natural === 'string' && natural !== '') {
      item._id = natural;
      normalisations.push({ path: '_id', kind: 'id-from-natural-key' });
    }
  }
  const parsed = parseWire(d.schema, item, label);
  if (!parsed.ok) return { ok: false, error: parsed.error, normalisations };
  return { ok: true, item: parsed.value as ItemOf<E>, normalisations, unknownFields: parsed.unknownFields };
}
