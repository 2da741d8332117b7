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
  | 'DUPLICATE_KEY'
  | 'ITEM_TOO_LARGE'
  | 'INVALID_OPTION'
  | 'SQL_CONNECT'
  | 'SQL_DRIVER_UNAVAILABLE'
  | 'SQL_DUPLICATE_KEYS'
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

/**
 * A store-side (`touch`) write whose `sku` (products) or `orderid` (orders) another item already
 * holds (`uniqueKeyOf` in `lib/adapter.ts`). Nothing was stored. The write webhooks answer it with
 * the same 400 reason as their own check (`sku: "X" is already used by product "Y"`); a create of
 * an order whose `orderid` exists becomes a write to that order instead.
 */
export class DuplicateKeyError extends StorebridgeError {
  override readonly name = 'DuplicateKeyError';
  readonly code = 'DUPLICATE_KEY';
  constructor(
    readonly entity: 'products' | 'orders',
    /** The member: `sku` or `orderid` (`_id` for a create whose assigned id another item took meanwhile: see `WriteOptions.create`). */
    readonly field: string,
    readonly value: string,
    /** The `_id` of the item that holds it, when the adapter knows it. */
    readonly holder: string | undefined,
  ) {
    const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
    super(`${entity}: the ${field} ${shown} is already used${holder === undefined ? '' : ` by ${JSON.stringify(holder)}`}`);
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
