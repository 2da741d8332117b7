/**
 * Errors raised inside the kit (server, adapters, sync). Each class has a literal `name` and a
 * stable `code`; `docs/errors.md` has a section per code. The HTTP caller's errors are in
 * `client/errors.ts`.
 */

export type StorebridgeErrorCode =
  | 'ADAPTER_FAILED'
  | 'ADAPTER_CONTRACT'
  | 'ADAPTER_TIMEOUT'
  | 'ITEM_TOO_LARGE'
  | 'INVALID_OPTION'
  | 'SQL_CONNECT'
  | 'DASHBOARD_DEPENDENCY'
  | 'DASHBOARD_SOURCE';

export abstract class StorebridgeError extends Error {
  abstract readonly code: StorebridgeErrorCode;
}

/** The adapter threw or rejected. `cause` holds the original error (for logs, never for responses). */
export class AdapterError extends StorebridgeError {
  override readonly name = 'AdapterError';
  readonly code = 'ADAPTER_FAILED';
  constructor(
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(`the data adapter failed in ${operation}`, options);
  }
}

/** The adapter returned something that breaks the adapter contract (bad shape, order, count…). */
export class AdapterContractError extends StorebridgeError {
  override readonly name = 'AdapterContractError';
  readonly code = 'ADAPTER_CONTRACT';
  constructor(
    readonly operation: string,
    readonly detail: string,
  ) {
    super(`the data adapter broke its contract in ${operation}: ${detail}`);
  }
}

/** The adapter did not answer before the request's deadline. */
export class AdapterTimeoutError extends StorebridgeError {
  override readonly name = 'AdapterTimeoutError';
  readonly code = 'ADAPTER_TIMEOUT';
  constructor(readonly operation: string) {
    super(`the data adapter did not answer ${operation} within the time budget`);
  }
}

/** One item alone is larger than the page byte budget: it can never be served. */
export class ItemTooLargeError extends StorebridgeError {
  override readonly name = 'ItemTooLargeError';
  readonly code = 'ITEM_TOO_LARGE';
  constructor(
    readonly entity: string,
    readonly id: string,
    readonly bytes: number,
    readonly budget: number,
  ) {
    super(`${entity} item "${id}" is ${bytes} bytes, larger than the page budget of ${budget} bytes`);
  }
}

/** An option passed to a factory is invalid. The message names the option. */
export class InvalidOptionError extends StorebridgeError {
  override readonly name = 'InvalidOptionError';
  readonly code = 'INVALID_OPTION';
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(`invalid option "${option}": ${detail}`);
  }
}
