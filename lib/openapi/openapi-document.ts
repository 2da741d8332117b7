/**
 * `createOpenApiDocument`: the OpenAPI 3.1 description of the store webhooks and the
 * reverse-connection API, generated from the contract's zod schemas (docs/openapi.md).
 */
import { z } from 'zod';
import { InvalidOptionError } from '../errors';
import { defineOptions } from '../options';
import { REVERSE_BASE_PATH, WEBHOOK_ROUTES, type WebhookOperation as OperationName } from '../contract';
import { generateSchemas, referencedComponents, type JsonSchema } from './openapi-schemas';
import { reversePaths } from './reverse-paths';
import { defaultWebhookPaths, webhookPaths, webhookSecuritySchemes } from './webhook-paths';

/** The parts of the interface a document can describe. */
export const OPENAPI_PARTS = ['webhooks', 'reverse'] as const;
export type OpenApiPart = (typeof OPENAPI_PARTS)[number];

export interface OpenApiOptions {
  /** What to describe. Default: both, `['webhooks', 'reverse']`. */
  readonly include?: ReadonlyArray<OpenApiPart>;
  /** The base URL of the server (`servers[0].url`), e.g. `https://shop.example.com/sync`. Default: none (relative). */
  readonly serverUrl?: string;
  /**
   * Where each webhook operation is mounted, relative to `serverUrl`, in OpenAPI templating
   * (`/api/catalog/{id}`). Default: the store router's routes (`/products`, `/products/{id}`, …).
   * By-ID paths must contain `{id}`.
   */
  readonly paths?: Partial<Readonly<Record<OperationName, string>>>;
  /** `info.title`. Default `storebridge connector interface`. */
  readonly title?: string;
  /** `info.version`: the version of the document. Default `1.0.0`. */
  readonly version?: string;
}

/** An OpenAPI 3.1 document (the members this generator writes; JSON-serializable). */
export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly jsonSchemaDialect: string;
  readonly servers?: ReadonlyArray<{ readonly url: string }>;
  readonly tags: ReadonlyArray<{ readonly name: string; readonly description: string }>;
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonSchema>>;
    readonly securitySchemes?: Readonly<Record<string, unknown>>;
  };
}

interface DocumentConfig {
  readonly include: ReadonlySet<OpenApiPart>;
  readonly serverUrl: string | undefined;
  readonly paths: Record<OperationName, string>;
  readonly title: string;
  readonly version: string;
}

const SERVER_URL_MESSAGE = 'must be an absolute http(s) URL without credentials, query or fragment';
const PATH_MESSAGE = 'expected a path starting with "/" (no query, no spaces)';

/** One webhook operation's path: relative, and templated with `{id}` exactly where the route reads an id. */
function operationPath(name: OperationName) {
  const wanted = WEBHOOK_ROUTES[name].kind === 'get' ? ['{id}'] : [];
  return z
    .string({ error: PATH_MESSAGE })
    .regex(/^\/[^?#\s]*$/, PATH_MESSAGE)
    .refine((path) => (path.match(/\{[^}]*\}/g) ?? []).join() === wanted.join(), wanted.length ? 'a by-ID path must contain {id} once and no other template' : 'this path takes no {template}')
    .optional();
}

const INCLUDE_MESSAGE = `must be a non-empty array of ${OPENAPI_PARTS.map((p) => `"${p}"`).join(', ')}`;

/** `createOpenApiDocument`'s options, through the toolkit (`lib/options.ts`). */
const parseDocumentOptions = defineOptions('createOpenApiDocument', {
  include: z.custom<OpenApiPart[]>((v) => Array.isArray(v) && v.length > 0 && v.every((p) => (OPENAPI_PARTS as readonly unknown[]).includes(p)), { error: INCLUDE_MESSAGE }).optional(),
  serverUrl: z
    .string({ error: SERVER_URL_MESSAGE })
    .refine((v) => {
      try {
        const url = new URL(v);
        return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && !url.search && !url.hash;
      } catch {
        return false;
      }
    }, SERVER_URL_MESSAGE)
    .optional(),
  paths: z
    .strictObject(Object.fromEntries(Object.keys(WEBHOOK_ROUTES).map((name) => [name, operationPath(name as OperationName)])) as Record<OperationName, ReturnType<typeof operationPath>>, {
      error: (issue) => (issue.code === 'invalid_type' ? 'expected an object of operation name → path' : undefined),
    })
    .optional(),
  title: z.string({ error: 'expected a non-empty string' }).min(1, 'expected a non-empty string').optional(),
  version: z.string({ error: 'expected a non-empty string' }).min(1, 'expected a non-empty string').optional(),
});

function parseOptions(options: OpenApiOptions): DocumentConfig {
  const o = parseDocumentOptions(options);
  const paths = defaultWebhookPaths();
  for (const [name, path] of Object.entries(o.paths ?? {}) as [OperationName, string | undefined][]) if (path !== undefined) paths[name] = path;
  // Across operations: two may not share a method and path (the toolkit checks one option at a time).
  const seen = new Map<string, string>();
  for (const [name, path] of Object.entries(paths) as [OperationName, string][]) {
    const where = `${WEBHOOK_ROUTES[name].method} ${path}`;
    const other = seen.get(where);
    if (other) throw new InvalidOptionError(`paths.${name}`, `${where} is also ${other}`);
    seen.set(where, name);
  }
  return {
    include: new Set(o.include ?? OPENAPI_PARTS),
    serverUrl: o.serverUrl?.replace(/\/+$/, ''),
    paths,
    title: o.title ?? 'storebridge connector interface',
    version: o.version ?? '1.0.0',
  };
}

/**
 * Builds the OpenAPI 3.1 document. Every schema in it is generated from the contract's zod schemas
 * (`z.toJSONSchema`): replies as closed objects (what the kit sends), request bodies as open ones
 * (unknown members are accepted and ignored). Throws `InvalidOptionError` for a bad option.
 *
 * @example Writing the document of a store mounted at `/sync`:
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { createOpenApiDocument } from 'storebridge/openapi';
 *
 * const doc = createOpenApiDocument({ include: ['webhooks'], serverUrl: 'https://shop.example.com/sync' });
 * writeFileSync('openapi.json', JSON.stringify(doc, null, 2));
 * ```
 */
export function createOpenApiDocument(options: OpenApiOptions = {}): OpenApiDocument {
  const config = parseOptions(options);
  const schemas = generateSchemas();
  const webhooks = config.include.has('webhooks');
  const reverse = config.include.has('reverse');
  if (webhooks && reverse) {
    const clash = Object.entries(config.paths).find(([, path]) => path.startsWith(REVERSE_BASE_PATH + '/'));
    if (clash) throw new InvalidOptionError(`paths.${clash[0]}`, 'this path is part of the reverse-connection API');
  }
  const paths = {
    ...(webhooks ? webhookPaths(schemas, config.paths) : {}),
    ...(reverse ? reversePaths(schemas) : {}),
  };
  const used = referencedComponents(paths, schemas.components);
  const components = Object.fromEntries(
    Object.entries(schemas.components)
      .filter(([name]) => used.has(name))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const parts = [
    webhooks ? 'the store webhooks (the service calls the store; `SvcKey` header)' : '',
    reverse ? 'the reverse-connection API (the store\'s daemon calls the service; the key is in the path)' : '',
  ].filter(Boolean);
  return {
    openapi: '3.1.0',
    info: {
      title: config.title,
      version: config.version,
      description: `Generated by storebridge from its zod contract. Describes ${parts.join(' and ')}. Replies are closed objects (exactly what this kit sends); request bodies are open (unknown members are ignored and reported as warnings).`,
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    ...(config.serverUrl ? { servers: [{ url: config.serverUrl }] } : {}),
    tags: [
      ...(webhooks ? [{ name: 'webhooks', description: 'Endpoints a store exposes; the sync service calls them with the `SvcKey` header.' }] : []),
      ...(reverse ? [{ name: 'reverse-connection', description: 'The service\'s `{P}/…` API, called by the store\'s daemon.' }] : []),
    ],
    paths,
    components: {
      schemas: components,
      ...(webhooks ? { securitySchemes: webhookSecuritySchemes() } : {}),
    },
  };
}
