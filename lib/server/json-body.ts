/**
 * Reading a write's JSON body from a Node request: JSON content types only, a byte limit checked
 * against `Content-Length` first and then while streaming, strict UTF-8 `JSON.parse` (which makes
 * `__proto__` an own data member, never a prototype; the write core then refuses such keys).
 */
import type { IncomingMessage } from 'node:http';
import { BodyTooLargeError, InvalidBodyError, UnsupportedMediaTypeError } from './http-errors';

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json$/;

/** Whether the `Content-Type` names JSON in UTF-8 (`application/json`, `application/*+json`). */
function checkContentType(header: string | undefined): void {
  if (!header) throw new UnsupportedMediaTypeError('a write body must be JSON: send Content-Type: application/json');
  const [type, ...params] = header.split(';').map((s) => s.trim().toLowerCase());
  if (!JSON_TYPE.test(type)) {
    throw new UnsupportedMediaTypeError(`a write body must be JSON (Content-Type: application/json), got ${JSON.stringify(type.slice(0, 60))}`);
  }
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new UnsupportedMediaTypeError(`a write body must be UTF-8, got charset ${JSON.stringify(charset.slice(0, 30))}`);
  }
}

/** Thrown before or while reading: the caller answers it and closes the connection. */
export async function readJsonBody(req: IncomingMessage & { body?: unknown }, maxBytes: number): Promise<unknown> {
  checkContentType(req.headers['content-type']);
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    throw new UnsupportedMediaTypeError('compressed write bodies are not accepted (Content-Encoding must be identity)');
  }
  // A host app that parsed JSON already (app.use(express.json())) has consumed the stream.
  if (req.readableEnded && req.body !== undefined) return req.body;
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

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, size));
  } catch {
    throw new InvalidBodyError('the body is not valid UTF-8');
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') throw new InvalidBodyError('the body is empty: send the complete item as JSON');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new InvalidBodyError(`the body is not valid JSON${at ? ` (at position ${at})` : ''}`);
  }
}
