/**
 * The store side: the webhook router over an adapter, its standalone handlers, and the
 * framework-agnostic core they share. `docs/wire-decisions.md` lists every rule they follow.
 */
export {
  createStoreRouter,
  createStoreHandlers,
  listProductsHandler,
  listOrdersHandler,
  productByIdHandler,
  orderByIdHandler,
  writeProductHandler,
  writeOrderHandler,
  createStoreListener,
  createStoreFetchHandler,
  type StoreHandlers,
  type StoreListener,
  type StoreListenerOptions,
  type StoreFetchHandler,
  type StoreFetchHandlerOptions,
} from './bindings';
export { createStoreCore, StoreCore, OPERATIONS, errorResponse, type OperationName, type OperationInfo, type CoreRequest, type CoreAnswer, type CoreHttpResponse, type AuthResult, type HeaderBag } from './store-core';
export { jwtKeyVerifier, issueSvcKey, anyKeyVerifier, JWT_ALGORITHMS, type JwtAlgorithm, type JwtKeyOptions, type JwtSigningKey, type JwtTokenInfo, type IssueSvcKeyOptions } from './jwt-key-verifier';
export { createStoreMetrics, type StoreMetrics } from './server-metrics';
export { RequestObservation, jobidOf } from './request-observation';
export { createMetrics, metricsHandler, type Metrics, type MetricsOptions } from '../metrics';
export { parseRouterOptions, type StoreRouterOptions, type RouterConfig, type RateLimitOptions, type FailedAuthLimitOptions, type Logger, type Pagination, type Listing } from './router-options';
export { staticKeyVerifier, keyDigest, type KeyVerifier, type KeyVerdict, type SvcKeyEntry, type SvcKeyOption } from './key-verifier';
export { CursorCodec, MAX_CURSOR_LENGTH, type CursorPosition } from './cursor';
export * from './http-errors';
export { handleWrite, type WriteConfig, type WriteQuery, type CoreResponse } from './write-core';
export { connectRedisRateLimit, redisUrlForDisplay, RedisUnavailableError, type RedisRateLimit, type RedisRateLimitOptions } from './redis-rate-limit';
