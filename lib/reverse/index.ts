/**
 * `storebridge/reverse`: both sides of the reverse connection. The service's `{P}/…` API
 * (`createReverseService` + `createReverseServiceRouter`, over the pure `ReverseConnectionMachine`)
 * and the store's daemon (`createDaemon`). See docs/reverse-connection.md.
 */
export * from './service/reverse-machine';
export * from './service/reverse-service';
export * from './service/reverse-router';
export * from './daemon';
export * from './reverse-errors';
