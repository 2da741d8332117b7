/**
 * The base of every public error the kit throws, and the errors of the core (adapters, options).
 * Each class has a literal `name` and a stable string `code`; `docs/errors.md` has a section per
 * code. `err instanceof StorebridgeError` catches every one of them; the area errors (the caller's
 * `StoreClientError` family, the reverse connection's, the sync engine's, the store router's HTTP
 * errors) extend it in their own modules.
 */

export type StorebridgeErrorCode =
  | 'ADAPTER_FAILED'
  | 'ADAPTER_CONTRACT'
  | 'ADAPTER_TIMEOUT'
  | 'UNSTORABLE_VALUE'
  | 'ITEM_TOO_LARGE'
  | 'INVALID_OPTION'
  | 'SQL_CONNECT'
  | 'SQL_DRIVER_UNAVAILABLE'
  | 'INVALID_MAPPING'
  | 'MAPPING_MISMATCH'
  | 'MAPPED_WRITE_REFUSED'
  | 'DASHBOARD_DEPENDENCY'
  | 'DASHBOARD_SOURCE';

export abstract class StorebridgeError extends Error {
  /** Stable, documented in docs/errors.md; the one thing to branch on. */
  abstract readonly code: string;
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

/**
 * The adapter refuses a write because its database cannot hold a value of the item exactly (a NUL
 * in a PostgreSQL text key: `_id` or `sku`). Nothing is stored. Adapters throw it instead of
 * letting a driver error through; the guard passes it on unchanged.
 */
export class UnstorableValueError extends StorebridgeError {
  override readonly name = 'UnstorableValueError';
  readonly code = 'UNSTORABLE_VALUE';
  constructor(
    readonly operation: string,
    /** The field: `_id`, `sku`, … */
    readonly field: string,
    detail: string,
  ) {
    super(`${operation}: the ${field} cannot be stored: ${detail}`);
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
