/**
 * The HTTP fuzzer's kit: a raw-socket client (so paths, headers and bodies can carry any bytes a
 * peer could send, not only what Node's client lets through), fast-check generators of hostile
 * values across all of Unicode, and the rules every answer must keep:
 *
 * - never a 5xx, never a dropped connection;
 * - a JSON body, and on 4xx an object with a string `error` (writes: the failure structure has it too);
 * - no stack trace, no file path, no internal message in any body;
 * - when the path is a documented operation, its status and body match the OpenAPI document.
 *
 * Requests per target: `STOREBRIDGE_FUZZ_RUNS` (2,000 in `npm test`, 10,000 with `npm run fuzz`).
 * The seed is fixed (`STOREBRIDGE_FUZZ_SEED` overrides it), so a run is a replayable corpus.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import type { DocumentValidator } from '../openapi/openapi-helpers';
import { templateRegex } from '../openapi/openapi-helpers';

export const FUZZ_RUNS = Number(process.env.STOREBRIDGE_FUZZ_RUNS ?? 2000);
export const FUZZ_SEED = Number(process.env.STOREBRIDGE_FUZZ_SEED ?? 20261124);

export interface RawRequest {
  readonly method: string;
  /** The request target as sent, byte for byte (percent-encoding is the generator's business). */
  readonly target: string;
  readonly headers: ReadonlyArray<readonly [string, string | Buffer]>;
  readonly body?: Buffer;
  /** What the generator meant (shown when a rule breaks). */
  readonly label: string;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** Sends one request over a fresh socket (`Connection: close`) and reads the whole answer. */
export function sendRaw(port: number, req: RawRequest, timeoutMs = 20_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err) => {
      clearTimeout(timer);
      // A reset after a complete answer (the server closed first, e.g. after a 413) is not a failure.
      const parsed = chunks.length > 0 ? tryParse(Buffer.concat(chunks), req.method) : undefined;
      if (parsed) resolve(parsed);
      else reject(err);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      const parsed = tryParse(Buffer.concat(chunks), req.method);
      if (parsed) resolve(parsed);
      else reject(new Error(`incomplete or unparsable answer: ${JSON.stringify(Buffer.concat(chunks).subarray(0, 200).toString('latin1'))}`));
    });
    const head = [`${req.method} ${req.target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
    const parts: Buffer[] = [];
    for (const [name, value] of req.headers) parts.push(Buffer.from(`${name}: `, 'latin1'), typeof value === 'string' ? Buffer.from(value, 'latin1') : value, Buffer.from('\r\n'));
    if (req.body !== undefined) head.push(`Content-Length: ${req.body.length}`);
    socket.write(Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n', 'latin1'), ...parts, Buffer.from('\r\n'), req.body ?? Buffer.alloc(0)]));
  });
}

function tryParse(raw: Buffer, method: string): RawResponse | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (method === 'HEAD') return { status: Number(m[1]), headers, body: Buffer.alloc(0) };
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const out: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = body.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) break;
      out.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(out);
  } else if (headers['content-length'] !== undefined && body.length < Number(headers['content-length'])) {
    return undefined;
  }
  return { status: Number(m[1]), headers, body };
}

// ---------------------------------------------------------------------------------------------
// Values

/** Percent-encodes every byte outside the unreserved set: any string becomes a valid URL segment. */
export function encodeBytes(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) out += /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** A string as UTF-8, percent-encoded (lone surrogates become the CESU bytes a sloppy peer sends). */
export function encodeText(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff && !(c <= 0xdbff && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff)) {
      bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
      continue;
    }
    const cp = text.codePointAt(i)!;
    if (cp > 0xffff) i++;
    bytes.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
  }
  return encodeBytes(Buffer.from(bytes));
}

/** Characters from every corner: ASCII, controls, NUL, latin-1, BMP, U+E000–U+FFFF, astral, lone surrogates. */
export const hostileChar = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0x00, max: 0x1f }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('%', '/', '?', '#', ' ', '..', '\\', '"', "'", '<', '&', '=', '+', ';', ',') },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0x7ff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0x800, max: 0xd7ff }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0xe000, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
);

export const hostileString = (maxLength = 24) => fc.string({ unit: hostileChar, maxLength });

/** An id as a peer might send one: plausible, hostile, empty or too long. */
export const hostileId = fc.oneof(
  { weight: 3, arbitrary: hostileString(12) },
  { weight: 1, arbitrary: fc.constantFrom('', '\u0000', 'a\u0000b', '😀', '\uFF61', '𠮷x', '%', '%zz', '..', '.', '__proto__', 'constructor') },
  { weight: 1, arbitrary: fc.nat({ max: 20 }).map((n) => 'x'.repeat(250 + n)) },
);

/** A query/path text mutation of a valid value: flipped character, cut, doubled, emptied, junk. */
export function mutateText(valid: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(valid),
    fc.nat({ max: Math.max(0, valid.length - 1) }).chain((i) => hostileChar.map((c) => valid.slice(0, i) + c + valid.slice(i + 1))),
    fc.nat({ max: valid.length }).map((i) => valid.slice(0, i)),
    fc.constant(valid + valid),
    fc.constant(''),
    hostileString(),
  );
}

/** Deeply nested JSON that `JSON.parse` builds happily: `[[[…]]]` or `{"a":{"a":…}}`. */
export const depthBomb = fc.tuple(fc.integer({ min: 65, max: 20_000 }), fc.boolean()).map(([depth, arrays]) =>
  Buffer.from(arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
);

/** A JSON body: a mutated valid item, random JSON, or bytes that are not JSON (or not UTF-8). */
export function hostileBody(validItems: readonly object[]): fc.Arbitrary<Buffer> {
  const fields = fc.constantFrom('_id', 'sku', 'orderid', 'last_updated', 'title', 'variations', 'orderItems', 'status', 'proto', 'constructor', 'total');
  const mutatedItem = fc.tuple(fc.constantFrom(...validItems), fields, fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString(8))).map(([item, field, value]) => {
    const copy = JSON.parse(JSON.stringify(item)) as Record<string, unknown>;
    // `__proto__` can only be written into JSON text: an object literal would set the prototype.
    copy[field === 'proto' ? '__proto_marker__' : field] = value;
    return Buffer.from(JSON.stringify(copy).replace('"__proto_marker__"', '"__proto__"'));
  });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...validItems).map((i) => Buffer.from(JSON.stringify(i))) },
    { weight: 4, arbitrary: mutatedItem },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) },
    { weight: 1, arbitrary: depthBomb },
    { weight: 1, arbitrary: hostileString(40).map((s) => Buffer.from(s, 'utf8')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '{"_id":', 'null', '[]', '"x"', '{"__proto__":{"polluted":1}}', '{"_id":"a","_id":"b"}').map((s) => Buffer.from(s)) },
  );
}

export const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', '') },
);

// ---------------------------------------------------------------------------------------------
// The rules

const LEAKS = [
  /\n\s+at [^\s]+ \(/, // a stack frame
  /\bat (?:async )?[\w.<>]+ \(\/?[\w./-]+:\d+:\d+\)/,
  /(?:\/work\/|\/home\/|\/usr\/|node_modules|[A-Z]:\\)/, // absolute paths
  /\.(?:ts|js|cjs|mjs):\d+/, // file:line
  /\b(?:TypeError|ReferenceError|SyntaxError|RangeError):/,
  /invalid byte sequence|ER_[A-Z_]+|SQLITE_[A-Z]+|syntax error at or near|duplicate key value/i, // database internals
];

export interface Verdict {
  /** What is wrong with the answer; empty when every rule holds. */
  readonly problems: string[];
  /** The parsed body (when JSON). */
  readonly json?: unknown;
}

/**
 * Checks one answer against the house rules. `documented` (optional) matches the request to the
 * OpenAPI document: `[method, template]` when the path is a documented operation.
 */
export function judge(req: RawRequest, res: RawResponse, validator?: DocumentValidator, templates: readonly string[] = []): Verdict {
  const problems: string[] = [];
  const text = res.body.toString('utf8');
  if (res.status >= 500) problems.push(`status ${res.status}`);
  for (const leak of LEAKS) if (leak.test(text)) problems.push(`the body leaks internals (${leak}): ${text.slice(0, 300)}`);
  if (req.method === 'HEAD') return { problems };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    problems.push(`the body is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
    return { problems };
  }
  if (!/application\/json/i.test(res.headers['content-type'] ?? '')) problems.push(`content-type ${res.headers['content-type'] ?? '(none)'}`);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) problems.push('the body is not a JSON object');
  else if (res.status >= 400 && typeof (json as { error?: unknown }).error !== 'string') problems.push(`a ${res.status} without a string error member`);
  if (validator) {
    const path = decodePathOnly(req.target);
    const template = path === undefined ? undefined : templates.find((t) => templateRegex(t).test(path));
    if (template) {
      const method = req.method.toLowerCase();
      const item = validator.doc.paths[template] as Record<string, unknown>;
      if (item[method]) {
        try {
          const errors = validator.checkResponse(req.method, template, res.status, json);
          if (errors) problems.push(`${req.method} ${template} ${res.status}: the body breaks the document: ${errors}`);
        } catch (err) {
          problems.push((err as Error).message);
        }
      } else if (res.status === 405) {
        // A method the path does not serve: the 405 is documented on the operations that exist.
        const operations = Object.entries(item).filter(([m]) => HTTP_METHODS.has(m));
        const undocumented = operations.filter(([, op]) => !(op as { responses?: Record<string, unknown> }).responses?.['405']);
        if (undocumented.length > 0) problems.push(`${req.method} ${template} 405: not documented on ${undocumented.map(([m]) => m.toUpperCase()).join(', ')} ${template}`);
      }
    }
  }
  return { problems, json };
}

/** The members of an OpenAPI path item that are operations (the others: `parameters`, `summary`, …). */
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** The path of a request target, as the document's templates see it (segments still encoded). */
function decodePathOnly(target: string): string | undefined {
  const q = target.indexOf('?');
  return q < 0 ? target : target.slice(0, q);
}

/** Runs `count` generated requests through `send` and collects every broken rule (first 20 shown). */
export async function fuzz(
  name: string,
  requests: fc.Arbitrary<RawRequest>,
  run: (req: RawRequest) => Promise<{ status: number; problems: string[] }>,
  count = FUZZ_RUNS,
): Promise<{ failures: string[]; sent: number; statuses: Record<number, number> }> {
  const failures: string[] = [];
  const samples = fc.sample(requests, { numRuns: count, seed: FUZZ_SEED });
  const statuses: Record<number, number> = {};
  let sent = 0;
  for (const req of samples) {
    let problems: string[];
    let status = 0;
    try {
      ({ status, problems } = await run(req));
    } catch (err) {
      problems = [`no answer: ${(err as Error).message}`];
    }
    sent++;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (problems.length > 0 && failures.length < 20) failures.push(`[${name}] ${req.label} ${req.method} ${req.target.slice(0, 160)}\n    ${problems.join('\n    ')}`);
  }
  return { failures, sent, statuses };
}
