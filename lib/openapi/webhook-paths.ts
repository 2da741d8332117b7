/**
 * The OpenAPI paths of the store webhooks: the six operations of the store router at their default
 * routes (`WEBHOOK_ROUTES`, the contract's route table) or at the URLs an owner mounted them on. Bodies
 * and parameters come from the contract; statuses from the router's error catalog
 * (docs/wire-decisions.md, docs/errors.md).
 */
import type { z } from 'zod';
import {
  BY_IDS_HEADER,
  ENTITIES,
  ENTITY_DESCRIPTORS,
  entityOf,
  ErrorBodySchema,
  IdSchema,
  KEY_HEADERS,
  WEBHOOK_ROUTES,
  WriteFailureSchema,
  type Entity,
  type QueryTable,
  type WebhookOperation,
} from '../contract';
import type { GeneratedSchemas, JsonSchema } from './openapi-schemas';

type OperationName = WebhookOperation;


/**
 * One security scheme per key header a store accepts (`KEY_HEADERS`: the spec's `SvcKey`, the
 * deployed service's `C2SKey`); an operation accepts either.
 */
export function webhookSecuritySchemes(): Record<string, unknown> {
  return Object.fromEntries(
    KEY_HEADERS.map((name) => [
      name,
      {
        type: 'apiKey',
        in: 'header',
        name,
        description: `The key issued for the connection${name === 'SvcKey' ? ' (the spec\'s header)' : ' (the header the deployed Click2Sync service sends)'}. A store accepts it in ${KEY_HEADERS.join(' or ')}; two of them with different values are refused. Never sent in \`Authorization\` or the query.`,
      },
    ]),
  );
}

const SECURITY = KEY_HEADERS.map((name) => ({ [name]: [] }));

/** What a stub carries besides `_id` and `last_updated` (`, and `orderid``), from the registry (docs/wire-decisions.md). */
const stubExtra = (entity: Entity) => entityOf(entity).stubMembers.map((m) => `, and \`${m}\``).join('');

/** The webhook routes in OpenAPI form: `/products/:id` → `/products/{id}`. */
export function defaultWebhookPaths(): Record<OperationName, string> {
  const out = {} as Record<OperationName, string>;
  for (const route of Object.values(WEBHOOK_ROUTES)) out[route.operation] = route.path.replace(/:([A-Za-z_]\w*)/g, '{$1}');
  return out;
}

type Responses = Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: JsonSchema }> }>;

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

function commonErrors(s: GeneratedSchemas): Responses {
  const error = json(s.reply(ErrorBodySchema));
  return {
    '401': {
      description: `No key header (${KEY_HEADERS.map((h) => `\`${h}\``).join(' or ')}), an unknown, expired or revoked key, or two key headers with different values (a key in \`Authorization\` or the query is never read).`,
      headers: { 'WWW-Authenticate': { description: 'The first key header the store reads (`SvcKey` by default).', schema: { type: 'string' } } },
      content: error,
    },
    '405': {
      description: 'The path is one of the router\'s routes and the method is not one it serves there (a `DELETE /products`, say); the key is not checked first.',
      headers: { Allow: { description: 'The methods the path serves.', schema: { type: 'string' } } },
      content: error,
    },
    '429': {
      description:
        'Rate limited: too many requests with this key, or too many refused keys from this address (a valid key is never refused by that second limit). On by default.',
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

/** The batched by-ID read's answer (`?ids=`): `{"<entity>": [items], "missing": [ids]}`. */
function byIdsReply(s: GeneratedSchemas, entity: string, item: z.ZodType): object {
  return {
    type: 'object',
    required: [entity, 'missing'],
    properties: { [entity]: { type: 'array', items: s.reply(item) }, missing: { type: 'array', items: s.inline(IdSchema) } },
  };
}

/** The query parameters of a table, in OpenAPI form (`jobid` is required where `required` says so). */
function queryParameters(s: GeneratedSchemas, table: QueryTable, required: ReadonlySet<string> = new Set()): object[] {
  return Object.entries(table).map(([name, p]) => {
    const schema = s.parameter(p.schema) as { type?: unknown };
    return {
      name,
      in: 'query',
      required: required.has(name),
      description: p.description,
      // An array parameter (`ids`) is one comma-separated value, never the parameter repeated.
      ...(schema.type === 'array' ? { style: 'form', explode: false } : {}),
      schema,
      ...(p.origin !== 'spec' ? { 'x-storebridge-origin': p.origin } : {}),
    };
  });
}

/** The OpenAPI `paths` of the webhooks. `paths` maps each operation to its URL (OpenAPI templating). */
export function webhookPaths(s: GeneratedSchemas, paths: Readonly<Record<OperationName, string>>): Record<string, Record<string, unknown>> {
  const error = json(s.reply(ErrorBodySchema));
  const out: Record<string, Record<string, unknown>> = {};
  const add = (name: OperationName, operation: Record<string, unknown>) => {
    const route = WEBHOOK_ROUTES[name];
    const path = paths[name];
    out[path] ??= {};
    out[path][route.method.toLowerCase()] = { operationId: name, tags: ['webhooks'], security: SECURITY, ...operation };
  };

  for (const entity of ENTITIES) {
    const d = ENTITY_DESCRIPTORS[entity];
    const { noun, title: Noun } = d;
    const [list, get, write] = (['list', 'get', 'write'] as const).map((kind) => WEBHOOK_ROUTES[d.operations[kind]]);
    const errors = commonErrors(s);

    add(list.operation, {
      summary: `List ${entity}`,
      description: `One page of ${entity} in webhook form. Offset requests answer \`paging.offset\` (this page's first position); cursor requests answer without it. \`paging.next\` is absent on the last page. A page body never exceeds the router's byte budget (default 10,000,000 bytes). A store run with the ids-only listing answers stubs (\`{_id, last_updated}\`${stubExtra(entity)}) in place of the ${entity}, up to 10,000 a page when asked with \`limit\`. With \`id\`, the answer is that one ${noun}, bare (the deployed by-id read), or 404. With \`ids\` (this kit's batched by-ID read, advertised by the \`${BY_IDS_HEADER}\` header of stub list pages), the answer is \`{"${entity}": [the ${entity} found, in the order asked], "missing": [ids not found]}\`; an item that would cross the byte budget is left out of both lists (read it on its own).`,
      parameters: queryParameters(s, list.query),
      responses: {
        '200': {
          description: `A page of ${entity}, or with \`id\` the bare ${noun}, or with \`ids\` the ${entity} found and the ids missing.`,
          headers: { [BY_IDS_HEADER]: { description: `On stub list pages: the batched by-ID read (\`ids\`) is served, for up to this many ids.`, schema: { type: 'integer', minimum: 1 } } },
          content: json({ oneOf: [s.reply(list.reply), s.reply(d.schema), byIdsReply(s, entity, d.schema)] }),
        },
        '400': { description: 'A parameter is repeated or malformed (a control character in `id` included), `offset` and `next` are both given, or the cursor is invalid, tampered with or foreign.', content: error },
        '404': { description: `With \`id\`: no ${noun} has this \`_id\`.`, content: error },
        ...errors,
      },
    });
    add(get.operation, {
      summary: `${Noun} by ID`,
      parameters: [{ name: 'id', in: 'path', required: true, description: `The \`_id\` of the ${noun}, percent-encoded.`, schema: s.inline(IdSchema) }],
      responses: {
        '200': { description: `The ${noun}.`, content: json(s.reply(get.reply)) },
        '400': { description: 'The id in the path is not valid percent-encoding or not a valid `_id` (empty, over 256 characters, a control character).', content: error },
        '404': { description: `No ${noun} has this \`_id\`.`, content: error },
        ...errors,
      },
    });
    add(write.operation, {
      summary: `Add/Update ${noun}`,
      description: `Inserts or updates the ${noun} \`id\`. A body \`_id\` that disagrees with \`id\` is refused; a missing one takes \`id\`; without \`id\` the body's \`_id\` is the id; with neither the ${noun} is created and the store assigns its id (safe in a raw URL), answered in the success structure. \`jobid\` is optional. On change \`last_updated\` becomes now; repeating the same write answers the same result. A refused write stores nothing. Unknown body members are ignored and listed in \`warnings\`.`,
      parameters: queryParameters(s, write.query),
      requestBody: { required: true, description: `The complete ${noun}, webhook form (at most 10 MiB by default).`, content: json(s.request(write.body!)) },
      responses: {
        '200': { description: `Stored: \`success\` true, \`code\` 200, non-blocking \`warnings\`, and the resulting ${noun}.`, content: json(s.reply(write.reply)) },
        '400': {
          description: `Refused: the write failure structure (\`success\` false, \`code\` 400, \`error\`, \`reasons\` [{msg, message, code}] (the spec's \`msg\` and the deployed \`message\` + \`code\`), \`warnings\`), also for a body that is not JSON, not UTF-8 or nested more than 64 levels deep.`,
          content: json({ oneOf: [s.reply(WriteFailureSchema), s.reply(ErrorBodySchema)] }),
        },
        ...errors,
        '413': { description: 'The body is larger than the router\'s `maxBodyBytes` (default 10 MiB). The rest of the body is read and dropped (up to 64 MiB) before the answer, so it arrives; then the connection closes.', content: error },
        '415': { description: 'The body is not sent as UTF-8 JSON (`Content-Type: application/json`), or is compressed.', content: error },
      },
    });
  }
  return out;
}
