/**
 * storebridge: keep a store's catalog and orders in sync with a central sync service.
 *
 * The package root is what a store owner mounts and an adapter author implements: the store
 * router, its handlers and bindings and the core they share; the key verifiers and the deployment
 * helpers; the adapter interface, its base classes and guard; and every core error. Each other
 * area has its own entry: `storebridge/contract` (the wire: schemas, converters, route tables,
 * dialects), `storebridge/adapter` (helpers for adapter authors), `storebridge/client`,
 * `storebridge/sync`, `storebridge/reverse`, `storebridge/conformance`, `storebridge/openapi`,
 * `storebridge/dashboard`, `storebridge/adapters/memory`, `storebridge/adapters/sql`,
 * `storebridge/demo` and `storebridge/host` (running a store as its own process).
 * `test/packaging/public-surface.ts` declares every runtime name each entry exports.
 */

// The store side: router, standalone handlers, bindings, core, keys, shared rate limit, metrics.
export * from './server';

// The adapter interface and its base classes.
export {
  BaseEntityStore,
  BaseStoreAdapter,
  compareIds,
  compareKeys,
  keyOf,
  rawJson,
  isRawJson,
  resolveWrite,
  type SortKey,
  type ListOptions,
  type SignalOptions,
  type WriteOptions,
  type UpsertResult,
  type RawJsonItem,
  type EntityStore,
  type StoreAdapter,
  type IdempotencyStore,
  type IdempotencyRecord,
  type IdempotencyOutcome,
} from './adapter';
export { guardAdapter, type GuardOptions, type GuardedAdapter, type GuardedEntityStore } from './adapter-guard';
export { registerAdapterSpec, type AdapterRegistration } from './adapter-registry';

// Errors (the caller's, the sync engine's and the reverse connection's are in their entries).
export * from './errors';
export { ConversionError } from './contract/converters';

// The contract's types (its runtime names are under `storebridge/contract`).
export type { Product, Variation, Availability, Price, Property, Order, OrderItem, Buyer, Address, Money, Shipment, Message, Entity, ItemOf } from './contract/webhook';
export type { ReverseProduct, ReverseOrder, ReverseVariation, ReverseOrderItem } from './contract/reverse';
export type { Dialect, DialectName } from './contract/dialects';
export type { Logger } from './logger';
