/**
 * The store's framework-agnostic core: a request in (method, headers, raw query string, path id,
 * client address, a body reader), `{status, headers, body}` out. It routes with the contract's
 * table, checks the key, applies the rate limits, runs the operation under the time budget, and
 * maps every failure to a JSON `{error}` without internals. The bindings (`bindings/`: Express,
 * `node:http`, Fetch) only translate their host's request and write the answer.
 *
 * @example Serving the list webhook from any host:
 * ```ts
 * import { createStoreCore } from 'storebridge/server';
 * const core = createStoreCore({ adapter, svcKeys: [process.env.SVC_KEY!] });
 * const out = await core.handle('listProducts', { headers: { svckey: key }, rawQuery: 'offset=0' });
 * // out.status 200, out.body '{"paging":{…},"products":[…]}'
 * ```
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { MemoryIdempotencyStore } from '../adapter';
import { entityOf } from '../contract/entities';
import type { LIST_QUERY } from '../contract/query';
import { IDEMPOTENCY_KEY_HEADER } from '../contract/webhook';
import { WEBHOOK_ROUTES, type WebhookOperation, type WebhookRoute } from '../contract/webhook-routes';
import { AdapterTimeoutError, ItemTooLargeError, StorageError, StorebridgeError } from '../errors';
import { Deadline } from './deadline';
import { HttpError, MethodNotAllowedError, RateLimitedError } from '../http/http-errors';
import { parseListQuery } from './list-query';
import { addressKey, WindowLimiter } from './rate-limit';
import { getBareItem, getItem, getItems, listPage, type CoreHttpResponse } from './read-core';
import { RequestObservation, jobidOf } from './request-observation';
import { parseRouterOptions, type Logger, type RouterConfig, type StoreRouterOptions } from './router-options';
import { handleWrite, writeFailure } from './write-core';

export type { CoreHttpResponse } from './read-core';

/** The webhook operations (the contract's route table, `lib/contract/webhook-routes.ts`). */
export type OperationName = WebhookOperation;
export type OperationInfo = WebhookRoute;
export const OPERATIONS = WEBHOOK_ROUTES;

/**
 * Request headers as a host has them: Node's `IncomingHttpHeaders` (lower-case names) or a Fetch
 * `Headers`. A header sent twice reads as its values joined with `, ` in both.
 */
export type HeaderBag = IncomingHttpHeaders | { get(name: string): string | null };

export interface CoreRequest {
  readonly headers: HeaderBag;
  /** The query string as received, with or without the leading `?`. */
  readonly rawQuery: string;
  /** The item id of by-ID operations (already URL-decoded). */
  readonly id?: string;
  /** The parsed JSON body of writes (or give `readBody`). */
  readonly body?: unknown;
  /**
   * Reads the write body (only called for writes, after the key and the limits passed). Throws the
   * body's `HttpError` (400, 413, 415); a binding drains what it did not read before throwing.
   */
  readonly readBody?: () => Promise<unknown>;
  /** The HTTP method (for logs; `HEAD` is served as `GET`). */
  readonly method?: string;
  /**
   * The caller's address: what refused keys are counted by. A function is called only when a key
   * is refused (Express's `req.ip` parses proxy headers: no cost for the requests that pass).
   */
  readonly clientAddress?: string | (() => string | undefined);
  /** Aborted when the caller goes away. */
  readonly signal?: AbortSignal;
  /**
   * Or, cheaper than a signal per request: registers a listener for the caller going away and
   * returns its removal (the `node:http` bindings use the response's `close` event).
   */
  readonly onClose?: (listener: () => void) => () => void;
  /** The request's observation (`StoreCore.observe`): its logger gets this request's failures. */
  readonly observation?: RequestObservation;
  /** Who sent it, as `authenticate` found (`AuthResult.keyHash`): scopes its Idempotency-Keys. Set by `handle`. */
  readonly caller?: string;
}

/** What `StoreCore.handle` answers: a response, and whether the connection must close after it. */
export interface CoreAnswer extends CoreHttpResponse {
  /** The request body was not (entirely) read: answer with `Connection: close`. */
  readonly close?: boolean;
}

export type AuthResult =
  | { readonly ok: true; readonly keyId: string; /** SHA-256 hex of the verdict's `limitKey`, else of the key: what rate limits count by. */ readonly keyHash: string }
  | { readonly ok: false; readonly response: CoreHttpResponse };

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } as const;

/** A JSON `{error}` response. */
export function errorResponse(status: number, message: string, headers?: Record<string, string>): CoreHttpResponse {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify({ error: message }) };
}

/** The value of a header in either kind of header bag. */
function headerValue(headers: HeaderBag, lowerName: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(lowerName) ?? undefined;
  const v = (headers as IncomingHttpHeaders)[lowerName];
  return Array.isArray(v) ? v.join(', ') : v;
}

export class StoreCore {
  private readonly keyLimiter: WindowLimiter | undefined;
  private readonly failedAuthLimiter: WindowLimiter | undefined;
  /** Whether requests are logged or measured (bindings skip the observation otherwise). */
  readonly observed: boolean;
  /** Idempotency-Key records for an adapter that keeps none: this router's own, in memory. */
  private readonly idempotency = new MemoryIdempotencyStore();

  constructor(readonly config: RouterConfig) {
    const rl = config.rateLimit;
    this.keyLimiter = rl ? new WindowLimiter(rl.limit, rl.windowMs, rl.store) : undefined;
    this.failedAuthLimiter = rl && rl.failedAuth ? new WindowLimiter(rl.failedAuth.limit, rl.failedAuth.windowMs, rl.failedAuth.store, false) : undefined;
    this.observed = config.logger !== undefined || config.metrics !== undefined;
  }

  /**
   * Starts observing one request: a logger bound to its `jobid` (or marked untracked) and
   * operation, and (at `end`) its log line and metrics. `route` is the operation's route pattern,
   * never the raw path.
   */
  observe(operation: string, route: string, method: string, rawQuery: string): RequestObservation {
    return new RequestObservation(this.config, observedOperation(operation, rawQuery), route, method, jobidOf(rawQuery));
  }

  /**
   * Checks the key headers (`keyHeaders`, default `SvcKey` and `C2SKey`; never `Authorization`,
   * never the query). Two of them with different values are refused. Nothing else runs before it.
   */
  async authenticate(headers: HeaderBag, observation?: RequestObservation): Promise<AuthResult> {
    const { keyHeaders, keyHeaderNames } = this.config;
    let presented: string | undefined;
    let presentedIn = keyHeaders[0];
    let conflict = false;
    for (let i = 0; i < keyHeaderNames.length; i++) {
      const value = headerValue(headers, keyHeaderNames[i]);
      if (!value) continue;
      observation?.redact(value);
      if (presented === undefined) [presented, presentedIn] = [value, keyHeaders[i]];
      else if (value !== presented) conflict = true;
    }
    const refuse = (message: string): AuthResult => ({ ok: false, response: errorResponse(401, message, { 'www-authenticate': keyHeaders[0] }) });
    if (conflict) return refuse(`the ${keyHeaders.join(' and ')} headers carry different keys; send one key`);
    if (presented === undefined) {
      const hint = headerValue(headers, 'authorization') !== undefined ? ' (a key in the Authorization header is not accepted)' : '';
      return refuse(`missing ${keyHeaders.join(' or ')} header${hint}`);
    }
    let verdict;
    try {
      verdict = await this.config.verifier.verify(presented, this.config.now());
    } catch (err) {
      return { ok: false, response: this.failure(err, 'authenticate', observation?.logger) };
    }
    if (!verdict.ok) {
      observation?.logger?.warn({ reason: verdict.reason }, 'key refused');
      // Named after the header the caller used: a deployed service sends only C2SKey.
      const name = presentedIn;
      return refuse(verdict.reason === 'expired' ? `the ${name} has expired` : verdict.reason === 'revoked' ? `the ${name} has been revoked` : `invalid ${name}`);
    }
    if (observation) observation.keyId = verdict.keyId;
    // Hashed only when asked for (the per-key rate limit): one SHA-256 less per request without it.
    const limitKey = verdict.limitKey ?? presented;
    let keyHash: string | undefined;
    return {
      ok: true,
      keyId: verdict.keyId,
      get keyHash() {
        return (keyHash ??= createHash('sha256').update(limitKey, 'utf8').digest('hex'));
      },
    };
  }

  /**
   * The key check and both rate limits: `undefined` when the request may go on (with the headers
   * to answer with), else the refusal. A valid key is never refused by the failed-key limit; it
   * counts against its own per-key limit.
   */
  private async admit(request: CoreRequest, observation: RequestObservation | undefined, write: boolean): Promise<{ refusal?: CoreHttpResponse; headers?: Readonly<Record<string, string>>; caller?: string }> {
    const auth = await this.authenticate(request.headers, observation);
    if (!auth.ok) {
      if (!this.failedAuthLimiter || auth.response.status !== 401) return { refusal: auth.response };
      const address = typeof request.clientAddress === 'function' ? request.clientAddress() : request.clientAddress;
      const verdict = await this.failedAuthLimiter.hit(addressKey(address));
      if (verdict.allowed) return { refusal: auth.response };
      const name = this.config.keyHeaders[0];
      return { refusal: this.limited(`too many requests with an invalid ${name} from this address`, verdict.retryAfter, verdict.headers) };
    }
    // The caller's digest only matters to a write (its Idempotency-Key's scope): not computed for reads.
    const caller = write ? auth.keyHash : undefined;
    if (!this.keyLimiter) return { caller };
    const verdict = await this.keyLimiter.hit(`key:${auth.keyHash}`);
    if (!verdict.allowed) return { refusal: this.limited(`too many requests with this ${this.config.keyHeaders[0]}`, verdict.retryAfter, verdict.headers) };
    return { headers: verdict.headers, caller };
  }

  private limited(what: string, retryAfter: number, headers: Readonly<Record<string, string>>): CoreHttpResponse {
    const out = this.failure(new RateLimitedError(`${what}; retry after ${retryAfter} seconds`), 'rateLimit');
    return { ...out, headers: { ...out.headers, ...headers } };
  }

  /** Runs one operation for an already admitted request (key checked, limits passed). Never rejects. */
  async run(operation: OperationName, request: CoreRequest): Promise<CoreHttpResponse> {
    const op = OPERATIONS[operation];
    const logger = request.observation ? request.observation.logger : this.config.logger;
    const deadline = new Deadline(this.config.timeBudgetMs, request.signal, request.onClose);
    try {
      const out = await this.dispatch(op, request, deadline);
      if (op.kind === 'list' && out.status === 200 && this.config.metrics) this.config.metrics.page(op.entity, out.items ?? 0, Buffer.byteLength(out.body));
      return { ...out, headers: { ...JSON_HEADERS, ...out.headers } };
    } catch (err) {
      // Nobody is listening any more: not a failure of the store, and not worth an error log.
      if (request.signal?.aborted || deadline.callerGone) {
        logger?.info({ operation }, `${operation}: the caller closed the connection`);
        return errorResponse(500, 'the caller closed the connection');
      }
      return this.failure(err, operation, logger);
    } finally {
      deadline.dispose();
    }
  }

  /**
   * The whole operation: the key check, the rate limits, the body (writes), the work; logged and
   * measured. Never rejects. This is what every binding calls.
   */
  async handle(operation: OperationName, request: CoreRequest): Promise<CoreAnswer> {
    const op = OPERATIONS[operation];
    const own = request.observation === undefined && this.observed;
    const observation = own ? this.observe(operation, op.path, request.method ?? op.method, request.rawQuery) : request.observation;
    const out = await this.admitAndRun(operation, op, request, observation);
    if (own) observation!.end(out.status);
    return out;
  }

  private async admitAndRun(operation: OperationName, op: OperationInfo, request: CoreRequest, observation: RequestObservation | undefined): Promise<CoreAnswer> {
    let admitted;
    try {
      admitted = await this.admit(request, observation, op.kind === 'write');
    } catch (err) {
      // The rate-limit store failed (Redis gone): fail closed, logged under the operation.
      return this.failure(err, operation, observation?.logger);
    }
    if (admitted.refusal) return admitted.refusal;
    let body = request.body;
    if (op.kind === 'write' && request.readBody) {
      try {
        body = await request.readBody();
      } catch (err) {
        // Whatever was not read cannot be skipped safely: answer, then close.
        const out = this.failure(err, operation, observation?.logger);
        return { ...out, headers: { ...out.headers, ...admitted.headers }, close: true };
      }
    }
    const out = await this.run(operation, { ...request, body, observation, caller: admitted.caller });
    return admitted.headers ? { ...out, headers: { ...out.headers, ...admitted.headers } } : out;
  }

  private async dispatch(op: OperationInfo, request: CoreRequest, deadline: Deadline): Promise<CoreHttpResponse> {
    switch (op.kind) {
      case 'list': {
        const query = parseListQuery(request.rawQuery, op.entity, this.config);
        if (query.kind === 'item') return getBareItem(this.config, op.entity, query.id, deadline);
        if (query.kind === 'items') return getItems(this.config, op.entity, query.ids, deadline);
        return listPage(this.config, op.entity, query, deadline);
      }
      case 'get':
        return getItem(this.config, op.entity, request.id ?? '', deadline);
      case 'write': {
        const { allowedOrderStatuses, now, maxPageBytes } = this.config;
        const config = { allowedOrderStatuses, now, maxPageBytes, idempotency: this.idempotency };
        const identity = { idempotencyKey: headerValue(request.headers, IDEMPOTENCY_KEY_HEADER.toLowerCase()), caller: request.caller };
        const result = await deadline.race(handleWrite(this.config.adapter, op.entity, request.rawQuery, request.body, config, deadline.signal, identity));
        return { status: result.status, body: JSON.stringify(result.body), ...(result.headers ? { headers: result.headers } : {}) };
      }
    }
  }

  /** Maps a failure to its response; kit failures are logged with their cause, never answered with it. */
  failure(err: unknown, operation: string, logger: Logger | undefined = this.config.logger): CoreHttpResponse {
    if (err instanceof HttpError) {
      // A write refused for its body answers the spec's failure structure, like every other refused write.
      const op = Object.prototype.hasOwnProperty.call(OPERATIONS, operation) ? OPERATIONS[operation as OperationName] : undefined;
      if (err.status === 400 && op?.kind === 'write') {
        return { status: 400, headers: { ...JSON_HEADERS }, body: JSON.stringify(writeFailure(op.entity, [err.message], []).body) };
      }
      return errorResponse(err.status, err.message, err instanceof MethodNotAllowedError ? { allow: err.allow.join(', ') } : undefined);
    }
    if (err instanceof ItemTooLargeError) {
      logger?.error({ operation, code: err.code, id: err.id, bytes: err.bytes, budget: err.budget }, err.message);
      return errorResponse(500, err.message);
    }
    if (err instanceof AdapterTimeoutError) {
      logger?.error({ operation, code: err.code }, `${operation}: the adapter did not answer within the time budget`);
      return errorResponse(500, 'the store did not answer within its time budget; try again later');
    }
    if (err instanceof StorageError) {
      // The kind in words (disk full, read-only, …) tells the caller and the operator what to fix;
      // the driver's words, paths and addresses stay in the log.
      logger?.error({ operation, code: err.code, failure: err.failure, err }, `${operation} failed: ${err.summary}`);
      return errorResponse(500, `the store could not complete the request: ${err.summary}; its log has the details`);
    }
    const code = err instanceof StorebridgeError ? err.code : 'INTERNAL';
    logger?.error({ operation, code, err }, `${operation} failed`);
    return errorResponse(500, 'the store could not complete the request; its log has the details');
  }
}

/** Parses the options once and returns the core that bindings and handlers share. */
export function createStoreCore(options: StoreRouterOptions | StoreCore): StoreCore {
  return options instanceof StoreCore ? options : new StoreCore(parseRouterOptions(options));
}

/** The list table's by-id parameters: present, they make a list request a read by id (`list-query.ts`). */
const BY_ID_PARAMETERS: readonly (keyof typeof LIST_QUERY)[] = ['id', 'ids'];
const ID_PARAMETER = new RegExp(`(?:^\\??|&)(?:${BY_ID_PARAMETERS.join('|')})(?:=|&|$)`);

/**
 * The operation a request is logged and measured under: a list URL with `id` (the deployed by-id
 * read) or `ids` (the batched one) is a `getProduct` / `getOrder`, on the list route.
 */
function observedOperation(operation: string, rawQuery: string): string {
  const op = Object.prototype.hasOwnProperty.call(OPERATIONS, operation) ? OPERATIONS[operation as OperationName] : undefined;
  // A look at the raw query, as `jobidOf` takes the jobid: no third parse of it on an observed request.
  if (op?.kind !== 'list' || !ID_PARAMETER.test(rawQuery)) return operation;
  return entityOf(op.entity).operations.get;
}
