/**
 * Errors of the sync engine. Each extends `StorebridgeError`, with a literal `name` and a stable
 * `code` documented in docs/errors.md. (`SyncLockLostError`, the BullMQ run lock's, lives with the
 * lock in `redis-sync-state.ts`.)
 */
import { StorebridgeError } from '../errors';
import type { SyncReport } from './sync-types';

/** A run was asked for while the same connection already had one in this process. */
export class SyncBusyError extends StorebridgeError {
  override readonly name = 'SyncBusyError';
  readonly code = 'SYNC_BUSY';
  constructor(readonly connectionId: string) {
    super(`connection "${connectionId}" already has a sync run in progress`);
  }
}

/**
 * A BullMQ sync run ended early: thrown so BullMQ retries the job (by the worker's retry policy),
 * which resumes from the checkpoint. `report` is the run's report.
 */
export class SyncRunFailedError extends StorebridgeError {
  override readonly name = 'SyncRunFailedError';
  readonly code = 'SYNC_RUN_FAILED';
  constructor(readonly report: SyncReport) {
    super(`sync of connection "${report.connection}" (job ${report.jobid}) stopped: ${report.error?.code ?? report.error?.name ?? 'error'}: ${report.error?.message ?? ''}`);
  }
}
