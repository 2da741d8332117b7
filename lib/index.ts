/**
 * storebridge: keep a store's catalog and orders in sync with a central sync service.
 *
 * The main entry exports the contract (schemas, types, converters), the adapter interface, the
 * store router, and the OpenAPI document (`createOpenApiDocument`, `openApiHandler`). Other areas
 * have their own subpaths: `storebridge/client`, `storebridge/sync`,
 * `storebridge/reverse`, `storebridge/conformance`, `storebridge/adapters/memory`,
 * `storebridge/adapters/sql`, `storebridge/demo`.
 */
export * from './contract';
export * from './adapter';
export * from './adapter-guard';
export { registerAdapterSpec, type AdapterRegistration } from './adapter-registry';
export * from './errors';
export * from './server';
export * from './openapi';
