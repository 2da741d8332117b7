/**
 * Structured logs of the sync service: one line per run (and per skipped tick) through a
 * pino-compatible logger, carrying the wire `jobid` — the correlation id the store's router logs
 * with every request of that run — and the queue's job id. Nothing logged holds a key: reports
 * carry errors with the key already redacted by the client, and no client options are logged.
 */
import type { Logger } from '../logger';
import type { SyncObservation, SyncObserver } from './sync-observer';

/**
 * @example
 * ```ts
 * import pino from 'pino';
 * createSyncWorker({ ..., observers: [syncLogObserver(pino()), createSyncMetrics(metrics)] });
 * // {"level":30,"connection":"shop-1","jobid":17,"queueJobId":"repeat:sync:shop-1:1795…","outcome":"ok",…,"msg":"sync run"}
 * ```
 */
export function syncLogObserver(logger: Logger): SyncObserver {
  if (!logger || typeof logger.info !== 'function' || typeof logger.warn !== 'function' || typeof logger.error !== 'function') {
    throw new TypeError('syncLogObserver: expected a logger with info, warn and error (pino works as is)');
  }
  return {
    observe(o: SyncObservation) {
      if (o.type === 'skipped') {
        logger.info({ connection: o.connection, queueJobId: o.jobId, worker: o.worker, reason: o.reason }, 'sync tick skipped');
        return;
      }
      const r = o.report;
      const line = {
        connection: o.connection,
        jobid: r.jobid,
        queueJobId: o.jobId,
        worker: o.worker,
        outcome: o.outcome,
        mode: r.mode,
        resumed: r.resumed,
        attempt: o.attempt,
        durationMs: o.endedAt - o.startedAt,
        products: { count: r.products.count, written: r.products.written, invalid: r.products.invalid, duplicates: r.products.duplicates },
        orders: { count: r.orders.count, written: r.orders.written, invalid: r.orders.invalid, duplicates: r.orders.duplicates },
        requests: o.requests,
        retries: o.retries,
        ...(r.error ? { err: r.error } : {}),
      };
      if (o.outcome === 'ok') logger.info(line, 'sync run');
      else if (o.outcome === 'store_issues') logger.warn({ ...line, anomalies: r.anomalies.slice(0, 10), invalidItems: r.invalidItems.slice(0, 10) }, 'sync run: the store misbehaved');
      else logger.error(line, 'sync run stopped early');
    },
  };
}
