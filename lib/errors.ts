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
  | 'STORAGE_FAILED'
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

/**
 * The kinds of storage failure an operator acts on differently: free space, make the file or the
 * database writable, find the other writer, bring the database (or the network to it) back, check
 * the disk.
 */
export type StorageFailure = 'full' | 'read-only' | 'locked' | 'unreachable' | 'io';

/** What each kind of storage failure means, in words that hold no internals (safe in an answer). */
const STORAGE_FAILURES: Readonly<Record<StorageFailure, string>> = {
  full: 'the database storage is full',
  'read-only': 'the database is read-only',
  locked: 'the database is locked by another writer',
  unreachable: 'the connection to the database failed',
  io: 'the database could not read or write its storage',
};

/**
 * The adapter's storage failed for a reason the adapter recognised (disk full, read-only file,
 * lock held too long, connection lost, I/O error). `failure` says which; the message adds the
 * driver's own words, `cause` holds the driver's error. The guard passes it on unchanged, so the
 * log shows the real cause (not, say, the failed rollback that followed it), and the store answers
 * 500 with the kind in words and no internals.
 */
export class StorageError extends StorebridgeError {
  override readonly name = 'StorageError';
  readonly code = 'STORAGE_FAILED';
  constructor(
    readonly failure: StorageFailure,
    /** The driver's words, on one line (e.g. `SQLITE_FULL: database or disk is full`). */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${STORAGE_FAILURES[failure]} (${detail})`, options);
  }

  /** The kind of failure in words, without the driver's: what an HTTP answer may say. */
  get summary(): string {
    return STORAGE_FAILURES[this.failure];
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
