/**
 * `storebridge/sync`: the sync engine (`docs/sync.md`): one resumable run of a connection into a
 * sink adapter, checkpoints, an in-process scheduler, observers (log lines, Prometheus metrics,
 * health), and the distributed form on Redis and BullMQ (`docs/scaling-sync.md`).
 */
export { runSync, type SyncMode, type EntityReport, type SyncReport, type RunError, type SyncEvent, type SyncRunOptions } from './sync-run';
export type { ResumeInfo, AbandonedJob } from './sync-run-context';
export { MemoryCheckpointStore, JsonFileCheckpointStore, type EntityProgress, type RunCheckpoint, type SyncState, type CheckpointStore } from './checkpoint-store';
export { SyncBusyError, SyncRunFailedError } from './sync-errors';
export { IntervalScheduler, type IntervalSchedulerOptions } from './interval-scheduler';
export { createSyncConnection, type SyncConnectionOptions, type PushResult, type PushOptions, type SyncConnection } from './sync-connection';
export { SYNC_OUTCOMES, type SyncOutcome, type SyncObservation, type SyncObserver } from './sync-observer';
export { createSyncMetrics, type SyncMetrics } from './sync-metrics';
export { JsonFileSyncHealth, runsFileBeside } from './file-sync-health';
export { MemorySyncHealth, syncHealthHandler, DEFAULT_HISTORY_SIZE, type LastRunEntity, type LastRun, type SyncHealthSource, type RunRecord, type SyncHistorySource, type SyncHealthHandlerOptions, type HealthStatus, type SyncHealthBody } from './sync-health';
export { syncLogObserver } from './sync-log';
export {
  RedisCheckpointStore,
  RedisRunLock,
  RedisSyncHealth,
  SyncLockLostError,
  DEFAULT_PREFIX,
  DEFAULT_QUEUE_NAME,
  type RedisClientLike,
  type RedisConnectionOptions,
  type RedisConnection,
  type SyncNamespaceOptions,
  type LockAttempt,
  type SyncHealthOptions,
} from './redis-sync-state';
export { createSyncQueue, SYNC_JOB_NAME, type SyncJobData, type SyncJobHandle, type SyncQueueHandle, type SyncQueueOptions, type ScheduledConnection, type ConnectionSchedule, type SyncQueue } from './bullmq-sync-queue';
export { createSyncWorker, type ResolvedConnection, type SyncWorkerOptions, type SyncJobResult, type SyncWorkerHandle, type SyncWorker } from './bullmq-sync-worker';
