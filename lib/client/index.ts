/**
 * `storebridge/client`: the service-side caller of any store's webhooks (`docs/client.md`):
 * typed calls, whole-catalog walks, the tolerant reader of real-world stores, retries, time and
 * size limits, and one error class per failure kind.
 */
export * from './client-errors';
export { DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RESPONSE_BYTES, type Operation, type OperationUrls, type RequestInfo, type ClientHooks, type StoreClientOptions, type ClientConfig, type FetchLike, type RetryOptions } from './client-options';
export { CatalogWalk, type WalkPosition, type WalkAnomaly, type ListPage, type WalkPage, type WalkOptions, type WalkSummary, type FetchPage } from './catalog-walk';
export { REPLY_NORMALISATION_KINDS, type ReplyNormalisationKind, type NormalisationCountKind, type NormalisationCounts, type ItemStub, type InvalidItem, type ReadPage, type WriteResult } from './store-reply';
export type { HttpResponse, TransportStats } from './client-transport';
export type { ListQuery, WriteQuery, OperationQuery } from './client-urls';
export * from './store-client';
