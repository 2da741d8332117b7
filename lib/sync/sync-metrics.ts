/**
 * Prometheus metrics of the sync service (prom-client, through `lib/metrics`): runs by outcome,
 * run duration, HTTP requests and retries, queue retries, items synced per entity. Labels come
 * from fixed sets (outcome, entity, result) — never the connection id, so thousands of connections
 * do not explode the series count; per-connection detail is the health endpoint's job.
 */
import { createMetrics, type Counter, type Histogram, type Metrics, type Registry } from '../metrics';
import { REPORT_ENTITIES, type SyncObservation, type SyncObserver } from './sync-observer';

/** Buckets (seconds) for whole runs: from a small catalog over loopback to an hour-long pull. */
export const RUN_DURATION_BUCKETS_SECONDS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export interface SyncMetrics extends SyncObserver {
  readonly registry: Registry;
}

/**
 * Metrics (names with the registry's prefix, `storebridge_` by default):
 * - `sync_runs_total{outcome}` — runs by outcome (`ok`, `store_issues`, `failed`, `skipped`);
 * - `sync_run_duration_seconds{outcome}` — duration of runs (skipped ticks excluded);
 * - `sync_requests_total`, `sync_request_retries_total` — HTTP attempts and retries to stores;
 * - `sync_run_retries_total` — runs that were a queue's retry (a failed or crashed attempt before);
 * - `sync_resumed_runs_total` — runs that continued an earlier run's checkpoint;
 * - `sync_items_total{entity, result}` — items of *completed entity walks* by `result` (`written`,
 *   `unchanged`, `invalid`, `duplicate`), counted by the run in which the walk completed (a failed
 *   run counts the entities it did complete). A walk cut short adds nothing here: its items are
 *   counted once, by the run that completes it (a resumed walk's report covers its earlier parts).
 *   A resumed run walks the entities the job had finished again: that new walk counts what it did.
 *
 * @example
 * ```ts
 * import { createMetrics, metricsHandler } from 'storebridge/server';
 * import { createSyncMetrics, createSyncWorker } from 'storebridge/sync';
 * const metrics = createMetrics();
 * createSyncWorker({ ..., observers: [createSyncMetrics(metrics)] });
 * http.createServer(metricsHandler(metrics)).listen(9464);
 * ```
 */
export function createSyncMetrics(target?: Registry | Metrics): SyncMetrics {
  const metrics: Metrics = target && 'counter' in target && typeof (target as Metrics).counter === 'function' ? (target as Metrics) : createMetrics(target ? { registry: target as Registry } : {});
  const runs: Counter<'outcome'> = metrics.counter({ name: 'sync_runs_total', help: 'Sync runs by outcome (ok, store_issues, failed, skipped)', labelNames: ['outcome'] });
  const duration: Histogram<'outcome'> = metrics.histogram({
    name: 'sync_run_duration_seconds',
    help: 'Duration of sync runs (skipped ticks excluded)',
    labelNames: ['outcome'],
    buckets: [...RUN_DURATION_BUCKETS_SECONDS],
  });
  const requests: Counter = metrics.counter({ name: 'sync_requests_total', help: 'HTTP requests to stores by sync runs (every attempt)' });
  const httpRetries: Counter = metrics.counter({ name: 'sync_request_retries_total', help: 'HTTP requests to stores retried by sync runs' });
  const runRetries: Counter = metrics.counter({ name: 'sync_run_retries_total', help: 'Sync runs that were a retry of a failed or crashed attempt' });
  const resumed: Counter = metrics.counter({ name: 'sync_resumed_runs_total', help: 'Sync runs that continued the checkpoint of an earlier run' });
  const items: Counter<'entity' | 'result'> = metrics.counter({
    name: 'sync_items_total',
    help: 'Items handled by completed entity walks of sync runs, by entity and result (written, unchanged, invalid, duplicate)',
    labelNames: ['entity', 'result'],
  });

  return {
    registry: metrics.registry,
    observe(o: SyncObservation) {
      runs.inc({ outcome: o.type === 'run' ? o.outcome : 'skipped' });
      if (o.type !== 'run') return;
      duration.observe({ outcome: o.outcome }, Math.max(0, o.endedAt - o.startedAt) / 1000);
      requests.inc(o.requests);
      httpRetries.inc(o.retries);
      if (o.attempt > 1) runRetries.inc();
      if (o.report.resumed) resumed.inc();
      for (const entity of REPORT_ENTITIES) {
        const r = o.report[entity];
        if (!r.complete) continue;
        items.inc({ entity, result: 'written' }, r.written);
        items.inc({ entity, result: 'unchanged' }, r.unchanged);
        items.inc({ entity, result: 'invalid' }, r.invalid);
        items.inc({ entity, result: 'duplicate' }, r.duplicates);
      }
    },
  };
}
