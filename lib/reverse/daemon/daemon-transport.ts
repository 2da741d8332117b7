/**
 * The daemon's calls to the service, over the kit's one HTTP layer (`lib/http/`): the exchange
 * (node:http or an injected fetch), a capped read of every reply, the classification of network
 * failures, and the retry policy as data (`parseRetry` / `retryDecision`). A reply is read as a JSON
 * object whatever its status (the deployed protocol's replies are objects); a non-2xx status becomes
 * a `ReverseServiceError` once the retries are spent.
 *
 * What is retried in place: a GET on a listed status, a network failure or a time-out; a POST only on
 * a listed status (the service said it did nothing). A POST that may have reached the service is
 * never repeated blindly: the pass fails and the next one re-reads the state.
 */
import { readCappedBody } from '../../http/capped-body';
import type { ExchangeResponse } from '../../http/exchange';
import { networkFailure } from '../../http/network-failure';
import { retryDecision, type AttemptFailure } from '../../http/retry';
import { reverseRoute, reverseUrl, type ReverseCallName } from '../../contract/reverse-routes';
import type { Entity } from '../../contract/entities';
import { ReverseServiceError, ReverseTransportError } from '../reverse-errors';
import type { DaemonConfig } from './daemon-options';

/** A reply: its status and its JSON object. */
export interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** What a call carries beside its name. */
export interface CallOptions {
  /** The entity of a per-entity call. */
  readonly entity?: Entity;
  /** The item id of an acknowledgement (`:id`; percent-encoded on the way). */
  readonly id?: string;
  /** The JSON body of a POST (a string is sent as it is; default `{}`). */
  readonly body?: unknown;
  /** Non-2xx statuses answered as replies instead of errors. */
  readonly accept?: readonly number[];
}

export interface Transport {
  /** `GET {serviceUrl}/`: resolves on a 2xx, throws otherwise (deployed daemons check this before anything else). */
  reach(): Promise<void>;
  /**
   * A call of the contract's reverse route table, by name (`call('hasmore', {entity: 'orders'})`):
   * its method and its path under `{P}` come from the table, never from the caller.
   */
  call(name: ReverseCallName, options?: CallOptions): Promise<Reply>;
  /** The path after `{P}` a call goes to (for messages). */
  pathOf(name: ReverseCallName, options?: Pick<CallOptions, 'entity' | 'id'>): string;
}

class AttemptError extends Error {
  constructor(
    readonly failure: AttemptFailure,
    readonly error: Error,
  ) {
    super(error.message);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function createTransport(config: DaemonConfig, sleep: (ms: number) => Promise<void>): Transport {
  async function readReply(res: ExchangeResponse, abort: AbortController, method: string, path: string): Promise<{ status: number; body: unknown }> {
    const capped = await readCappedBody(res, config.maxResponseBytes);
    if (!capped.ok) {
      abort.abort();
      throw new ReverseTransportError(method, path, `the reply is larger than ${config.maxResponseBytes} bytes`);
    }
    let body: unknown;
    try {
      body = capped.text === '' ? undefined : JSON.parse(capped.text);
    } catch {
      body = undefined;
    }
    return { status: res.status, body };
  }

  /** One attempt; failures become `AttemptError`s carrying what the retry policy needs. */
  async function attempt(method: 'GET' | 'POST', url: string, path: string, body: string | undefined): Promise<{ status: number; body: unknown }> {
    const abort = new AbortController();
    const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(config.requestTimeoutMs)]);
    const headers: Record<string, string> = body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json; charset=utf-8' };
    let reply: { status: number; body: unknown };
    try {
      const res = await config.exchange(url, { method, headers, body, signal });
      reply = await readReply(res, abort, method, path);
    } catch (err) {
      if (err instanceof ReverseTransportError) throw new AttemptError({ kind: 'network', retryable: false }, err);
      const name = (err as Error)?.name;
      if (name === 'TimeoutError' || (name === 'AbortError' && !abort.signal.aborted)) {
        throw new AttemptError({ kind: 'timeout' }, new ReverseTransportError(method, path, `no answer within ${config.requestTimeoutMs} ms`, { cause: err }));
      }
      const failure = networkFailure(err, config.serviceUrl);
      throw new AttemptError({ kind: 'network', retryable: failure.retryable }, new ReverseTransportError(method, path, `the service could not be reached${failure.detail}`, { cause: err }));
    }
    if (reply.status < 200 || reply.status > 299) {
      const detail = isObject(reply.body) && typeof reply.body.error === 'string' ? reply.body.error.slice(0, 500) : '';
      throw new AttemptError({ kind: 'status', status: reply.status }, new ReverseServiceError(method, path, reply.status, detail));
    }
    return reply;
  }

  /** Attempts under the retry policy; failures without an answer are retried for GETs only. */
  async function withRetries(method: 'GET' | 'POST', url: string, path: string, body: string | undefined, accept: readonly number[]): Promise<{ status: number; body: unknown }> {
    for (let n = 1; ; n++) {
      try {
        return await attempt(method, url, path, body);
      } catch (err) {
        if (!(err instanceof AttemptError)) throw err;
        const { failure } = err;
        if (failure.kind === 'status' && accept.includes(failure.status)) return { status: failure.status, body: (err.error as ReverseServiceError).detail ? { error: (err.error as ReverseServiceError).detail } : {} };
        const retryable = method === 'GET' || failure.kind === 'status';
        const decision = retryable ? retryDecision(config.retry, n, failure) : { retry: false as const };
        if (!decision.retry) throw err.error;
        await sleep(decision.delayMs);
      }
    }
  }

  /** The route's path after `{P}`, its `:id` filled with the id percent-encoded (any store id arrives whole). */
  function pathOf(name: ReverseCallName, options: Pick<CallOptions, 'entity' | 'id'> = {}): string {
    const { path } = reverseRoute(name, options.entity);
    return options.id === undefined ? path : path.replace(':id', encodeURIComponent(options.id));
  }

  async function call(name: ReverseCallName, options: CallOptions = {}): Promise<Reply> {
    const { method } = reverseRoute(name, options.entity);
    const path = pathOf(name, options);
    const body = method === 'GET' ? undefined : (options.body ?? {});
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const reply = await withRetries(method, reverseUrl(config.serviceUrl, config.pathKey, path), path, text, options.accept ?? []);
    if (!isObject(reply.body)) throw new ReverseTransportError(method, path, 'unexpected reply: not a JSON object');
    return { status: reply.status, body: reply.body };
  }

  return {
    async reach() {
      await withRetries('GET', `${config.serviceUrl}/`, '/', undefined, []);
    },
    call,
    pathOf,
  };
}
