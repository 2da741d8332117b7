/**
 * The webhook operations as data: for each, its method, entity, kind, default route (relative to
 * where a store router is mounted), query table, body and reply schemas. The store router routes
 * with this table, the caller builds its calls from it and the OpenAPI document describes it.
 */
import type { z } from 'zod';
import { ENTITIES, ENTITY_DESCRIPTORS, type Entity, type EntityTypes } from './entities';
import { ErrorBodySchema } from './messages';
import { LIST_QUERY, WRITE_QUERY, type QueryTable } from './query';

export type WebhookKind = 'list' | 'get' | 'write';
/** Every operation name of the registry: `listProducts`, `getProduct`, `writeProduct`, `listOrders`, … */
export type WebhookOperation = { [E in Entity]: EntityTypes[E]['operations'][WebhookKind] }[Entity];

export interface WebhookRoute {
  readonly operation: WebhookOperation;
  readonly method: 'GET' | 'POST';
  readonly entity: Entity;
  readonly kind: WebhookKind;
  /** The default route, relative to where the router is mounted (`/products`, `/products/:id`). */
  readonly path: string;
  readonly query: QueryTable;
  /** The request body (writes). */
  readonly body?: z.ZodType;
  /** The 200 reply. */
  readonly reply: z.ZodType;
  /** Any other reply (`{error}`; writes also answer their failure structure). */
  readonly error: z.ZodType;
}

function routesOf(entity: Entity): WebhookRoute[] {
  const d = ENTITY_DESCRIPTORS[entity];
  const common = { entity, error: ErrorBodySchema };
  return [
    { ...common, operation: d.operations.list, method: 'GET', kind: 'list', path: `/${entity}`, query: LIST_QUERY, reply: d.listResponseSchema },
    { ...common, operation: d.operations.get, method: 'GET', kind: 'get', path: `/${entity}/:id`, query: {}, reply: d.byIdResponseSchema },
    { ...common, operation: d.operations.write, method: 'POST', kind: 'write', path: `/${entity}`, query: WRITE_QUERY, body: d.writeBodySchema, reply: d.writeSuccessSchema },
  ];
}

/** Every webhook operation, by name. */
export const WEBHOOK_ROUTES: Readonly<Record<WebhookOperation, WebhookRoute>> = Object.fromEntries(
  ENTITIES.flatMap(routesOf).map((r) => [r.operation, r]),
) as Record<WebhookOperation, WebhookRoute>;

/** The operation of an entity and kind. */
export function webhookOperation(entity: Entity, kind: WebhookKind): WebhookRoute {
  return WEBHOOK_ROUTES[ENTITY_DESCRIPTORS[entity].operations[kind]];
}
