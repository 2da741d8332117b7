/**
 * storebridge: keep a store's catalog and orders in sync with a central sync service.
 *
 * The package root is deliberately small: the error root `StorebridgeError` and the core errors
 * every area throws (`InvalidOptionError`, `AdapterError`, `StorageError`, …; their codes are in
 * docs/errors.md), and the shared types (the wire's items, `StoreAdapter`, `Logger`). Every other
 * runtime name has exactly one home, its area's entry: `storebridge/server` (the store router, its
 * handlers, bindings, key verifiers, metrics and HTTP errors), `storebridge/adapter` (the adapter
 * base classes, guard and helpers), `storebridge/contract` (the wire: schemas, converters, route
 * tables, dialects), `storebridge/client`, `storebridge/sync`, `storebridge/reverse`,
 * `storebridge/conformance`, `storebridge/openapi`, `storebridge/dashboard`,
 * `storebridge/adapters/memory`, `storebridge/adapters/sql`, `storebridge/adapters/mapped`,
 * `storebridge/demo` and `storebridge/host` (running a store as its own process).
 * `test/packaging/public-surface.ts` declares every runtime name each entry exports, and
 * test/architecture/surface.test.ts that no runtime name is exported by two entries
 * (docs/packaging.md lists the names that moved).
 */

// The core errors (the caller's, the sync engine's, the reverse connection's and the HTTP errors are in their entries).
export * from './errors';

// Shared types (types only: their runtime names are in the areas' entries).
export type {
  SortKey,
  ListOptions,
  SignalOptions,
  WriteOptions,
  UpsertResult,
  RawJsonItem,
  EntityStore,
  StoreAdapter,
  IdempotencyStore,
  IdempotencyRecord,
  IdempotencyOutcome,
} from './adapter';
export type { GuardOptions, GuardedAdapter, GuardedEntityStore } from './adapter-guard';
export type { AdapterRegistration } from './adapter-registry';
export type { StoreRouterOptions, KeyVerifier } from './server';
export type { Product, Variation, Availability, Price, Property, Order, OrderItem, Buyer, Address, Money, Shipment, Message } from './contract/webhook';
export type { Entity, ItemOf } from './contract/entities';
export type { ReverseProduct, ReverseOrder, ReverseVariation, ReverseOrderItem } from './contract/reverse';
export type { Dialect, DialectName } from './contract/dialects';
export type { Logger } from './logger';
