/**
 * The OpenAPI 3.1 document of the connector interface, generated from the contract's zod schemas:
 * `createOpenApiDocument` builds it, `openApiHandler` serves it. See docs/openapi.md.
 */
export { createOpenApiDocument, OPENAPI_PARTS, type OpenApiDocument, type OpenApiOptions, type OpenApiPart } from './openapi-document';
export { openApiHandler } from './openapi-handler';
export type { JsonSchema } from './openapi-schemas';
