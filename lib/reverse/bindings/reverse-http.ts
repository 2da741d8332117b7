/**
 * What the three bindings of the reverse service share (Express, `node:http`, Fetch API): which
 * requests are the service's, the key and body checks before the service sees a call, the loopback
 * check of the operator routes, and the JSON answer. Each binding only adapts its framework's
 * request and response to `ReverseHttpRequest` / `ReverseHttpAnswer`.
 *
 * Per request: `GET /` (when `answerRoot`), `{P}/…` (the daemon's calls: key first, so unknown keys
 * cost no body parsing and learn nothing; then the body of a POST, UTF-8 with a Latin-1 fallback,
 * at most `maxBodyBytes`, nested at most `MAX_JSON_DEPTH`), `/connections…` (operator routes, loopback
 * only, decoded after that check). Anything else is not the service's (`undefined`).
 */
import type { IncomingMessage } from 'node:http';
import { INTERFACE_LIMITS, MAX_BODY_VALUES } from '../../contract/limits';
import { ReachabilitySchema } from '../../contract/messages';
import { REVERSE_BASE_PATH } from '../../contract/reverse-routes';
import { FORBIDDEN_CHARACTERS, hasForbiddenCharacter } from '../../contract/webhook';
import { defineOptions, opt } from '../../options';
import { readJsonBodyOrDrain } from '../../http/request-body';
import { handleOperator } from '../service/reverse-operator';
import { createReverseService, type ReverseService, type ReverseServiceOptions } from '../service/reverse-service';

export interface ReverseBindingOptions {
  /** Largest request body accepted (bytes); larger ones get 413. Default 10 000 000. */
  readonly maxBodyBytes?: number;
  /**
   * Serve the operator routes `GET /connections`, `GET /connections/:name/status` and
   * `POST /connections/:name/queue` (loopback clients only). Default `true`. Turn them off behind a
   * proxy on the same host, where every client looks like loopback.
   */
  readonly operatorRoutes?: boolean;
  /**
   * Answer `GET /` with 200 `{service, ok: true}`. Deployed daemons check that the service's host
   * answers 200 there before anything else. Default `false`: an app that mounts the binding answers
   * `/` itself (and must, with a 200).
   */
  readonly answerRoot?: boolean;
}

/** A binding's options: a `service` from `createReverseService`, or the service's options. */
export type ReverseBindingInput = ({ readonly service: ReverseService } | ReverseServiceOptions) & ReverseBindingOptions;

/** A request as a binding sees it. */
export interface ReverseHttpRequest {
  readonly method: string;
  /** The path and query, relative to where the binding is mounted, as received (not decoded). */
  readonly url: string;
  /** The client's address, for the operator routes' loopback check (`undefined`: not loopback). */
  readonly remoteAddress: string | undefined;
  /** Reads and parses the JSON body; throws an error with an HTTP `status` (400, 413, 415) for a bad one. */
  readonly readBody: () => Promise<unknown>;
  /**
   * The client sent an earlier request on this same HTTP connection (keep-alive reused). The pace's
   * `Connection: close` is for clients that open a connection per call and never close one
   * (deployed daemons): a client that reuses its connection holds one socket anyway, and closing
   * it would only cost it a new one per call. `undefined` (Fetch): unknown, treated as not reused.
   */
  readonly reusedConnection?: boolean;
}

export interface ReverseHttpAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** Close the connection after answering: the body was not (fully) read, or the caller is being paced (see `ReverseResponse.close`). */
  readonly close?: boolean;
  /** A 429's `Retry-After` (seconds). */
  readonly retryAfterSeconds?: number;
}

export interface ReverseHttp {
  readonly service: ReverseService;
  readonly maxBodyBytes: number;
  /** Reads a call's body (see `readCallBody`). */
  readBody(stream: IncomingMessage): Promise<unknown>;
  /** The answer, or `undefined` when the request is not the service's. Never rejects. */
  answer(request: ReverseHttpRequest): Promise<ReverseHttpAnswer | undefined>;
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;
const BASE = `${REVERSE_BASE_PATH}/`;
export const NOT_FOUND: ReverseHttpAnswer = { status: 404, body: { error: 'not found' } };
const ROOT_BODY = { service: 'storebridge reverse-service', ok: true as const } satisfies ReturnType<typeof ReachabilitySchema.parse>;

/**
 * Reads a call's body as every binding does (UTF-8 with a Latin-1 fallback, at most `maxBodyBytes`,
 * no array longer than a push page may be, at most `MAX_BODY_VALUES` values, empty allowed); on a
 * refusal the rest is dropped (bounded) before the answer, so it arrives.
 */
function readCallBody(stream: IncomingMessage, maxBodyBytes: number, maxArrayItems: number): Promise<unknown> {
  return readJsonBodyOrDrain(stream, { maxBytes: maxBodyBytes, latin1Fallback: true, allowEmpty: true, maxArrayItems, maxValues: MAX_BODY_VALUES });
}

function bodyFailure(err: unknown): ReverseHttpAnswer {
  const status = (err as { status?: unknown })?.status;
  const known = typeof status === 'number' && status >= 400 && status < 500;
  return { status: known ? status : 400, body: { error: known && err instanceof Error ? err.message : 'the body could not be read' }, close: true };
}

/** The daemon's calls: `{P}/…` after the base path. */
async function daemonCall(service: ReverseService, request: ReverseHttpRequest, path: string, reusers: Set<string>): Promise<ReverseHttpAnswer> {
  const slash = path.indexOf('/', BASE.length);
  if (slash === -1) return NOT_FOUND;
  let key: string;
  try {
    key = decodeURIComponent(path.slice(BASE.length, slash));
  } catch {
    return NOT_FOUND; // an undecodable key is an unknown key
  }
  if (hasForbiddenCharacter(key)) return { status: 400, body: { error: `the connection key in the path must not contain ${FORBIDDEN_CHARACTERS}` } };
  // An unknown key: answered without reading the body (404; a removed connection's answer names it, see `setConnections`).
  if (!service.knows(key)) return service.handle({ method: request.method, key, path: path.slice(slash) });
  let body: unknown;
  if (request.method.toUpperCase() === 'POST') {
    try {
      body = await request.readBody();
    } catch (err) {
      return bodyFailure(err);
    }
  }
  const answer = await service.handle({ method: request.method, key, path: path.slice(slash), body });
  // The pace's close is for clients that open a connection per call and never close one: a client
  // seen reusing a connection (its first one is never closed: the burst) keeps its connections.
  if (request.reusedConnection) reusers.add(key);
  return answer.close && reusers.has(key) ? { ...answer, close: false } : answer;
}

async function operatorCall(service: ReverseService, request: ReverseHttpRequest, path: string): Promise<ReverseHttpAnswer> {
  if (!LOOPBACK.test(request.remoteAddress ?? '')) return { status: 403, body: { error: 'the operator routes answer loopback clients only' } };
  let bodyFailed = false;
  const answer = await handleOperator(service, {
    method: request.method,
    path,
    body: async () => {
      try {
        return await request.readBody();
      } catch (err) {
        bodyFailed = true;
        throw err;
      }
    },
  });
  return bodyFailed ? { ...answer, close: true } : answer;
}

/** The bindings' own options (`ReverseBindingOptions`), declared once (`lib/options.ts`). */
const BINDING_OPTIONS = {
  maxBodyBytes: opt.int({ min: 1, unit: 'bytes' }).default(INTERFACE_LIMITS.maxPageBytes),
  operatorRoutes: opt.boolean().optional(),
  answerRoot: opt.boolean().optional(),
};
const BINDING = 'the reverse service binding';
const parseBindingOptions = defineOptions(BINDING, BINDING_OPTIONS);
/** With a service already made, the service's options are not the binding's to take. */
const parseServed = defineOptions(BINDING, { service: opt.object<ReverseService>('a ReverseService (createReverseService)'), ...BINDING_OPTIONS });

/** The shared core of the bindings. */
export function createReverseHttp(input: ReverseBindingInput): ReverseHttp {
  if (input === null || typeof input !== 'object') parseBindingOptions(input); // refused: not an options object
  // `remoteAddress` is no option: dropped, as it always was. The rest is the service's.
  const { remoteAddress: _r, maxBodyBytes: m, operatorRoutes: o, answerRoot: a, ...rest } = input as ReverseBindingInput & { remoteAddress?: unknown };
  const own = parseBindingOptions({ maxBodyBytes: m, operatorRoutes: o, answerRoot: a });
  const service = 'service' in rest && rest.service ? parseServed({ ...rest, maxBodyBytes: m, operatorRoutes: o, answerRoot: a }).service : createReverseService(rest as ReverseServiceOptions);
  const { maxBodyBytes } = own;
  const operatorRoutes = own.operatorRoutes !== false;
  const answerRoot = own.answerRoot === true;
  /** Keys of known connections whose client reused an HTTP connection (`reusedConnection`). */
  const reusers = new Set<string>();
  return {
    service,
    maxBodyBytes,
    readBody: (stream) => readCallBody(stream, maxBodyBytes, service.maxPushPageItems),
    async answer(request) {
      const path = request.url.split('?')[0];
      const method = request.method.toUpperCase();
      try {
        if (path === '/' && answerRoot && (method === 'GET' || method === 'HEAD')) return { status: 200, body: ROOT_BODY };
        if (path.startsWith(BASE) || path === REVERSE_BASE_PATH) return await daemonCall(service, request, path, reusers);
        if (operatorRoutes && (path === '/connections' || path.startsWith('/connections/'))) return await operatorCall(service, request, path);
        return undefined;
      } catch {
        // `handle` never rejects; the operator routes reject when the state store fails.
        return { status: 500, body: { error: "the service's state store failed; try again" } };
      }
    },
  };
}

/** The answer's bytes and headers, alike for every binding. */
export function encodeAnswer(answer: ReverseHttpAnswer): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(JSON.stringify(answer.body), 'utf8');
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': String(body.length),
  };
  if (answer.close) headers.connection = 'close';
  if (answer.retryAfterSeconds !== undefined) headers['retry-after'] = String(answer.retryAfterSeconds);
  return { body, headers };
}
