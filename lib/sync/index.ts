/**
 * `storebridge/sync`: the sync engine — runs, checkpoints, schedules, pushes.
 */
export * from './checkpoint-store';
export * from './sync-errors';
export * from './sync-run';
export * from './interval-scheduler';
export * from './sync-connection';
