/** Errors of the sync engine (literal `name`, stable `code`). */

/** A run was asked for while the same connection already had one in this process. */
export class SyncBusyError extends Error {
  override readonly name = 'SyncBusyError';
  readonly code = 'SYNC_BUSY';
  constructor(readonly connectionId: string) {
    super(`connection "${connectionId}" already has a sync run in progress`);
  }
}
