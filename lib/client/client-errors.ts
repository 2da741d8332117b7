/**
 * The caller's errors: one class per failure kind, each with a literal `name`, a stable `code`,
 * the operation, the URL (never carrying the key: the key travels only in the `SvcKey` header, and
 * any echo of it in a store's text is replaced by `***`), the HTTP status when there was one, and
 * the store's own `{error}` text when it sent one.
 */

import { StorebridgeError } from '../errors';
import { networkFailure } from '../http/network-failure';

export type StoreClientErrorCode =
  | 'STORE_AUTH'
  | 'STORE_BAD_REQUEST'
  | 'STORE_NOT_FOUND'
  | 'STORE_RATE_LIMITED'
  | 'STORE_SERVER'
  | 'STORE_HTTP'
  | 'STORE_TIMEOUT'
  | 'STORE_RESPONSE_TOO_LARGE'
  | 'STORE_CONTRACT'
  | 'STORE_NETWORK'
  | 'STORE_PAGING'
  | 'STORE_ABORTED';

export interface StoreErrorContext {
  /** `listProducts`, `getOrder`, `writeOrder`, … */
  readonly operation: string;
  readonly method: string;
  /** The request URL (query included; it never holds the key). */
  readonly url: string;
  readonly status?: number;
  /** The store's `{error}` text, when its body had one. */
  readonly storeError?: string;
  /** Attempts made (1 = no retry). */
  readonly attempts?: number;
}

export abstract class StoreClientError extends StorebridgeError {
  abstract override readonly code: StoreClientErrorCode;
  readonly operation: string;
  readonly method: string;
  readonly url: string;
  readonly status: number | undefined;
  readonly storeError: string | undefined;
  attempts: number;
  constructor(message: string, context: StoreErrorContext, options?: { cause?: unknown }) {
    const where = `${context.method} ${context.url}`;
    const status = context.status !== undefined ? ` (HTTP ${context.status})` : '';
    const text = context.storeError ? `: ${context.storeError}` : '';
    super(`${context.operation}: ${message}${status}${text} [${where}]`, options);
    this.operation = context.operation;
    this.method = context.method;
    this.url = context.url;
    this.status = context.status;
    this.storeError = context.storeError;
    this.attempts = context.attempts ?? 1;
  }
  /** A plain, key-free summary (for reports and JSON output). */
  toJSON(): { name: string; code: string; message: string; status?: number; url: string } {
    return { name: this.name, code: this.code, message: this.message, status: this.status, url: this.url };
  }
}

/**
 * The store refused the key: HTTP 401, or HTTP 200 with a text body such as `401 Unauthorized`
 * (how the deployed PHP example stores refuse a key).
 */
export class StoreAuthError extends StoreClientError {
  override readonly name = 'StoreAuthError';
  readonly code = 'STORE_AUTH';
  constructor(context: StoreErrorContext, detail = 'the store refused the key') {
    super(detail, context);
  }
}

/** 400 (without the write failure structure): the store says the parameters are wrong. */
export class StoreBadRequestError extends StoreClientError {
  override readonly name = 'StoreBadRequestError';
  readonly code = 'STORE_BAD_REQUEST';
  constructor(context: StoreErrorContext) {
    super('the store rejected the request parameters', context);
  }
}

/** 404: unknown id or route. */
export class StoreNotFoundError extends StoreClientError {
  override readonly name = 'StoreNotFoundError';
  readonly code = 'STORE_NOT_FOUND';
  constructor(context: StoreErrorContext) {
    super('not found', context);
  }
}

/** 429 after every retry: the store kept rate limiting. */
export class StoreRateLimitedError extends StoreClientError {
  override readonly name = 'StoreRateLimitedError';
  readonly code = 'STORE_RATE_LIMITED';
  constructor(context: StoreErrorContext) {
    super('the store kept rate limiting', context);
  }
}

/** 5xx. */
export class StoreServerError extends StoreClientError {
  override readonly name = 'StoreServerError';
  readonly code = 'STORE_SERVER';
  constructor(context: StoreErrorContext) {
    super('the store failed', context);
  }
}

/** Any other unexpected status (3xx — redirects are never followed —, 403, 413, …). */
export class StoreHttpError extends StoreClientError {
  override readonly name = 'StoreHttpError';
  readonly code = 'STORE_HTTP';
  constructor(context: StoreErrorContext) {
    super('unexpected HTTP status', context);
  }
}

/** No complete answer in time: the per-request `timeoutMs`, or the whole `totalBudgetMs`. */
export class StoreTimeoutError extends StoreClientError {
  override readonly name = 'StoreTimeoutError';
  readonly code = 'STORE_TIMEOUT';
  constructor(
    context: StoreErrorContext,
    readonly limit: 'request' | 'budget',
    readonly limitMs: number,
  ) {
    super(limit === 'request' ? `no complete response within ${limitMs} ms` : `the total time budget of ${limitMs} ms ran out`, context);
  }
}

/** The response grew past `maxResponseBytes`; reading stopped there. */
export class StoreResponseTooLargeError extends StoreClientError {
  override readonly name = 'StoreResponseTooLargeError';
  readonly code = 'STORE_RESPONSE_TOO_LARGE';
  constructor(
    context: StoreErrorContext,
    readonly limitBytes: number,
  ) {
    super(`response larger than ${limitBytes} bytes`, context);
  }
}

/** The response is not what the interface says (not JSON, wrong envelope, wrong types). */
export class StoreContractError extends StoreClientError {
  override readonly name = 'StoreContractError';
  readonly code = 'STORE_CONTRACT';
  constructor(
    context: StoreErrorContext,
    readonly detail: string,
  ) {
    super(`response breaks the interface: ${detail}`, context);
  }
}

/** The connection failed (refused, reset, dropped mid-body), or `fetch` refused the port. */
export class StoreNetworkError extends StoreClientError {
  override readonly name = 'StoreNetworkError';
  readonly code = 'STORE_NETWORK';
  /**
   * False when no attempt can succeed (a port `fetch` refuses, an untrusted certificate): a fact
   * about the failure, which the retry policy (`lib/http/retry.ts`) reads.
   */
  readonly retryable: boolean;
  constructor(context: StoreErrorContext, options?: { cause?: unknown }) {
    const failure = networkFailure(options?.cause, context.url);
    super(`network failure${failure.detail}`, context, options);
    this.retryable = failure.retryable;
  }
}

/** A whole-catalog walk cannot go on safely (a cursor repeats, pages stay empty). */
export class StorePagingError extends StoreClientError {
  override readonly name = 'StorePagingError';
  readonly code = 'STORE_PAGING';
  constructor(
    context: StoreErrorContext,
    readonly detail: string,
  ) {
    super(detail, context);
  }
}

/** The caller's own `signal` aborted the call. */
export class StoreAbortedError extends StoreClientError {
  override readonly name = 'StoreAbortedError';
  readonly code = 'STORE_ABORTED';
  constructor(context: StoreErrorContext) {
    super('aborted by the caller', context);
  }
}
