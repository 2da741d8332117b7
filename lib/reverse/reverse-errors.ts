/**
 * Errors of the reverse connection. Each class extends `StorebridgeError`, has a literal `name` and
 * a stable `code` (a section each in docs/errors.md). Messages never hold a connection key: paths
 * are written with `{P}` in place of the base and the key.
 */
import { StorebridgeError } from '../errors';

/** `enqueue`/`cancel`/`status` named a connection the service does not have. */
export class UnknownConnectionError extends StorebridgeError {
  override readonly name = 'UnknownConnectionError';
  readonly code = 'REVERSE_UNKNOWN_CONNECTION';
  constructor(readonly connection: string) {
    super(`no reverse connection is named "${connection}"`);
  }
}

/** An operator request that the connection's state does not allow now (cancel with nothing running). */
export class ReverseConflictError extends StorebridgeError {
  override readonly name = 'ReverseConflictError';
  readonly code = 'REVERSE_CONFLICT';
}

/** The service's state store failed, or holds a state this version cannot read. */
export class ReverseStateError extends StorebridgeError {
  override readonly name = 'ReverseStateError';
  readonly code = 'REVERSE_STATE';
  constructor(
    readonly connection: string,
    readonly operation: 'load' | 'save',
    options?: { cause?: unknown },
  ) {
    super(`the state of reverse connection "${connection}" could not be ${operation === 'load' ? 'read' : 'saved'}`, options);
  }
}

/** The service answered a daemon call with a non-2xx status. */
export class ReverseServiceError extends StorebridgeError {
  override readonly name = 'ReverseServiceError';
  readonly code = 'REVERSE_SERVICE_STATUS';
  constructor(
    readonly method: string,
    /** The path with `{P}` in place of the base and key (`/` for the reachability check). */
    readonly path: string,
    readonly status: number,
    /** The service's `{error}` text, when it sent one. */
    readonly detail: string,
  ) {
    super(`${method} ${path === '/' ? '/' : `{P}${path}`} answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
  }
}

/** The service could not be reached, did not answer in time, or answered something unreadable. */
export class ReverseTransportError extends StorebridgeError {
  override readonly name = 'ReverseTransportError';
  readonly code = 'REVERSE_TRANSPORT';
  constructor(
    readonly method: string,
    readonly path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${method} ${path === '/' ? '/' : `{P}${path}`}: ${detail}`, options);
  }
}

/** A `runOnce` of the daemon ended without reaching idle: it made no progress for several passes. */
export class ReverseStalledError extends StorebridgeError {
  override readonly name = 'ReverseStalledError';
  readonly code = 'REVERSE_STALLED';
}
