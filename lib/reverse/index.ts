/**
 * `storebridge/reverse`: both sides of the reverse connection. The service's `{P}/…` API
 * (`createReverseService` over the pure `ReverseConnectionMachine`, with its Express, `node:http`
 * and Fetch-API bindings and its state stores) and the store's daemon (`createDaemon`). See
 * docs/reverse-connection.md.
 */
export * from './service/reverse-machine';
export * from './service/reverse-service';
export { createMemoryStateStore, createRedisStateStore, type ReverseStateStore, type StateChange, type RedisStateClient } from './service/reverse-state-store';
export * from './bindings';
export * from './daemon';
export * from './reverse-errors';
