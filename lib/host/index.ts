/**
 * `storebridge/host`: hosting helpers for running a store as its own process, what the CLI's
 * `serve` and `demo` use: a standalone server with sane limits and a line logger (demo seeding is
 * `seedDemo` in `storebridge/demo`). Not
 * part of the root entry: an app that mounts the store in its own server needs none of it.
 */
export { startStoreServer, SERVER_TIMEOUTS, type StoreServerOptions, type RunningStoreServer, type ServerTimeouts } from './store-server';
export { lineLogger } from './line-logger';
