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

/** Paths of members present in `value` that `schema` does not declare (records accept any key). */
export function findUnknownFields(schema: z.ZodType, value: unknown, path = ''): string[] {
  const out: string[] = [];
  walkUnknown(schema, value, path, out);
  return out;
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
}

function walkUnknown(schema: z.ZodType, value: unknown, path: string, out: string[]): void {
  const def = (schema as unknown as { def: Def }).def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
    case 'nonoptional':
      return walkUnknown(def.innerType!, value, path, out);
    case 'pipe':
      return walkUnknown(def.in!, value, path, out);
    case 'object': {
      if (!isPlainObject(value)) return;
      const shape = def.shape!;
      for (const key of Object.keys(value)) {
        const child = path ? `${path}.${key}` : key;
        if (!Object.prototype.hasOwnProperty.call(shape, key)) out.push(child);
        else walkUnknown(shape[key], value[key], child, out);
      }
      return;
    }
    case 'array':
      if (Array.isArray(value)) value.forEach((v, i) => walkUnknown(def.element!, v, `${path}.${i}`, out));
      return;
    default:
      return;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The path of the first `__proto__` / `constructor` / `prototype` key in a JSON value, if any. */
export function findForbiddenKey(value: unknown, path = ''): string | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findForbiddenKey(value[i], `${path}.${i}`);
      if (hit) return hit;
    }
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      const child = path ? `${path}.${key}` : key;
      if (FORBIDDEN_KEYS.has(key)) return child;
      const hit = findForbiddenKey(value[key], child);
      if (hit) return hit;
    }
  }
  return undefined;
}

/**
 * Parses wire data: forbidden keys refused, types checked, unknown members stripped and listed.
 * `label` prefixes error paths (e.g. `order`).
 */
export function parseWire<S extends z.ZodType>(schema: S, input: unknown, label = ''): ParseResult<z.infer<S>> {
  const forbidden = findForbiddenKey(input, label);
  if (forbidden) return { ok: false, error: `${forbidden}: this key name is not allowed`, unknownFields: [] };
  const parsed = schema.safeParse(input);
  const unknownFields = findUnknownFields(schema, input, label);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error, label), unknownFields };
  return { ok: true, value: parsed.data, unknownFields };
}
