/**
 * Reading a request's JSON body on a server (the store's writes, the reverse service's calls): JSON
 * content types only, a byte limit checked against `Content-Length` first and then while
 * streaming, strict UTF-8 (with an opt-in Latin-1 fallback), a nesting limit, and `JSON.parse`
 * (which makes `__proto__` an own data member, never a prototype; the cores refuse such keys).
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { deeperThan, MAX_JSON_DEPTH } from '../contract/limits';
import { BodyTooLargeError, InvalidBodyError, UnsupportedMediaTypeError } from './http-errors';
import { drain } from './drain';

export interface RequestBodyOptions {
  /** Largest body accepted, in bytes (413 beyond). */
  readonly maxBytes: number;
  /**
   * Decode bytes that are not valid UTF-8 as Latin-1 when the request declared no charset: some
   * deployed daemons send their platform's Latin-1 as `application/json` with no charset. Default: refuse.
   */
  readonly latin1Fallback?: boolean;
  /** Deepest nesting accepted (400 beyond). Default `MAX_JSON_DEPTH`. */
  readonly maxDepth?: number;
  /** An empty body reads as `undefined` instead of a 400 (calls whose body is ignored). Default false. */
  readonly allowEmpty?: boolean;
  /**
   * Most elements any array of the body may hold, and most values in all (413 beyond), counted on
   * the text before it is parsed: a small body of tiny values (`[0,0,…]`, 1.6 M items in 3.2 MB)
   * would otherwise cost a parse of millions of values and the work of each. Default: no limit.
   */
  readonly maxArrayItems?: number;
  readonly maxValues?: number;
}

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json$/;

/** Whether the `Content-Type` names JSON in UTF-8 (`application/json`, `application/*+json`). */
function checkContentType(header: string | undefined): string | undefined {
  if (!header) throw new UnsupportedMediaTypeError('a write body must be JSON: send Content-Type: application/json');
  const [type, ...params] = header.split(';').map((s) => s.trim().toLowerCase());
  if (!JSON_TYPE.test(type)) {
    throw new UnsupportedMediaTypeError(`a write body must be JSON (Content-Type: application/json), got ${JSON.stringify(type.slice(0, 60))}`);
  }
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new UnsupportedMediaTypeError(`a write body must be UTF-8, got charset ${JSON.stringify(charset.slice(0, 30))}`);
  }
  return charset;
}

/**
 * Reads and parses the body. Errors are thrown before or while reading (`HttpError`s: 400, 413,
 * 415); the caller answers them and closes the connection, since an unread body cannot be skipped.
 */
export async function readJsonBody(req: IncomingMessage & { body?: unknown }, options: RequestBodyOptions | number): Promise<unknown> {
  const { maxBytes, latin1Fallback = false, maxDepth = MAX_JSON_DEPTH, allowEmpty = false, maxArrayItems = Infinity, maxValues = Infinity } = typeof options === 'number' ? { maxBytes: options } : options;
  const declaredCharset = req.headers['content-length'] === '0' && allowEmpty && !req.headers['content-type'] ? undefined : checkContentType(req.headers['content-type']);
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    throw new UnsupportedMediaTypeError('compressed write bodies are not accepted (Content-Encoding must be identity)');
  }
  // A host app that parsed JSON already (app.use(express.json())) has consumed the stream.
  if (req.readableEnded && req.body !== undefined) return checkDepth(req.body, maxDepth);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLargeError(maxBytes);

  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        reject(new BodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve();
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new InvalidBodyError(`the body could not be read (${err.message})`));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });

  const bytes = Buffer.concat(chunks, size);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    if (!latin1Fallback || declaredCharset !== undefined) throw new InvalidBodyError('the body is not valid UTF-8');
    text = bytes.toString('latin1');
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') {
    if (allowEmpty) return undefined;
    throw new InvalidBodyError('the body is empty: send the complete item as JSON');
  }
  const tooMany = countsBeyond(text, maxArrayItems, maxValues);
  if (tooMany) throw new BodyTooLargeError(maxBytes, `the body holds ${tooMany}`);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new InvalidBodyError(`the body is not valid JSON${at ? ` (at position ${at})` : ''}`);
  }
  return checkDepth(value, maxDepth);
}

/** The index of the quote that closes a string whose content starts at `from` (the text's length when none does). */
function endOfString(text: string, from: number): number {
  for (let q = text.indexOf('"', from); q !== -1; q = text.indexOf('"', q + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
  return text.length;
}

/**
 * What of a JSON text is beyond the limits (an array longer than `maxArrayItems`, more than
 * `maxValues` values), by one pass over its structure: strings skipped, commas counted per open
 * array. An invalid text is left for `JSON.parse` to refuse.
 */
function countsBeyond(text: string, maxArrayItems: number, maxValues: number): string | undefined {
  if (maxArrayItems === Infinity && maxValues === Infinity) return undefined;
  const open: number[] = []; // per open container: the commas of an array so far, -1 for an object
  let commas = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) i = endOfString(text, i + 1);
    else if (c === 91) open.push(0);
    else if (c === 123) open.push(-1);
    else if (c === 93 || c === 125) open.pop();
    else if (c === 44) {
      if (++commas >= maxValues) return `more than ${maxValues} values`;
      const top = open.length - 1;
      if (top >= 0 && open[top] >= 0 && ++open[top] >= maxArrayItems) return `an array of more than ${maxArrayItems} items`;
    }
  }
  return undefined;
}

function checkDepth(value: unknown, maxDepth: number): unknown {
  if (deeperThan(value, maxDepth)) throw new InvalidBodyError(`the body is nested more than ${maxDepth} levels deep`);
  return value;
}

/**
 * `readJsonBody`, for a server answering the refusal itself: on a refusal the rest of the body is
 * read and dropped (bounded, `drain`) before the error is thrown, so the answer (413, 400, 415)
 * arrives instead of a connection reset.
 */
export async function readJsonBodyOrDrain(req: IncomingMessage & { body?: unknown }, options: RequestBodyOptions | number): Promise<unknown> {
  try {
    return await readJsonBody(req, options);
  } catch (err) {
    await drain(req);
    throw err;
  }
}

/** A Fetch-API request's body as the stream `readJsonBody` reads (it reads only `headers` and the stream). */
export function fetchBodyStream(request: Request): IncomingMessage {
  const stream = request.body ? Readable.fromWeb(request.body as import('node:stream/web').ReadableStream) : Readable.from([]);
  return Object.assign(stream, { headers: Object.fromEntries(request.headers) }) as unknown as IncomingMessage;
}
