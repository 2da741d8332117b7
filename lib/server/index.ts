/**
 * `storebridge/server`: the store side. The webhook router over an adapter, its standalone
 * handlers and bindings (Express, `node:http`, Fetch), the framework-agnostic core they share, the
 * key verifiers, the shared Redis rate limit and the router's errors. `docs/wire-decisions.md`
 * lists every rule they follow. The same names are exported by the package root.
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
export { createStoreCore, StoreCore, type OperationName, type OperationInfo, type CoreRequest, type CoreAnswer, type CoreHttpResponse, type AuthResult, type HeaderBag } from './store-core';
export { jwtKeyVerifier, issueSvcKey, anyKeyVerifier, JWT_ALGORITHMS, type JwtAlgorithm, type JwtKeyOptions, type JwtSigningKey, type JwtTokenInfo, type IssueSvcKeyOptions } from './jwt-key-verifier';
export { createMetrics, metricsHandler, type Metrics, type MetricsOptions } from '../metrics';
export type { StoreRouterOptions, RouterConfig, RateLimitOptions, FailedAuthLimitOptions, Logger, Pagination, Listing } from './router-options';
export { staticKeyVerifier, type KeyVerifier, type KeyVerdict, type SvcKeyEntry, type SvcKeyOption } from './key-verifier';
export type { CursorPosition } from './cursor';
export * from '../http/http-errors';
export { connectRedisRateLimit, RedisUnavailableError, type RedisRateLimit, type RedisRateLimitOptions } from './redis-rate-limit';
