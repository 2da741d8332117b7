/**
 * The OpenAPI paths of the reverse connection: every `{P}/…` call the service answers
 * (`lib/reverse/service/reverse-service.ts`, docs/reverse-connection.md). `{P}` is
 * `/api/adapters/custom/reverse/connection/{connection_key}`; the key in the path is the only
 * credential. Per-entity calls are written out per entity, so each has its exact body.
 */
import type { z } from 'zod';
import {
  AcknowledgedSchema,
  EntityBodySchema,
  ErrorBodySchema,
  HasMoreSchema,
  IdSchema,
  ModeSchema,
  OkSchema,
  PulledOrderSchema,
  PulledProductSchema,
  PushOrdersPageSchema,
  PushProductsPageSchema,
  PushReceivedSchema,
  ReadyForNextSchema,
  StorageFailureReportSchema,
  UpstreamStatusSchema,
  type Entity,
} from '../contract';
import { REVERSE_BASE_PATH } from '../reverse/service/reverse-service';
import type { GeneratedSchemas, JsonSchema } from './openapi-schemas';

/** The body of both initialize calls: `{}` or `{entity}` (as the service parses it). */
export const InitializeBodySchema = EntityBodySchema.partial();

/** Schemas the reverse paths need beyond the contract's named exports. */
export const REVERSE_EXTRA_SCHEMAS: ReadonlyMap<z.ZodType, string> = new Map<z.ZodType, string>([[InitializeBodySchema, 'InitializeBody']]);

export const REVERSE_PREFIX = `${REVERSE_BASE_PATH}/{connection_key}`;

/** One call: its path after `{P}`, what it takes and answers, and which failures it can meet. */
interface ReverseCall {
  readonly method: 'get' | 'post';
  readonly path: string;
  readonly summary: string;
  /** `null`: any body is accepted and ignored. */
  readonly request?: z.ZodType | null;
  readonly reply: z.ZodType;
  /** A call that depends on the connection's state (409 when out of order). */
  readonly stateful: boolean;
  /** A call that reads or writes the service's store (500 when it fails). */
  readonly store?: boolean;
  readonly id?: boolean;
  readonly description?: string;
}

const PULLED = { products: PulledProductSchema, orders: PulledOrderSchema } as const;
const PAGES = { products: PushProductsPageSchema, orders: PushOrdersPageSchema } as const;
const NOUN: Record<Entity, string> = { products: 'product', orders: 'order' };

function calls(): ReverseCall[] {
  const out: ReverseCall[] = [
    { method: 'get', path: '/mode', summary: 'What the service wants now (pull, push, pingsample or idle)', reply: ModeSchema, stateful: false },
    { method: 'get', path: '/upstreamstatus', summary: 'Connection status', reply: UpstreamStatusSchema, stateful: false },
    {
      method: 'get',
      path: '/entity',
      summary: 'Entity of the running or next transaction',
      description: 'During a pull its entity; during a push the entity whose pages are expected now; with nothing running the entity the queued transaction starts with. 409 when nothing is queued, and during a push with both entities finished.',
      reply: EntityBodySchema,
      stateful: true,
    },
    { method: 'post', path: '/pull/initialize', summary: 'Start the queued pull', request: InitializeBodySchema, reply: UpstreamStatusSchema, stateful: true, store: true },
    { method: 'post', path: '/push/initialize', summary: 'Start the queued push or sample push', request: InitializeBodySchema, reply: UpstreamStatusSchema, stateful: true },
    { method: 'post', path: '/pull/finish', summary: 'End the pull transaction', request: null, reply: OkSchema, stateful: true },
  ];
  for (const entity of ['products', 'orders'] as const) {
    const noun = NOUN[entity];
    out.push(
      { method: 'get', path: `/pull/${entity}/hasmore`, summary: `Whether a ${noun} is ready to download`, description: '`done` (an addition to the spec) once the pull has no item left.', reply: HasMoreSchema, stateful: true },
      {
        method: 'get',
        path: `/pull/${entity}/next`,
        summary: `Download the next ${noun} (reverse form)`,
        description: 'The item is handed out under a lease: until it is acknowledged every call returns the same item.',
        reply: PULLED[entity],
        stateful: true,
        store: true,
      },
      { method: 'post', path: `/pull/${entity}/{id}/succeded`, summary: `Report the ${noun} stored`, description: `Body: the ${noun} as stored; its \`_id\` must equal \`{id}\`. A repeat answers \`duplicate\`.`, request: PULLED[entity], reply: AcknowledgedSchema, stateful: true, id: true },
      { method: 'post', path: `/pull/${entity}/{id}/failed`, summary: `Report the ${noun} not stored`, description: 'Body: the storage failure report. A repeat answers `duplicate`.', request: StorageFailureReportSchema, reply: AcknowledgedSchema, stateful: true, id: true },
      { method: 'get', path: `/pull/${entity}/readyfornext`, summary: 'Whether the service finished processing the acknowledgement', reply: ReadyForNextSchema, stateful: true },
      { method: 'post', path: `/pull/${entity}/finish`, summary: `End the ${noun} downloads`, request: null, reply: AcknowledgedSchema, stateful: true },
      { method: 'post', path: `/push/${entity}`, summary: `Push a page of ${entity} (reverse form)`, description: 'Validated and converted whole before anything is stored (one bad item: 400, nothing stored); idempotent.', request: PAGES[entity], reply: PushReceivedSchema, stateful: true, store: true },
      { method: 'post', path: `/pingsample/${entity}`, summary: `Push a sample page of ${entity} (validated and counted, never stored)`, request: PAGES[entity], reply: PushReceivedSchema, stateful: true },
      {
        method: 'post',
        path: `/push/${entity}/finish`,
        summary: `End the ${noun} push`,
        description:
          entity === 'products'
            ? 'Also accepted as the order finish once products are finished (the spec prints this path for the normal order finish).'
            : 'The canonical normal order finish (accepted once products are finished).',
        request: null,
        reply: AcknowledgedSchema,
        stateful: true,
      },
      { method: 'post', path: `/pingsample/${entity}/finish`, summary: `End the ${noun} sample push`, request: null, reply: AcknowledgedSchema, stateful: true },
    );
  }
  out.push(
    { method: 'post', path: '/push/finish', summary: 'End the push (then `finishing`/`finished`)', request: null, reply: OkSchema, stateful: true },
    { method: 'post', path: '/pingsample/finish', summary: 'End the sample push (then `finishing`/`finished`)', request: null, reply: OkSchema, stateful: true },
  );
  return out;
}

function operationId(call: ReverseCall): string {
  const words = call.path
    .split('/')
    .filter((w) => w !== '' && w !== '{id}')
    .map((w) => w[0].toUpperCase() + w.slice(1));
  return `reverse${call.method === 'get' ? 'Get' : 'Post'}${words.join('')}`;
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
  const idParam = { name: 'id', in: 'path', required: true, description: 'The `_id` of the item, percent-encoded.', schema: s.inline(IdSchema) };
  const out: Record<string, Record<string, unknown>> = {};
  for (const call of calls()) {
    const responses: Record<string, unknown> = { '200': { description: 'Done.', content: { 'application/json': { schema: s.reply(call.reply) } } } };
    if (call.method === 'post') {
      responses['400'] = { description: 'The body is not JSON or has the wrong shape (the message names the field), holds a forbidden key, or the id in the path is invalid.', content: error };
    }
    responses['404'] = { description: 'Unknown connection key (the same answer as an unknown path).', content: error };
    if (call.stateful) responses['409'] = { description: 'The call is out of order for the connection\'s state; nothing changed. The message says what is expected.', content: error };
    if (call.method === 'post') responses['413'] = { description: 'The body is larger than the service\'s `maxBodyBytes` (default 10,000,000 bytes).', content: error };
    if (call.store) responses['500'] = { description: 'The service\'s store failed; try the call again.', content: error };
    const operation: Record<string, unknown> = {
      operationId: operationId(call),
      tags: ['reverse-connection'],
      summary: call.summary,
      ...(call.description ? { description: call.description } : {}),
      security: [],
      parameters: call.id ? [idParam] : [],
      responses,
    };
    if (call.request !== undefined) {
      operation.requestBody =
        call.request === null
          ? { required: false, description: 'Ignored (send `{}`).', content: { 'application/json': { schema: {} as JsonSchema } } }
          : { required: call.method === 'post' && call.request !== InitializeBodySchema, content: { 'application/json': { schema: s.request(call.request) } } };
    }
    const path = REVERSE_PREFIX + call.path;
    out[path] = { parameters: [keyParam], ...out[path], [call.method]: operation };
  }
  return out;
}
