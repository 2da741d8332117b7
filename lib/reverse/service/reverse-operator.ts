/**
 * The operator routes, framework-free (the bindings check that the client is on loopback first):
 *
 * - `GET /connections`: every connection's status view, by name;
 * - `GET /connections/:ref/status`: one connection's view;
 * - `POST /connections/:ref/queue`: the deployed service's buttons: `{kind: "push"}` ("Fetch
 *   updates"), `{kind: "pull"}` ("Send updates": products, then orders), `{kind: "pull", entity,
 *   ids?}`, `{kind: "pingsample"}`, and `{kind: "cancel", transaction?}` (ends the running one).
 *
 * `:ref` is the connection's name or its key. It is decoded here, after the loopback check: a
 * malformed escape or a control character is a 400 `{error}`, never an exception.
 */
import { FORBIDDEN_CHARACTERS, hasForbiddenCharacter } from '../../contract/webhook';
import { StorebridgeError } from '../../errors';
import type { ReverseResponse } from './reverse-handlers';
import type { ReverseService } from './reverse-service';
import type { TransactionRequest } from './reverse-machine';

export interface OperatorRequest {
  readonly method: string;
  /** The path from `/connections` on, as received (not decoded). */
  readonly path: string;
  /** Reads the JSON body (only called for the queue). Throws an error with `status` for a bad body. */
  readonly body: () => Promise<unknown>;
}

const reply = (status: number, body: Record<string, unknown>): ReverseResponse => ({ status, body });
const NOT_FOUND = reply(404, { error: 'not found' });

function decodeRef(raw: string): { ok: true; ref: string } | { ok: false; response: ReverseResponse } {
  let ref: string;
  try {
    ref = decodeURIComponent(raw);
  } catch {
    return { ok: false, response: reply(400, { error: 'the connection in the path is not valid percent-encoding' }) };
  }
  if (ref === '' || hasForbiddenCharacter(ref)) return { ok: false, response: reply(400, { error: `the connection in the path must be a name or key without ${FORBIDDEN_CHARACTERS}` }) };
  return { ok: true, ref };
}

function methodNotAllowed(allow: string): ReverseResponse {
  return reply(405, { error: `method not allowed here; use ${allow}` });
}

async function queue(service: ReverseService, name: string, body: unknown): Promise<ReverseResponse> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return reply(400, { error: 'body: expected {kind: "pull" | "push" | "pingsample" | "cancel", …}' });
  }
  const request = body as { kind?: unknown; transaction?: unknown };
  try {
    if (request.kind === 'cancel') {
      if (request.transaction !== undefined && !Number.isSafeInteger(request.transaction)) return reply(400, { error: 'body: transaction must be a transaction number' });
      return reply(200, { ok: true, cancelled: await service.cancel(name, request.transaction as number | undefined) });
    }
    return reply(200, { ok: true, position: await service.enqueue(name, request as TransactionRequest) });
  } catch (err) {
    if (err instanceof StorebridgeError && err.code === 'INVALID_OPTION') return reply(400, { error: err.message });
    if (err instanceof StorebridgeError && err.code === 'REVERSE_CONFLICT') return reply(409, { error: err.message });
    throw err;
  }
}

/** Answers an operator request (after the loopback check). Failures of the state store reject: answer them 500. */
export async function handleOperator(service: ReverseService, request: OperatorRequest): Promise<ReverseResponse> {
  const segments = request.path.split('/').slice(1); // ['connections', ref?, action?]
  const method = request.method.toUpperCase();
  if (segments.length === 1) {
    if (method !== 'GET') return methodNotAllowed('GET');
    return reply(200, { connections: await service.statuses() });
  }
  if (segments.length !== 3 || (segments[2] !== 'status' && segments[2] !== 'queue')) return NOT_FOUND;
  const action = segments[2];
  if (action === 'status' && method !== 'GET') return methodNotAllowed('GET');
  if (action === 'queue' && method !== 'POST') return methodNotAllowed('POST');
  const decoded = decodeRef(segments[1]);
  if (!decoded.ok) return decoded.response;
  const name = service.connectionOf(decoded.ref);
  if (name === undefined) return NOT_FOUND;
  if (action === 'status') return reply(200, { ...(await service.status(name)) });
  let body: unknown;
  try {
    body = await request.body();
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    return reply(typeof status === 'number' && status >= 400 && status < 500 ? status : 400, { error: err instanceof Error ? err.message : 'the body could not be read' });
  }
  return queue(service, name, body);
}
