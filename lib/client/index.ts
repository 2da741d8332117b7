/**
 * `storebridge/client`: the service-side caller of any store's webhooks.
 */
export * from './client-errors';
export * from './client-options';
export { redact, parseRetryAfter, type HttpResponse, type TransportStats } from './client-transport';
export * from './catalog-walk';
export * from './store-client';
