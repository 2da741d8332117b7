/**
 * `storebridge/client`: the service-side caller of any store's webhooks.
 */
export * from './client-errors';
export * from './client-options';
export { redact, type HttpResponse, type TransportStats } from './client-transport';
export { parseRetry, parseRetryAfter, type RetryPolicy, type AttemptFailure } from '../http/retry';
export * from './catalog-walk';
export * from './store-reply';
export { requestUrl, BY_ID_PARAMETER, ID_PLACEHOLDER, type ListQuery, type WriteQuery, type OperationQuery } from './client-urls';
export * from './store-client';
