/**
 * JSON as the deployed Java daemons see it (json-simple 1.x API, as the B1/SAI/ECC sources in `docs/interface.md` use it):
 * an integer token parses to a `Long` (here a `bigint`), a decimal or exponent token to a `Double`
 * (here a `number`), and the casts the daemons make (`(Long) x`, `(long) x`, `(Double) x`) throw a
 * `ClassCastException` on anything else. An empty or non-JSON body is a `ParseException`. Written
 * for these tests from those facts; no daemon code is copied.
 */

export class ParseException extends Error {
  override readonly name = 'ParseException';
}
export class ClassCastException extends Error {
  override readonly name = 'ClassCastException';
}
export class NullPointerException extends Error {
  override readonly name = 'NullPointerException';
}

export type JavaValue = null | boolean | bigint | number | string | JavaValue[] | { [k: string]: JavaValue };
export type JavaObject = { [k: string]: JavaValue };

/** Parses like json-simple: `Long` for integer tokens, `Double` for the others. */
export function parseJava(text: string): JavaValue {
  let i = 0;
  const fail = (what: string): never => {
    throw new ParseException(`Unexpected ${i >= text.length ? 'token END OF FILE' : `character ${text[i]}`} at position ${i} (${what})`);
  };
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++;
  };
  const value = (): JavaValue => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: JavaObject = {};
      ws();
      if (text[i] === '}') return i++, out;
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a key');
        const key = str();
        ws();
        if (text[i++] !== ':') fail('":"');
        out[key] = value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return i++, out;
        else fail('"," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const out: JavaValue[] = [];
      ws();
      if (text[i] === ']') return i++, out;
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return i++, out;
        else fail('"," or "]"');
      }
    }
    if (c === '"') return str();
    for (const [word, v] of [['true', true], ['false', false], ['null', null]] as const) {
      if (text.startsWith(word, i)) return (i += word.length), v;
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) return fail('a value');
    i += m[0].length;
    return m[1] || m[2] ? Number(m[0]) : BigInt(m[0]);
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('a closing quote');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  if (text.trim() === '') fail('a value');
  const out = value();
  ws();
  if (i < text.length) fail('the end');
  return out;
}

/** `JSONObject.toJSONString()`: a `Long` as digits, a `Double` as Java writes it (`50.0`, `1.0E10`). */
export function stringifyJava(v: JavaValue | undefined): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return 'null';
    if (Number.isInteger(v) && Math.abs(v) < 1e7) return `${v}.0`;
    const s = String(v);
    return /e/.test(s) ? s.replace(/e\+?/, 'E').replace(/^(-?\d)E/, '$1.0E') : s;
  }
  if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stringifyJava).join(',')}]`;
  return `{${Object.entries(v)
    .map(([k, x]) => `${JSON.stringify(k)}:${stringifyJava(x)}`)
    .join(',')}}`;
}

/** `(JSONObject) x` */
export function asObject(v: JavaValue | undefined, what: string): JavaObject {
  if (v === null || v === undefined) throw new NullPointerException(`${what} is null`);
  if (typeof v !== 'object' || Array.isArray(v)) throw new ClassCastException(`${what}: ${Array.isArray(v) ? 'JSONArray' : typeof v} cannot be cast to JSONObject`);
  return v;
}
/** `(Long) x` (a `Double` or a `String` is a ClassCastException; null stays null). */
export function asLong(v: JavaValue | undefined, what: string): bigint | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'bigint') throw new ClassCastException(`${what}: ${typeof v === 'number' ? 'Double' : typeof v === 'string' ? 'String' : typeof v} cannot be cast to Long`);
  return v;
}
/** `(long) x`: unboxing, so null is a NullPointerException. */
export function asPrimitiveLong(v: JavaValue | undefined, what: string): bigint {
  const l = asLong(v, what);
  if (l === null) throw new NullPointerException(`${what} is null`);
  return l;
}
/** `(String) x` */
export function asString(v: JavaValue | undefined, what: string): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new ClassCastException(`${what}: ${typeof v === 'bigint' ? 'Long' : typeof v} cannot be cast to String`);
  return v;
}
/** A number read as `((Number) x).doubleValue()`: Long or Double; a String is a ClassCastException. */
export function asNumber(v: JavaValue | undefined, what: string): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return v;
  throw new ClassCastException(`${what}: ${typeof v} cannot be cast to Number`);
}
/** `(boolean) x`: unboxing a missing member is a NullPointerException. */
export function asPrimitiveBoolean(v: JavaValue | undefined, what: string): boolean {
  if (v === null || v === undefined) throw new NullPointerException(`${what} is null`);
  if (typeof v !== 'boolean') throw new ClassCastException(`${what}: cannot be cast to Boolean`);
  return v;
}
