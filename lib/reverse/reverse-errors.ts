/**
 * Errors of the reverse connection. Each class has a literal `name` and a stable `code`
 * (docs/reverse-connection.md, "Errors"). Messages never hold a connection key: paths are written
 * with `{P}` in place of the base and the key.
 */

/** `enqueue`/`status` named a connection the service does not have. */
export class UnknownConnectionError extends Error {
  override readonly name = 'UnknownConnectionError';
  readonly code = 'REVERSE_UNKNOWN_CONNECTION';
  constructor(readonly connection: string) {
    super(`no reverse connection is named "${connection}"`);
  }
}

/** The service answered a daemon call with a non-2xx status. */
export class ReverseServiceError extends Error {
  override readonly name = 'ReverseServiceError';
  readonly code = 'REVERSE_SERVICE_STATUS';
  constructor(
    readonly method: string,
    /** The path with `{P}` in place of the base and key. */
    readonly path: string,
    readonly status: number,
    /** The service's `{error}` text, when it sent one. */
    readonly detail: string,
  ) {
    super(`${method} {P}${path} answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
  }
}

/** The service could not be reached, did not answer in time, or answered something unreadable. */
export class ReverseTransportError extends Error {
  override readonly name = 'ReverseTransportError';
  readonly code = 'REVERSE_TRANSPORT';
  constructor(
    readonly method: string,
    readonly path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${method} {P}${path}: ${detail}`, options);
  }
}
