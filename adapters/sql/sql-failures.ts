/**
 * Storage failures of the three drivers, recognised and named (`StorageError`), and transactions
 * whose failed rollback never hides the failure that caused it.
 *
 * Why: a driver error reaches the log only as the guard's cause, and two things used to hide it.
 * SQLite rolls a transaction back by itself when the disk fills (SQLITE_FULL), so Kysely's own
 * rollback then failed with "cannot rollback - no transaction is active", and that error replaced
 * the real one (issue 20, E: 52 failed writes on a full 2 MB tmpfs, none logged as a full disk).
 * And "Connection terminated unexpectedly" says nothing to an operator who has not read pg's code.
 */
import type { IsolationLevel, Kysely, Transaction } from 'kysely';
import { StorageError, type StorageFailure } from '../../lib/errors';
import { oneLine } from './sql-dialects';

/** SQLite result codes (better-sqlite3's `code`; extended codes start with the primary one). */
const SQLITE: ReadonlyArray<[RegExp, StorageFailure]> = [
  [/^SQLITE_FULL/, 'full'],
  [/^SQLITE_READONLY/, 'read-only'],
  [/^SQLITE_(BUSY|LOCKED)/, 'locked'],
  [/^SQLITE_(IOERR|CORRUPT|NOTADB|CANTOPEN)/, 'io'],
];

/** PostgreSQL SQLSTATEs (class 08: connection exception; 53: insufficient resources; 57P: shutdown). */
const POSTGRES: ReadonlyArray<[RegExp, StorageFailure]> = [
  [/^53100$/, 'full'],
  [/^25006$/, 'read-only'],
  [/^(55P03|55006)$/, 'locked'],
  [/^(08...|57P0[123]|53300)$/, 'unreachable'],
  [/^(58030|XX001|XX002)$/, 'io'],
];

/** MySQL / MariaDB error numbers. */
const MYSQL: ReadonlyMap<number, StorageFailure> = new Map([
  [1021, 'full'], // ER_DISK_FULL
  [1114, 'full'], // ER_RECORD_FILE_FULL: "The table is full"
  [1290, 'read-only'], // ER_OPTION_PREVENTS_STATEMENT (--read-only)
  [1792, 'read-only'], // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
  [1205, 'locked'], // ER_LOCK_WAIT_TIMEOUT
  [1040, 'unreachable'], // ER_CON_COUNT_ERROR: too many connections
  [1053, 'unreachable'], // ER_SERVER_SHUTDOWN
  [2006, 'unreachable'], // CR_SERVER_GONE_ERROR
  [2013, 'unreachable'], // CR_SERVER_LOST
  [4031, 'unreachable'], // ER_CLIENT_INTERACTION_TIMEOUT
]);

/** Node's system errors, which every driver lets through for its socket or file. */
const SYSTEM: ReadonlyMap<string, StorageFailure> = new Map([
  ['ENOSPC', 'full'],
  ['EDQUOT', 'full'],
  ['EROFS', 'read-only'],
  ['EIO', 'io'],
  ...['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].map(
    (code) => [code, 'unreachable'] as [string, StorageFailure],
  ),
]);

/**
 * Driver failures that carry no code: pg's lost connection ("Connection terminated unexpectedly",
 * "… due to connection timeout", "timeout exceeded when trying to connect", "Client has encountered
 * a connection error and is not queryable"), mysql2's queries on a closed connection ("Can't add
 * new command when connection is in closed state") and its PROTOCOL_* codes.
 */
const UNREACHABLE_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Can't add new command when connection is in closed state)/;

/** The kind of storage failure `err` is, when a driver's code or message says so. */
export function storageFailureOf(err: unknown): StorageFailure | undefined {
  // Not `instanceof Error`: a socket's error comes from Node's own realm, which is not the caller's
  // under a VM context (jest's test environment is one).
  if (typeof err !== 'object' || err === null || typeof (err as Error).message !== 'string') return undefined;
  const { code, errno, message } = err as { code?: unknown; errno?: unknown; message: string };
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) return SQLITE.find(([re]) => re.test(code))?.[1];
    if (SYSTEM.has(code)) return SYSTEM.get(code);
    if (code.startsWith('PROTOCOL_')) return 'unreachable';
    if (/^[0-9A-Z]{5}$/.test(code)) return POSTGRES.find(([re]) => re.test(code))?.[1];
  }
  if (typeof errno === 'number' && MYSQL.has(errno)) return MYSQL.get(errno);
  // mysql2 reports a full disk inside another error: "Error writing file … (Errcode: 28 "No space left on device")".
  if (/Errcode: 28\b|No space left on device/.test(message)) return 'full';
  if (UNREACHABLE_MESSAGE.test(message)) return 'unreachable';
  return undefined;
}

/** `err` as a `StorageError` when it is a recognised storage failure; otherwise `err` itself. */
export function asStorageError(err: unknown): unknown {
  if (err instanceof StorageError) return err;
  const failure = storageFailureOf(err);
  if (failure === undefined) return err;
  const code = (err as { code?: unknown }).code;
  const detail = oneLine(err);
  return new StorageError(failure, typeof code === 'string' && !detail.includes(code) ? `${code}: ${detail}` : detail, { cause: err });
}

/** Runs `fn`; a recognised storage failure rejects as `StorageError`, anything else unchanged. */
export async function storageFailures<R>(fn: () => Promise<R>): Promise<R> {
  try {
    return await fn();
  } catch (err) {
    throw asStorageError(err);
  }
}

/**
 * Runs `fn` in a transaction and commits. On any failure it rolls back, and a failing rollback is
 * ignored: SQLite has already rolled back after SQLITE_FULL or SQLITE_IOERR, and a lost connection
 * cannot roll back (the server does it). The error thrown is always the first one.
 */
export async function inTransaction<R>(db: Kysely<any>, isolation: IsolationLevel | undefined, fn: (trx: Transaction<any>) => Promise<R>): Promise<R> {
  let builder = db.startTransaction();
  if (isolation) builder = builder.setIsolationLevel(isolation);
  const trx = await builder.execute();
  try {
    const result = await fn(trx);
    await trx.commit().execute();
    return result;
  } catch (err) {
    // Kysely releases the connection even when the rollback fails.
    if (!trx.isCommitted) await trx.rollback().execute().catch(() => undefined);
    throw err;
  }
}
