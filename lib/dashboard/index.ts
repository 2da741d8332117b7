/**
 * `storebridge/dashboard`: an operator dashboard for the sync service and the reverse service.
 * The core (`createDashboard`) is framework-free; `createDashboardRouter` is its Express binding
 * (with bull-board at `/jobs/` when installed). Sources: Redis + BullMQ (`createRedisSyncSource`),
 * a `--state` checkpoint file (`createStateFileSource`), reverse services over HTTP
 * (`createReverseHttpSource`). See docs/dashboard.md.
 */
export * from './dashboard-core';
export * from './dashboard-sources';
export * from './dashboard-errors';
export { createDashboardSecurity, MIN_TOKEN_LENGTH, type DashboardSecurity, type AccessDecision } from './dashboard-security';
export * from './sources/redis-sync-source';
export * from './sources/state-file-source';
export * from './sources/health-sync-source';
export * from './sources/reverse-http-source';
export * from './express/dashboard-router';
export { runChart, type RunChartOptions } from './html/run-chart';
