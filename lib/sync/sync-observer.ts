/**
 * What schedulers tell observers (metrics, health) about each run: one `SyncObservation` per run
 * or skipped tick. The in-process connection (`createSyncConnection({ observers })`) and the
 * BullMQ worker (`createSyncWorker({ observers })`) both report through it.
 */
import type { Entity } from '../contract/entities';
import type { SyncReport } from './sync-run';
import { ENTITIES } from '../contract/entities';

/**
 * - `ok`: the run completed and the store behaved;
 * - `store_issues`: the run completed, but the store sent invalid items, duplicates or anomalies;
 * - `failed`: the run stopped early (its checkpoint is kept; the next run or retry resumes it);
 * - `skipped`: the connection already had a run going (on this worker or another), so this tick
 *   did nothing.
 */
export type SyncOutcome = 'ok' | 'store_issues' | 'failed' | 'skipped';

export const SYNC_OUTCOMES: readonly SyncOutcome[] = ['ok', 'store_issues', 'failed', 'skipped'];

export type SyncObservation =
  | {
      readonly type: 'run';
      readonly connection: string;
      readonly outcome: Exclude<SyncOutcome, 'skipped'>;
      readonly report: SyncReport;
      /** Unix ms. */
      readonly startedAt: number;
      readonly endedAt: number;
      /** HTTP requests and retries made by this attempt alone (not the resumed parts before it). */
      readonly requests: number;
      readonly retries: number;
      /** 1 for a first attempt; above 1 when a queue retried the run (after a failure or a crashed worker). */
      readonly attempt: number;
      /** Which worker ran it (BullMQ worker name), when known. */
      readonly worker?: string;
      /** The queue's job id (BullMQ), when a queue ran it: the correlation id of logs. */
      readonly jobId?: string;
    }
  | {
      readonly type: 'skipped';
      readonly connection: string;
      readonly at: number;
      /** Why: `busy` (a run of this connection was in progress). */
      readonly reason: 'busy';
      readonly worker?: string;
      readonly jobId?: string;
    };

/**
 * Receives every run and skipped tick. Errors (thrown or rejected) are swallowed: observing must
 * never break a sync.
 *
 * @example Log every run with pino:
 * ```ts
 * const logRuns: SyncObserver = { observe(o) { if (o.type === 'run') log.info({ connection: o.connection, jobid: o.report.jobid, outcome: o.outcome }, 'sync run'); } };
 * createSyncConnection({ ..., observers: [logRuns, createSyncMetrics(), health] });
 * ```
 */
export interface SyncObserver {
  observe(observation: SyncObservation): void | Promise<void>;
}

export function outcomeOf(report: SyncReport): Exclude<SyncOutcome, 'skipped'> {
  if (report.error) return 'failed';
  return report.ok ? 'ok' : 'store_issues';
}

/** Calls every observer, waits for async ones, never throws. */
export async function notifyObservers(observers: readonly SyncObserver[] | undefined, observation: SyncObservation): Promise<void> {
  if (!observers) return;
  await Promise.all(
    observers.map(async (o) => {
      try {
        await o.observe(observation);
      } catch {
        // An observer (metrics, health store) must not break a sync.
      }
    }),
  );
}

/** The run observation for a report, with the client's request/retry counts measured around it. */
export function runObservation(
  report: SyncReport,
  measured: { startedAt: number; endedAt: number; requests: number; retries: number; attempt?: number; worker?: string; jobId?: string },
): SyncObservation {
  return {
    type: 'run',
    connection: report.connection,
    outcome: outcomeOf(report),
    report,
    startedAt: measured.startedAt,
    endedAt: measured.endedAt,
    requests: measured.requests,
    retries: measured.retries,
    attempt: measured.attempt ?? 1,
    ...(measured.worker ? { worker: measured.worker } : {}),
    ...(measured.jobId ? { jobId: measured.jobId } : {}),
  };
}

/** Entities in report order. */
export const REPORT_ENTITIES: readonly Entity[] = ENTITIES;
