/**
 * How the SQL adapters run statements, whatever their tables: the dialect of a Kysely instance,
 * reads raced against an abort signal, write transactions retried after a concurrent create or a
 * deadlock, and driver values read back as text. Shared by the SQL adapter (its own tables) and
 * the mapped adapter (a shop's existing tables, `adapters/mapped`).
 */
import type { Kysely, Transaction } from 'kysely';
import { InvalidOptionError } from '../../lib/errors';
import { loadKysely, SQL_DIALECTS, SQL_KINDS, type SqlKind } from './sql-dialects';
import { asStorageError, inTransaction, storageFailures } from './sql-failures';

/** The dialect of a Kysely instance, from its adapter class. */
export function detectSqlKind(db: Kysely<any>): SqlKind {
  const k = loadKysely();
  const adapter = db.getExecutor().adapter;
  const kind = SQL_KINDS.find((kind) => adapter instanceof k[SQL_DIALECTS[kind].kyselyAdapter]);
  if (kind) return kind;
  throw new InvalidOptionError('kind', 'cannot tell the dialect of this Kysely instance: pass kind: "sqlite" | "postgres" | "mysql"');
}

/**
 * Runs a read; rejects with the signal's reason as soon as it aborts (the query itself runs on; its
 * result is dropped), and with a `StorageError` when the driver's failure is a recognised one.
 */
export function abortable<R>(signal: AbortSignal | undefined, run: () => Promise<R>): Promise<R> {
  return storageFailures(() => raceAbort(signal, run));
}

async function raceAbort<R>(signal: AbortSignal | undefined, run: () => Promise<R>): Promise<R> {
  if (!signal) return run();
  signal.throwIfAborted();
  const work = run();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const result = await Promise.race([work, aborted]);
    signal.throwIfAborted();
    return result;
  } finally {
    signal.removeEventListener('abort', onAbort!);
    work.catch(() => undefined);
  }
}

export { columnText } from './sql-dialects';

export interface WriteTransactionOptions {
  readonly kind: SqlKind;
  readonly signal: AbortSignal;
  /** Attempts in all (the first run and its retries). */
  readonly maxAttempts: number;
  /**
   * Databases without row locks (SQLite): a statement that takes the database write lock at once (a deferred `BEGIN` that
   * read first could fail to upgrade its lock); other processes then wait on `busy_timeout`.
   */
  readonly lockSqlite?: (trx: Transaction<any>) => Promise<unknown>;
}

/**
 * Runs `fn` in a write transaction (READ COMMITTED on PostgreSQL and MySQL: a locking read sees
 * the latest committed row, and MySQL takes no gap locks), again when it fails on a unique key (a
 * concurrent creator of the same row committed first) or on a deadlock / serialization failure,
 * at most `maxAttempts` times in all.
 */
export async function runWriteTransaction<R>(db: Kysely<any>, options: WriteTransactionOptions, fn: (trx: Transaction<any>) => Promise<R>): Promise<R> {
  const { kind, signal, maxAttempts, lockSqlite } = options;
  const dialect = SQL_DIALECTS[kind];
  for (let attempt = 1; ; attempt++) {
    signal.throwIfAborted();
    try {
      // Row locks come with READ COMMITTED; without them (SQLite) the database's write lock is taken first.
      return await inTransaction(db, dialect.rowLocks ? 'read committed' : undefined, async (trx) => {
        if (!dialect.rowLocks && lockSqlite) await lockSqlite(trx);
        return fn(trx);
      });
    } catch (err) {
      const again = dialect.isUniqueViolation(err) || dialect.isTransientConflict(err);
      if (again && attempt < maxAttempts) continue;
      throw asStorageError(err);
    }
  }
}
