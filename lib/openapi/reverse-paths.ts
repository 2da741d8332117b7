/**
 * The OpenAPI paths of the reverse connection: every `{P}/…` call the service answers, from the
 * contract's `REVERSE_ROUTES` (the table the service routes with; docs/reverse-connection.md). `{P}`
 * is `/api/adapters/custom/reverse/connection/{connection_key}`; the key in the path is the only
 * credential. Per-entity calls are written out per entity, so each has its exact body. Every status
 * the service answers is listed (a live test provokes each one).
 */
import { ErrorBodySchema, IdSchema, InitializeBodySchema, REVERSE_BASE_PATH, REVERSE_ROUTES, type ReverseRoute } from '../contract';
import type { GeneratedSchemas, JsonSchema } from './openapi-schemas';

export const REVERSE_PREFIX = `${REVERSE_BASE_PATH}/{connection_key}`;

function operationId(call: ReverseRoute): string {
  const words = call.path
    .split('/')
    .filter((w) => w !== '' && w !== ':id')
    .map((w) => w[0].toUpperCase() + w.slice(1));
  return `reverse${call.method === 'GET' ? 'Get' : 'Post'}${words.join('')}`;
}

/** The OpenAPI `paths` of the reverse connection. */
export function reversePaths(s: GeneratedSchemas): Record<string, Record<string, unknown>> {
  const error = { 'application/json': { schema: s.reply(ErrorBodySchema) } };
  const keyParam = {
    name: 'connection_key',
    in: 'path',
    required: true,
    description: 'The key of the connection: the only credential of the reverse connection. Keep it secret (it is never logged by this kit).',
    schema: { type: 'string', minLength: 1 },
  };
  const idParam = { name: 'id', in: 'path', required: true, description: 'The item: its `_id`, or a product\'s `sku` / an order\'s `orderid` (deployed daemons), raw or percent-encoded.', schema: s.inline(IdSchema) };
  const out: Record<string, Record<string, unknown>> = {};
  for (const call of REVERSE_ROUTES) {
    const method = call.method.toLowerCase();
    const responses: Record<string, unknown> = { '200': { description: 'Done.', content: { 'application/json': { schema: s.reply(call.reply) } } } };
    responses['400'] = {
      description:
        method === 'post'
          ? 'The body is not JSON, not UTF-8 or Latin-1, nested more than 64 levels, or has the wrong shape (the message names the field); or the connection key or the id in the path holds a control character.'
          : 'The connection key (or the id) in the path holds a control character.',
      content: error,
    };
    responses['404'] = { description: 'Unknown connection key (the same answer as an unknown path).', content: error };
    responses['405'] = { description: 'The path is known, the method is not (the message names the right one).', content: error };
    if (call.stateful) responses['409'] = { description: 'The call is out of order for the connection\'s state; nothing changed. The message says what is expected.', content: error };
    if (method === 'post') {
      responses['413'] = { description: 'The body is larger than the service\'s `maxBodyBytes` (default 10,000,000 bytes), holds an array longer than `maxPushPageItems` (default 1,000) or more than 1,000,000 values, or (a push page) more items than `maxPushPageItems`.', content: error };
      responses['415'] = { description: 'The body is not declared as JSON (`Content-Type: application/json`), declares another charset than UTF-8, or is compressed.', content: error };
    }
    responses['429'] = { description: 'Answers to a connection calling faster than `maxCallsPerSecond` are delayed, not refused; a call that would wait longer than `maxCallDelayMs` (many sent at once) is refused, with `Retry-After`.', content: error };
    responses['500'] = {
      description: call.store ? "The service's store or its state store failed; nothing changed. Try the call again." : "The service's state store failed; nothing changed. Try the call again.",
      content: error,
    };
    const operation: Record<string, unknown> = {
      operationId: operationId(call),
      tags: ['reverse-connection'],
      summary: call.summary,
      ...(call.origin !== 'spec' ? { 'x-storebridge-origin': call.origin } : {}),
      security: [],
      parameters: call.path.includes(':id') ? [idParam] : [],
      responses,
    };
    if (call.request !== undefined) {
      operation.requestBody =
        call.request === null
          ? { required: false, description: 'Ignored (send `{}`).', content: { 'application/json': { schema: {} as JsonSchema } } }
          : { required: method === 'post' && call.request !== InitializeBodySchema, content: { 'application/json': { schema: s.request(call.request) } } };
    }
    const path = REVERSE_PREFIX + call.path.replace(':id', '{id}');
    out[path] = { parameters: [keyParam], ...out[path], [method]: operation };
  }
  return out;
}
