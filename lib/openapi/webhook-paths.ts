/**
 * The OpenAPI paths of the store webhooks: the six operations of the store router at their default
 * routes (`OPERATIONS`, the router's own table) or at the URLs an owner mounted them on. Bodies
 * and parameters come from the contract; statuses from the router's error catalog
 * (docs/wire-decisions.md, docs/errors.md).
 */
import { z } from 'zod';
import {
  ErrorBodySchema,
  IdSchema,
  IntegerSchema,
  OrderByIdResponseSchema,
  OrderListResponseSchema,
  OrderSchema,
  OrderWriteSuccessSchema,
  PagingSchema,
  ProductByIdResponseSchema,
  ProductListResponseSchema,
  ProductSchema,
  ProductWriteSuccessSchema,
  SORT_ORDERS,
  WriteFailureSchema,
  type Entity,
} from '../contract';
import { OPERATIONS, type OperationName } from '../server/store-core';
import type { GeneratedSchemas, JsonSchema } from './openapi-schemas';

/** A write body: the item, whose `_id` may be left out (it then takes the `id` parameter). */
export const ProductWriteBodySchema = ProductSchema.partial({ _id: true });
export const OrderWriteBodySchema = OrderSchema.partial({ _id: true });

/** Schemas the webhook paths need beyond the contract's named exports. */
export const WEBHOOK_EXTRA_SCHEMAS: ReadonlyMap<z.ZodType, string> = new Map<z.ZodType, string>([
  [ProductWriteBodySchema, 'ProductWriteBody'],
  [OrderWriteBodySchema, 'OrderWriteBody'],
]);

/** Per entity, the contract schemas of each webhook body. */
const BODIES = {
  products: { list: ProductListResponseSchema, byId: ProductByIdResponseSchema, item: ProductWriteBodySchema, written: ProductWriteSuccessSchema },
  orders: { list: OrderListResponseSchema, byId: OrderByIdResponseSchema, item: OrderWriteBodySchema, written: OrderWriteSuccessSchema },
} as const;

const NOUN: Record<Entity, string> = { products: 'product', orders: 'order' };

export const SVCKEY_SCHEME = 'SvcKey';

/** The webhook routes in OpenAPI form: `/products/:id` → `/products/{id}`. */
export function defaultWebhookPaths(): Record<OperationName, string> {
  const out = {} as Record<OperationName, string>;
  for (const [name, op] of Object.entries(OPERATIONS) as [OperationName, (typeof OPERATIONS)[OperationName]][]) {
    out[name] = op.path.replace(/:([A-Za-z_]\w*)/g, '{$1}');
  }
  return out;
}

type Responses = Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: JsonSchema }> }>;

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

function commonErrors(s: GeneratedSchemas): Responses {
  const error = json(s.reply(ErrorBodySchema));
  return {
    '401': {
      description: 'The `SvcKey` header is missing, unknown or expired (a key in `Authorization` is never read).',
      headers: { 'WWW-Authenticate': { description: 'Always `SvcKey`.', schema: { type: 'string' } } },
      content: error,
    },
    '429': {
      description:
        'Rate limited: too many requests with this SvcKey, or too many failed key checks from this address (only when the router has a rate limit, the default).',
      headers: {
        'Retry-After': { description: 'Seconds to wait before the next request.', schema: { type: 'integer', minimum: 0 } },
        RateLimit: { description: 'IETF draft-7 combined rate-limit header.', schema: { type: 'string' } },
        'RateLimit-Policy': { description: 'IETF draft-7 rate-limit policy.', schema: { type: 'string' } },
      },
      content: error,
    },
    '500': {
      description:
        'The store failed (adapter error, a single item larger than the page budget, the time budget ran out before any item). The body never holds internals.',
      content: error,
    },
  };
}

/** The OpenAPI `paths` of the webhooks. `paths` maps each operation to its URL (OpenAPI templating). */
export function webhookPaths(s: GeneratedSchemas, paths: Readonly<Record<OperationName, string>>): Record<string, Record<string, unknown>> {
  const error = json(s.reply(ErrorBodySchema));
  const param = (name: string, where: 'query' | 'path', required: boolean, schema: z.ZodType, description: string, extra: object = {}) => ({
    name,
    in: where,
    required,
    description,
    schema: s.inline(schema),
    ...extra,
  });
  const jobid = (what: string) => param('jobid', 'query', true, IntegerSchema, `Identifier of the sync job, for tracking (${what}).`);
  const listParams = [
    param('sortorder', 'query', true, z.enum(SORT_ORDERS), 'Sort order by `(last_updated, _id)`; `_id` breaks ties.'),
    jobid('logged, not interpreted'),
    param(
      'offset',
      'query',
      false,
      PagingSchema.shape.offset.unwrap(),
      'Numeric paging: 0-based position of the first item. Not together with `next`. With neither, the page starts at 0 (offset paging unless the router defaults to cursors).',
    ),
    param(
      'next',
      'query',
      false,
      PagingSchema.shape.next.unwrap(),
      'Cursor paging: the `paging.next` of the previous page (opaque, URL-safe Base64, tamper-evident). Not together with `offset`.',
    ),
    param(
      'limit',
      'query',
      false,
      z.number().int().min(1),
      'Extension (not in the interface spec): items per page, capped by the router\'s `maxPageSize` (default 1000). Default: the router\'s `pageSize` (20).',
      { 'x-storebridge-extension': true },
    ),
  ];

  const out: Record<string, Record<string, unknown>> = {};
  const add = (name: OperationName, operation: Record<string, unknown>) => {
    const op = OPERATIONS[name];
    const path = paths[name];
    out[path] ??= {};
    out[path][op.method.toLowerCase()] = { operationId: name, tags: ['webhooks'], security: [{ [SVCKEY_SCHEME]: [] }], ...operation };
  };

  for (const entity of ['products', 'orders'] as const) {
    const b = BODIES[entity];
    const noun = NOUN[entity];
    const Noun = noun[0].toUpperCase() + noun.slice(1);
    const errors = commonErrors(s);
    const listName: OperationName = entity === 'products' ? 'listProducts' : 'listOrders';
    const getName: OperationName = entity === 'products' ? 'getProduct' : 'getOrder';
    const writeName: OperationName = entity === 'products' ? 'writeProduct' : 'writeOrder';

    add(listName, {
      summary: `List ${entity}`,
      description: `One page of ${entity} in webhook form. Offset requests answer \`paging.offset\` (this page's first position); cursor requests answer without it. \`paging.next\` is absent on the last page. A page body never exceeds the router's byte budget (default 10,000,000 bytes).`,
      parameters: listParams,
      responses: {
        '200': { description: `A page of ${entity}.`, content: json(s.reply(b.list)) },
        '400': { description: 'A parameter is missing, repeated or malformed, `offset` and `next` are both given, or the cursor is invalid, tampered with or foreign.', content: error },
        ...errors,
      },
    });
    add(getName, {
      summary: `${Noun} by ID`,
      parameters: [param('id', 'path', true, IdSchema, `The \`_id\` of the ${noun}, percent-encoded.`)],
      responses: {
        '200': { description: `The ${noun}.`, content: json(s.reply(b.byId)) },
        '400': { description: 'The id in the path is not valid percent-encoding or not a valid `_id`.', content: error },
        '404': { description: `No ${noun} has this \`_id\`.`, content: error },
        ...errors,
      },
    });
    add(writeName, {
      summary: `Add/Update ${noun}`,
      description: `Inserts or updates the ${noun} \`id\`. A body \`_id\` that disagrees with \`id\` is refused; a missing one takes \`id\`. On change \`last_updated\` becomes now; repeating the same write answers the same result. A refused write stores nothing. Unknown body members are ignored and listed in \`warnings\`.`,
      parameters: [jobid('required on writes'), param('id', 'query', true, IdSchema, `The \`_id\` of the ${noun} to write.`)],
      requestBody: { required: true, description: `The complete ${noun}, webhook form (at most 10 MiB by default).`, content: json(s.request(b.item)) },
      responses: {
        '200': { description: `Stored: \`success\` true, \`code\` 200, non-blocking \`warnings\`, and the resulting ${noun}.`, content: json(s.reply(b.written)) },
        '400': {
          description: `Refused: the write failure structure (\`success\` false, \`code\` 400, \`error\`, \`reasons\` [{msg}], \`warnings\`); a body that is not JSON at all gets \`{error}\`.`,
          content: json({ oneOf: [s.reply(WriteFailureSchema), s.reply(ErrorBodySchema)] }),
        },
        ...errors,
        '413': { description: 'The body is larger than the router\'s `maxBodyBytes` (default 10 MiB). The connection is closed after the answer.', content: error },
        '415': { description: 'The body is not sent as UTF-8 JSON (`Content-Type: application/json`), or is compressed.', content: error },
      },
    });
  }
  return out;
}
