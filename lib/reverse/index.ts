/**
 * `storebridge/reverse`: both ends of the reverse connection (`docs/reverse-connection.md`): the
 * service (`createReverseService`, its state stores and its Express, `node:http` and Fetch
 * bindings) and the store's daemon (`createDaemon`).
 */
export { createReverseService, type ReverseService, type ReverseServiceOptions, type ReverseConnectionOption, type ConnectionInfo, type ReverseRequest, type ReverseResponse, type ConnectionStatusView, type SampleRecord } from './service/reverse-service';
export type {
  TransactionRequest,
  TransactionKind,
  PushKind,
  EntityCounts,
  FailureSource,
  FailureRecord,
  IdMapping,
  TransactionOutcome,
  TransactionSummary,
} from './service/reverse-machine-state';
export type { CurrentView, QueuedView } from './service/reverse-machine';
export { createMemoryStateStore, createRedisStateStore, type ReverseStateStore, type StateChange, type StateGuard, type RedisStateClient } from './service/reverse-state-store';
export { createFileRegistry, followRegistry, parseConnectionsFile, REGISTRY_NAME, type ConnectionRegistry, type FollowOptions } from './service/reverse-registry';
export * from './bindings';
export { createDaemon, FAILURE_CODES, type Daemon, type DaemonEvent, type DaemonOptions, type DaemonReport } from './daemon/reverse-daemon';
export * from './reverse-errors';
