/**
 * What the `node:http` and Express bindings share: reading a request into a `CoreRequest`, writing
 * a `CoreAnswer`, and draining a refused body so its answer arrives.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_VALUES, MAX_WRITE_ARRAY_ITEMS } from '../../contract/limits';
import { readJsonBodyOrDrain, type RequestBodyOptions } from '../../http/request-body';
import type { RequestObservation } from '../request-observation';
import { OPERATIONS, type CoreAnswer, type OperationName, type StoreCore } from '../store-core';

/**
 * How a write body is read: at most `maxBytes`, no array longer than `MAX_WRITE_ARRAY_ITEMS`, at
 * most `MAX_BODY_VALUES` values (both counted before parsing, so a hostile body costs no parse).
 */
export const writeBodyLimits = (maxBytes: number): RequestBodyOptions => ({ maxBytes, maxArrayItems: MAX_WRITE_ARRAY_ITEMS, maxValues: MAX_BODY_VALUES });

/** The write body of a Node request: `readJsonBody`, and on a refusal the rest is drained first. */
export function bodyReader(req: IncomingMessage, maxBytes: number): () => Promise<unknown> {
  return () => readJsonBodyOrDrain(req, writeBodyLimits(maxBytes));
}

/** Writes an answer: JSON, `nosniff`, the exact length, `Connection: close` when asked; no body to `HEAD`. */
export function send(req: IncomingMessage, res: ServerResponse, out: CoreAnswer): void {
  if (res.headersSent) return;
  // A list page knows its byte length: the text goes out as is, encoded once by Node on the socket.
  // Otherwise it is encoded once here (Buffer.byteLength and then end(string) would walk it twice).
  const body = out.bytes === undefined ? Buffer.from(out.body, 'utf8') : out.body;
  const length = typeof body === 'string' ? out.bytes! : body.length;
  // One writeHead (headers a host set before stay, merged by Node) rather than a setHeader each.
  const headers: Record<string, string | number> = { ...out.headers, 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff', 'content-length': length };
  if (out.close) headers.connection = 'close';
  res.writeHead(out.status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The query string of a request URL, without `?`. */
export function rawQueryOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}

/** The path of a request URL, without the query. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Observes a request when the core logs or measures; a caller gone before the end is a 499. */
function observeResponse(core: StoreCore, res: ServerResponse, operation: string, route: string, method: string, rawQuery: string): RequestObservation | undefined {
  if (!core.observed) return undefined;
  const observation = core.observe(operation, route, method, rawQuery);
  const done = () => observation.end(res.writableFinished ? res.statusCode : 499);
  res.once('finish', done);
  res.once('close', done);
  return observation;
}

/**
 * Serves one matched operation on a Node request: observation (logs, metrics; a caller gone before
 * the end is recorded as 499), an abort signal when the caller leaves, the core, the answer.
 */
export async function serveNode(core: StoreCore, operation: OperationName, req: IncomingMessage, res: ServerResponse, id: string | undefined, clientAddress: () => string | undefined): Promise<void> {
  const url = req.url ?? '/';
  const rawQuery = rawQueryOf(url);
  const method = req.method ?? 'GET';
  const observation = observeResponse(core, res, operation, OPERATIONS[operation].path, method, rawQuery);
  const onClose = (listener: () => void) => {
    const closed = () => {
      if (!res.writableEnded) listener();
    };
    res.on('close', closed);
    return () => res.off('close', closed);
  };
  try {
    const out = await core.handle(operation, { method, headers: req.headers, rawQuery, id, clientAddress, readBody: bodyReader(req, core.config.maxBodyBytes), onClose, observation });
    send(req, res, out);
  } catch (err) {
    // `handle` never rejects; this is a last line against a bug, never a stack to the caller.
    send(req, res, core.failure(err, operation, observation?.logger));
  }
}

/** Serves a routing failure (404, 405, 400) with the same observation as any request. */
export function sendRouteError(core: StoreCore, req: IncomingMessage, res: ServerResponse, error: unknown): void {
  const observation = observeResponse(core, res, 'none', 'unmatched', req.method ?? 'GET', rawQueryOf(req.url ?? ''));
  send(req, res, core.failure(error, 'route', observation?.logger));
}
