/**
 * The store router's framework-agnostic core: request in (headers, raw query string, path id,
 * parsed body), `{status, headers, body}` out. It checks the SvcKey, runs the operation under the
 * time budget, and maps every failure to a JSON `{error}` without internals. The Express binding
 * (`express-router.ts`) adds only rate limiting, body reading and the response write.
 *
 * @example Serving the list webhook from a plain `node:http` server:
 * ```ts
 * import { createServer } from 'node:http';
 * import { createStoreCore } from 'storebridge/server';
 * const core = createStoreCore({ adapter, svcKeys: [process.env.SVC_KEY!] });
 * createServer(async (req, res) => {
 *   const url = new URL(req.url!, 'http://x');
 *   const out = await core.handle('listProducts', { headers: req.headers, rawQuery: url.search });
 *   res.writeHead(out.status, { ...out.headers, 'content-type': 'application/json; charset=utf-8' }).end(out.body);
 * }).listen(8080);
 * ```
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { WEBHOOK_ROUTES, type WebhookOperation, type WebhookRoute } from '../contract/webhook-routes';
import { AdapterTimeoutError, ItemTooLargeError, StorebridgeError } from '../errors';
import { Deadline } from './deadline';
import { HttpError, UnauthorizedError } from './http-errors';
import { parseListQuery, queryParams, queryRecord } from './list-query';
import { getItem, listPage, type CoreHttpResponse } from './read-core';
import { RequestObservation, jobidOf } from './request-observation';
import { parseRouterOptions, type Logger, type RouterConfig, type StoreRouterOptions } from './router-options';
import { handleWrite, writeFailure } from './write-core';

export type { CoreHttpResponse } from './read-core';

/** The webhook operations (the contract's route table, `lib/contract/webhook-routes.ts`). */
export type OperationName = WebhookOperation;
export type OperationInfo = WebhookRoute;
export const OPERATIONS = WEBHOOK_ROUTES;

export interface CoreRequest {
  readonly headers: IncomingHttpHeaders;
  /** The query string as received, with or without the leading `?`. */
  readonly rawQuery: string;
  /** The item id of by-ID operations (already URL-decoded). */
  readonly id?: string;
  /** The parsed JSON body of writes. */
  readonly body?: unknown;
  /** Aborted when the caller goes away. */
  readonly signal?: AbortSignal;
  /** The request's observation (`StoreCore.observe`): its logger gets this request's failures. */
  readonly observation?: RequestObservation;
}

export type AuthResult =
  | { readonly ok: true; readonly keyId: string; /** SHA-256 hex of the verdict's `limitKey`, else of the key: what rate limits count by. */ readonly keyHash: string }
  | { readonly ok: false; readonly response: CoreHttpResponse };

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } as const;

/** A JSON `{error}` response. */
export function errorResponse(status: number, message: string, headers?: Record<string, string>): CoreHttpResponse {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify({ error: message }) };
}

export class StoreCore {
  constructor(readonly config: RouterConfig) {}

  /**
   * Starts observing one request: a logger bound to its `jobid` and operation, and (at `end`) its
   * log line and metrics. `route` is the operation's route pattern, never the raw path.
   */
  observe(operation: string, route: string, method: string, rawQuery: string): RequestObservation {
    return new RequestObservation(this.config, operation, route, method, jobidOf(rawQuery));
  }

  /** Checks the `SvcKey` header (never `Authorization`). Nothing else runs before it. */
  async authenticate(headers: IncomingHttpHeaders, observation?: RequestObservation): Promise<AuthResult> {
    const raw = headers['svckey'];
    const presented = typeof raw === 'string' ? raw : undefined;
    if (presented) observation?.redact(presented);
    const refuse = (message: string): AuthResult => ({
      ok: false,
      response: errorResponse(401, message, { 'www-authenticate': 'SvcKey' }),
    });
    if (!presented) {
      const hint = headers.authorization !== undefined ? ' (a key in the Authorization header is not accepted)' : '';
      return refuse(`missing SvcKey header${hint}`);
    }
    let verdict;
    try {
      verdict = await this.config.verifier.verify(presented, this.config.now());
    } catch (err) {
      return { ok: false, response: this.failure(err, 'authenticate', observation?.logger) };
    }
    if (!verdict.ok) {
      observation?.logger?.warn({ reason: verdict.reason }, 'SvcKey refused');
      return refuse(verdict.reason === 'expired' ? 'the SvcKey has expired' : verdict.reason === 'revoked' ? 'the SvcKey has been revoked' : 'invalid SvcKey');
    }
    if (observation) observation.keyId = verdict.keyId;
    return { ok: true, keyId: verdict.keyId, keyHash: createHash('sha256').update(verdict.limitKey ?? presented, 'utf8').digest('hex') };
  }

  /** Runs one operation for an already authenticated request. Never rejects. */
  async run(operation: OperationName, request: CoreRequest): Promise<CoreHttpResponse> {
    const op = OPERATIONS[operation];
    const logger = request.observation ? request.observation.logger : this.config.logger;
    const deadline = new Deadline(this.config.timeBudgetMs, request.signal);
    try {
      const out = await this.dispatch(op, request, deadline);
      if (op.kind === 'list' && out.status === 200 && this.config.metrics) this.config.metrics.page(op.entity, pageItemsOf(out.body), Buffer.byteLength(out.body));
      return { ...out, headers: { ...JSON_HEADERS, ...out.headers } };
    } catch (err) {
      // Nobody is listening any more: not a failure of the store, and not worth an error log.
      if (request.signal?.aborted) {
        logger?.info({ operation }, `${operation}: the caller closed the connection`);
        return errorResponse(500, 'the caller closed the connection');
      }
      return this.failure(err, operation, logger);
    } finally {
      deadline.dispose();
    }
  }

  /** `authenticate`, then `run`: the whole operation (logged and measured) for hosts without a rate limiter. */
  async handle(operation: OperationName, request: CoreRequest & { readonly method?: string }): Promise<CoreHttpResponse> {
    const op = OPERATIONS[operation];
    const observation = request.observation ?? this.observe(operation, op.path, request.method ?? op.method, request.rawQuery);
    const auth = await this.authenticate(request.headers, observation);
    const out = auth.ok ? await this.run(operation, { ...request, observation }) : auth.response;
    if (!request.observation) observation.end(out.status);
    return out;
  }

  private async dispatch(op: OperationInfo, request: CoreRequest, deadline: Deadline): Promise<CoreHttpResponse> {
    const rawQuery = request.rawQuery.startsWith('?') ? request.rawQuery.slice(1) : request.rawQuery;
    switch (op.kind) {
      case 'list':
        return listPage(this.config, op.entity, parseListQuery(rawQuery, op.entity, this.config), deadline);
      case 'get':
        return getItem(this.config, op.entity, request.id ?? '', deadline);
      case 'write': {
        const query = queryRecord(queryParams(rawQuery));
        const { allowedOrderStatuses, now, maxPageBytes } = this.config;
        const result = await deadline.race(
          handleWrite(this.config.adapter, op.entity, query, request.body, { allowedOrderStatuses, now, maxPageBytes }, deadline.signal),
        );
        return { status: result.status, body: JSON.stringify(result.body) };
      }
    }
  }

  /** Maps a failure to its response; kit failures are logged with their cause, never answered with it. */
  failure(err: unknown, operation: string, logger: Logger | undefined = this.config.logger): CoreHttpResponse {
    if (err instanceof HttpError) {
      // A write refused for its body answers the spec's failure structure, like every other refused write.
      const op = OPERATIONS[operation as OperationName] as OperationInfo | undefined;
      if (err.status === 400 && op?.kind === 'write') {
        return { status: 400, headers: { ...JSON_HEADERS }, body: JSON.stringify(writeFailure(op.entity, [err.message], []).body) };
      }
      return errorResponse(err.status, err.message);
    }
    if (err instanceof ItemTooLargeError) {
      logger?.error({ operation, code: err.code, id: err.id, bytes: err.bytes, budget: err.budget }, err.message);
      return errorResponse(500, err.message);
    }
    if (err instanceof AdapterTimeoutError) {
      logger?.error({ operation, code: err.code }, `${operation}: the adapter did not answer within the time budget`);
      return errorResponse(500, 'the store did not answer within its time budget; try again later');
    }
    const code = err instanceof StorebridgeError ? err.code : 'INTERNAL';
    logger?.error({ operation, code, err }, `${operation} failed`);
    return errorResponse(500, 'the store could not complete the request; its log has the details');
  }
}

/** Items of a list body: its envelope starts with `{"paging":{"pageSize":N` (read-core writes it so). */
function pageItemsOf(body: string): number {
  const m = /^\{"paging":\{"pageSize":(\d+)/.exec(body.slice(0, 40));
  return m ? Number(m[1]) : 0;
}

/** Parses the options once and returns the core that routers and handlers share. */
export function createStoreCore(options: StoreRouterOptions): StoreCore {
  return new StoreCore(parseRouterOptions(options));
}
