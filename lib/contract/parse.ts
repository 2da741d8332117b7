/**
 * Parsing wire data with the contract schemas.
 *
 * Unknown members are the one deliberate leniency: a store or a service written elsewhere may send
 * fields this kit does not know. They are stripped (never stored, never passed on) and reported as
 * dotted paths so writes can answer them as warnings. Keys that could reach `Object.prototype`
 * (`__proto__`, `constructor`, `prototype`) are refused outright, at any depth.
 */
import type { z } from 'zod';
import { FORBIDDEN_KEYS } from './webhook';

export type ParseResult<T> =
  | { ok: true; value: T; unknownFields: string[] }
  | { ok: false; error: string; unknownFields: string[] };

/** Dotted path of an issue: `variations.0.prices.1.number`. */
function pathOf(path: ReadonlyArray<PropertyKey>): string {
  return path.map(String).join('.');
}

/** One readable line per issue, e.g. `orderItems.0.quantity: expected number, received string`. */
export function describeZodError(error: z.ZodError, prefix = ''): string {
  const lines = error.issues.slice(0, 5).map((issue) => {
    const p = pathOf([...(prefix ? [prefix] : []), ...issue.path]);
    return p ? `${p}: ${issue.message}` : issue.message;
  });
  if (error.issues.length > 5) lines.push(`… and ${error.issues.length - 5} more`);
  return lines.join('; ');
}

/**
 * Where a walk stands: the segments below `base`, pushed and popped as it descends. The dotted path
 * is rendered only for what is reported, so the walks allocate nothing on the common path (they run
 * over every member of every item a sync receives).
 */
type PathStack = Array<string | number>;

/** `base` plus the segments: `a.b.0.c`; an index always takes a dot (`.0` at the top level). */
function renderPath(base: string, stack: PathStack): string {
  let s = base;
  for (const seg of stack) s = typeof seg === 'number' || s ? `${s}.${seg}` : seg;
  return s;
}

/**
 * The declared structure of a schema, compiled once from zod's definitions: an object's members,
 * an array's element; `null` where any member is allowed (records, scalars, unions).
 */
type Shape = { readonly fields: ReadonlyMap<string, Shape> } | { readonly element: Shape } | null;

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
}

const compiled = new WeakMap<z.ZodType, Shape>();

function shapeOf(schema: z.ZodType): Shape {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  const def = (schema as unknown as { def: Def }).def;
  let shape: Shape = null;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
    case 'nonoptional':
      shape = shapeOf(def.innerType!);
      break;
    case 'pipe':
      shape = shapeOf(def.in!);
      break;
    case 'object': {
      const fields = new Map<string, Shape>();
      compiled.set(schema, { fields }); // a schema that contains itself finds this entry
      for (const [key, child] of Object.entries(def.shape!)) fields.set(key, shapeOf(child));
      return { fields };
    }
    case 'array':
      shape = { element: shapeOf(def.element!) };
      break;
  }
  compiled.set(schema, shape);
  return shape;
}

/**
 * One walk over a JSON value: lists members the shape does not declare into `unknown` (not looking
 * below them), and, with `forbidden`, stops at the first `__proto__` / `constructor` / `prototype`
 * key at any depth (records and unknown members included), returning true with `stack` at its path.
 */
function scan(value: unknown, shape: Shape, forbidden: boolean, base: string, stack: PathStack, unknown: string[]): boolean {
  if (typeof value !== 'object' || value === null || (shape === null && !forbidden)) return false;
  if (Array.isArray(value)) {
    const element = shape !== null && 'element' in shape ? shape.element : null;
    for (let i = 0; i < value.length; i++) {
      stack.push(i);
      if (scan(value[i], element, forbidden, base, stack, unknown)) return true;
      stack.pop();
    }
    return false;
  }
  const fields = shape !== null && 'fields' in shape ? shape.fields : undefined;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    stack.push(key);
    if (forbidden && FORBIDDEN_KEYS.has(key)) return true;
    let child: Shape = null;
    if (fields) {
      const declared = fields.get(key);
      if (declared === undefined && !fields.has(key)) unknown.push(renderPath(base, stack));
      else child = declared ?? null;
    }
    if (scan((value as Record<string, unknown>)[key], child, forbidden, base, stack, unknown)) return true;
    stack.pop();
  }
  return false;
}

/** Paths of members present in `value` that `schema` does not declare (records accept any key). */
export function findUnknownFields(schema: z.ZodType, value: unknown, path = ''): string[] {
  const out: string[] = [];
  scan(value, shapeOf(schema), false, path, [], out);
  return out;
}

/** The path of the first `__proto__` / `constructor` / `prototype` key in a JSON value, if any. */
export function findForbiddenKey(value: unknown, path = ''): string | undefined {
  const stack: PathStack = [];
  return scan(value, null, true, path, stack, []) ? renderPath(path, stack) : undefined;
}

/**
 * Parses wire data: forbidden keys refused, types checked, unknown members stripped and listed.
 * `label` prefixes error paths (e.g. `order`).
 */
export function parseWire<S extends z.ZodType>(schema: S, input: unknown, label = ''): ParseResult<z.infer<S>> {
  const stack: PathStack = [];
  const unknownFields: string[] = [];
  if (scan(input, shapeOf(schema), true, label, stack, unknownFields)) {
    return { ok: false, error: `${renderPath(label, stack)}: this key name is not allowed`, unknownFields: [] };
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error, label), unknownFields };
  return { ok: true, value: parsed.data, unknownFields };
}
