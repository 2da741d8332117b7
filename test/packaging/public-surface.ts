/**
 * The declared public surface: every runtime name each entry point of the package exports. The
 * packaging test fails when an entry exports a name not listed here, or misses one that is: what a
 * release exports is decided here, on purpose, and nothing internal becomes API by accident.
 * Types are not listed (they vanish at run time; the shipped .d.ts is checked by public-api.ts).
 * Each runtime name has one home: no name is listed under two entries
 * (test/architecture/surface.test.ts; docs/packaging.md lists the names that moved).
 */
export const PUBLIC_SURFACE: Readonly<Record<string, readonly string[]>> = {
  ".": [
    "AdapterContractError", "AdapterError", "AdapterTimeoutError", "DuplicateKeyError", "InvalidOptionError",
    "ItemTooLargeError", "StorageError", "StorebridgeError", "UnstorableValueError",
  ],
  "./contract": [
    "AcknowledgedSchema", "AddressSchema", "AnyWarningsSchema", "AvailabilitySchema", "BuyerSchema",
    "COMMON_EXTRA_ATTRIBUTES", "CONNECTION_STATUSES", "CONVERTERS", "ConversionError",
    "CursorOffsetSchema", "DEFAULT_DIALECT", "DEFAULT_MAX_BODY_BYTES", "DEFAULT_TIME_BUDGET_MS",
    "DIALECTS", "DIALECT_NAMES", "DecimalStringSchema", "ENTITIES", "ENTITY_DESCRIPTORS",
    "EntityBodySchema", "EntitySchema", "ErrorBodySchema", "ExtraAttributesSchema",
    "FORBIDDEN_CHARACTERS", "FORBIDDEN_KEYS", "FiniteNumberSchema", "HAS_MORE_VALUES", "HasMoreSchema", "INTERFACE_LIMITS",
    "BY_IDS_HEADER", "IDEMPOTENCY_KEY_HEADER", "ITEM_SCHEMAS", "IdSchema", "IdempotencyKeySchema", "InitializeBodySchema",
    "IntegerSchema", "IntegerStringSchema",
    "ItemIdParameter", "ItemIdsParameter", "JobIdParameter", "KEY_HEADERS", "LIST_QUERY", "MAPPED_BUYER_ID_MIN", "MAX_BODY_VALUES", "MAX_ID_LENGTH",
    "MAX_BY_IDS", "MAX_JSON_DEPTH", "MAX_STUB_PAGE_SIZE", "MAX_WRITE_ARRAY_ITEMS", "MODES", "MessageSchema", "ModeSchema", "MoneySchema", "NORMALISATION_KINDS",
    "ORDER_STATUSES", "OkSchema", "OrderByIdResponseSchema", "OrderItemSchema",
    "OrderListResponseSchema", "OrderSchema", "OrderWriteBodySchema", "OrderWriteSuccessSchema",
    "PING_STATUSES", "PUSH_FINISH_SLIP", "PUSH_STRATEGIES", "PagingSchema", "PingSchema", "PriceSchema",
    "ProductByIdResponseSchema", "ProductListResponseSchema", "ProductSchema",
    "ProductWriteBodySchema", "ProductWriteSuccessSchema", "PropertySchema", "PulledOrderSchema",
    "PulledProductSchema", "PushOrdersPageSchema", "PushProductsPageSchema", "PushReceivedSchema",
    "REVERSE_BASE_PATH", "REVERSE_FAILURE_CODES", "REVERSE_ITEM_SCHEMAS", "REVERSE_ROUTES", "ReachabilitySchema",
    "ReadyForNextSchema", "ReverseAvailabilitySchema", "ReverseBuyerSchema",
    "ReverseOrderItemSchema", "ReverseOrderSchema", "ReversePriceSchema", "ReverseProductSchema",
    "ReverseVariationSchema", "SHIPMENT_STATUSES", "SINGULAR", "SORT_ORDERS", "STORE_DIALECT", "ShipmentSchema",
    "SkuSchema", "StorageFailureReportSchema", "StrategySchema", "TimestampSchema",
    "UPSTREAM_STATUS_MEMBERS", "UpstreamStatusSchema", "UrlRefSchema", "VariationSchema",
    "WEBHOOK_ROUTES", "WRITE_QUERY", "WriteFailureSchema", "WriteMessageSchema",
    "WriteReasonSchema", "ackIdOf", "buyerIdAsInteger", "canonicalDecimal", "decimalStringToNumber", "deeperThan",
    "describeZodError", "dialectOf", "encodeReverseItem", "entityOf", "findForbiddenKey",
    "findUnknownFields", "hasForbiddenCharacter", "hasUnpairedSurrogate", "integerStringToNumber", "isEntity", "isMappedBuyerId", "listFiltersOf", "isRawUrlSafe",
    "mappedBuyerId", "matchReverseRoute", "numberToDecimalString", "orderToReverse", "orderToWebhook", "parseQuery",
    "parseWire", "perEntity", "productToReverse", "productToWebhook", "readItem", "registerEntity", "reverseRoute", "reverseUrl",
    "webhookOperation", "withQuery",
  ],
  "./adapter": [
    "BaseEntityStore", "BaseStoreAdapter", "KeyedMutex", "ListedItem", "MemoryIdempotencyStore",
    "UNIQUE_MEMBERS", "compareIds", "compareKeys", "entityStore", "guardAdapter", "isRawJson",
    "jsonEqual", "keyOf", "mergeMembers", "rawJson", "registerAdapterSpec", "resolveWrite",
    "sameContent", "uniqueKeyOf",
  ],
  "./server": [
    "BodyTooLargeError", "HttpError", "InvalidBodyError", "InvalidCursorError", "InvalidQueryError",
    "JWT_ALGORITHMS", "MethodNotAllowedError", "NotFoundError", "RateLimitedError",
    "RedisUnavailableError", "StoreCore", "UnauthorizedError", "UnsupportedMediaTypeError",
    "anyKeyVerifier", "connectRedisRateLimit", "createMetrics", "createStoreCore",
    "createStoreFetchHandler", "createStoreHandlers", "createStoreListener", "createStoreRouter",
    "issueSvcKey", "jwtKeyVerifier", "listOrdersHandler", "listProductsHandler", "metricsHandler",
    "orderByIdHandler", "productByIdHandler", "staticKeyVerifier", "writeOrderHandler",
    "writeProductHandler",
  ],
  "./client": [
    "CatalogWalk", "DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_TIMEOUT_MS", "REPLY_NORMALISATION_KINDS",
    "StoreAbortedError", "StoreAuthError", "StoreBadRequestError", "StoreClientError",
    "StoreContractError", "StoreHttpError", "StoreNetworkError", "StoreNotFoundError",
    "StorePagingError", "StoreRateLimitedError", "StoreResponseTooLargeError", "StoreServerError",
    "StoreTimeoutError", "createStoreClient",
  ],
  "./sync": [
    "DEFAULT_HISTORY_SIZE", "DEFAULT_PREFIX", "DEFAULT_QUEUE_NAME", "IntervalScheduler",
    "JsonFileCheckpointStore", "JsonFileSyncHealth", "MemoryCheckpointStore", "MemorySyncHealth", "RedisCheckpointStore",
    "RedisRunLock", "RedisSyncHealth", "SYNC_JOB_NAME", "SYNC_OUTCOMES", "SyncBusyError",
    "SyncLockLostError", "SyncRunFailedError", "createSyncConnection", "createSyncMetrics",
    "createSyncQueue", "createSyncWorker", "runSync", "runsFileBeside", "syncHealthHandler", "syncLogObserver",
  ],
  "./reverse": [
    "FAILURE_CODES", "REGISTRY_NAME", "ReverseConflictError", "ReverseServiceError",
    "ReverseStalledError", "ReverseStateError", "ReverseTransportError", "UnknownConnectionError",
    "createDaemon", "createFileRegistry", "createMemoryStateStore", "createRedisStateStore", "createReverseFetchHandler",
    "createReverseNodeHandler", "createReverseService", "createReverseServiceRouter", "followRegistry",
    "parseConnectionsFile",
  ],
  "./conformance": [
    "ADAPTER_CONFORMANCE_TESTS", "PAGE_BYTES_LIMIT", "PAGE_TIME_LIMIT_MS", "checkEndpoints",
    "passes", "runAdapterConformance",
  ],
  "./demo": [
    "DEMO_EPOCH_MS", "demoCatalog", "demoOrder", "demoOrderCount", "demoOrderId", "demoProduct",
    "demoProductId", "prng", "seedDemo",
  ],
  "./host": [
    "SERVER_TIMEOUTS", "lineLogger", "startStoreServer",
  ],
  "./adapters/memory": [
    "MemoryAdapter", "MemoryEntityStore", "createMemoryAdapter",
  ],
  "./adapters/sql": [
    "SqlAdapter", "SqlConnectError", "SqlDriverUnavailableError", "SqlDuplicateKeysError", "SqlEntityStore",
    "createSqlAdapter", "createSqlConnectionRegistry", "createSqlReverseStateStore", "dropSqlReverseState", "dropSqlSchema",
    "migrateSqlSchema", "openSqlAdapter", "redactConnectionSpec",
  ],
  "./adapters/mapped": [
    "InvalidMappingError", "MappedAdapter", "MappedEntityStore", "MappedWriteRefusedError",
    "MappingMismatchError", "MappingSchema", "TIME_TYPES", "createMappedAdapter", "mappingJsonSchema",
    "openMappedAdapter", "parseMapping", "readMappingFile",
  ],
  "./dashboard": [
    "DashboardDependencyError", "DashboardSourceError", "createDashboard", "createDashboardRouter",
    "createHealthSyncSource", "createRedisSyncSource", "createReverseHttpSource",
    "createStateFileSource",
  ],
  "./openapi": [
    "OPENAPI_PARTS", "createOpenApiDocument", "openApiHandler",
  ],
};
