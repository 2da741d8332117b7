/**
 * Refusals the store router and the reverse service answer as HTTP 4xx (shared by both servers). Each class extends `StorebridgeError`, has a
 * literal `name`, a stable `code` (a section of `docs/errors.md` each) and the HTTP status it maps
 * to. Their `message` is written for the caller and is sent as the `{error}` body, so it never
 * holds a key or an internal detail.
 *
 * Failures inside the kit (adapter errors, an item larger than the page budget, time-outs) are the
 * other `StorebridgeError`s of `lib/errors.ts`; `StoreCore.failure` maps both to responses.
 */
import { StorebridgeError } from '../errors';

export type HttpErrorCode =
  | 'INVALID_QUERY'
  | 'INVALID_CURSOR'
  | 'INVALID_BODY'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'BODY_TOO_LARGE'
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'RATE_LIMITED';

/** A refusal answered with its own status and message. */
export abstract class HttpError extends StorebridgeError {
  abstract override readonly code: HttpErrorCode;
  abstract readonly status: number;
}

/** A query parameter is missing, repeated, malformed or contradicts another (400). */
export class InvalidQueryError extends HttpError {
  override readonly name = 'InvalidQueryError';
  readonly code = 'INVALID_QUERY';
  readonly status = 400;
}

/** The `next` cursor is malformed, tampered with, foreign, or issued for another list (400). */
export class InvalidCursorError extends HttpError {
  override readonly name = 'InvalidCursorError';
  readonly code = 'INVALID_CURSOR';
  readonly status = 400;
  constructor(detail: string) {
    super(`invalid next cursor: ${detail}; start again without next (or with offset=0)`);
  }
}

/** A write body is not valid JSON, or an id in the path is not a valid `_id` (400). */
export class InvalidBodyError extends HttpError {
  override readonly name = 'InvalidBodyError';
  readonly code = 'INVALID_BODY';
  readonly status = 400;
}

/** A write body is not sent as JSON (415). */
export class UnsupportedMediaTypeError extends HttpError {
  override readonly name = 'UnsupportedMediaTypeError';
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  readonly status = 415;
}

/** A write body is larger than the accepted maximum (413). */
export class BodyTooLargeError extends HttpError {
  override readonly name = 'BodyTooLargeError';
  readonly code = 'BODY_TOO_LARGE';
  readonly status = 413;
  constructor(
    readonly limit: number,
    /** Another reason the body is too large (too many items), instead of its bytes. */
    message = `request body is larger than ${limit} bytes`,
  ) {
    super(message);
  }
}

/** The key header (`SvcKey` or `C2SKey`) is missing, unknown, expired, or given twice with different values (401). */
export class UnauthorizedError extends HttpError {
  override readonly name = 'UnauthorizedError';
  readonly code = 'UNAUTHORIZED';
  readonly status = 401;
}

/** No item with this id, or no such route under the router (404). */
export class NotFoundError extends HttpError {
  override readonly name = 'NotFoundError';
  readonly code = 'NOT_FOUND';
  readonly status = 404;
}

/** The path is a route of the router, the method is not one it serves there (405, with `Allow`). */
export class MethodNotAllowedError extends HttpError {
  override readonly name = 'MethodNotAllowedError';
  readonly code = 'METHOD_NOT_ALLOWED';
  readonly status = 405;
  constructor(
    message: string,
    /** The methods the path serves, for the `Allow` header. */
    readonly allow: readonly string[],
  ) {
    super(message);
  }
}

/** Too many requests for this key, or too many failed key checks from this address (429). */
export class RateLimitedError extends HttpError {
  override readonly name = 'RateLimitedError';
  readonly code = 'RATE_LIMITED';
  readonly status = 429;
}
