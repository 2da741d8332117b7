/**
 * `storebridge/sync`: the sync engine — runs, checkpoints, schedules, pushes; the
 * BullMQ scheduler for many connections on many workers (bullmq/ioredis loaded only when used);
 * sync metrics and health.
 */
export * from './checkpoint-store';
export * from './sync-errors';
export * from './sync-run';
export * from './interval-scheduler';
export * from './sync-connection';
export * from './sync-observer';
export * from './sync-metrics';
export * from './sync-health';
export * from './redis-sync-state';
export * from './bullmq-sync-queue';
export * from './bullmq-sync-worker';
export * from './sync-log';
