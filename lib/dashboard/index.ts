/**
 * `storebridge/dashboard`: the operator dashboard (`docs/dashboard.md`): a framework-free core
 * (`createDashboard`), its Express binding (`createDashboardRouter`, with bull-board's queue view),
 * and the sources it reads: sync health and BullMQ on Redis, a `--state` file, a health store in
 * this process, and reverse services over HTTP. Sources are interfaces: bring your own.
 */
export { createDashboard, type DashboardOptions, type DashboardRequest, type DashboardResponse, type Dashboard } from './dashboard-core';
export type { FailureContext } from './dashboard-data';
export type * from './dashboard-sources';
export * from './dashboard-errors';
export { createRedisSyncSource, type RedisSyncSourceOptions } from './sources/redis-sync-source';
export { createStateFileSource } from './sources/state-file-source';
export { createHealthSyncSource } from './sources/health-sync-source';
export { createReverseHttpSource, type ReverseHttpSourceOptions } from './sources/reverse-http-source';
export { createDashboardRouter, type DashboardRouterOptions, type DashboardRouter } from './express/dashboard-router';
