/**
 * The webhook operations as data: for each, its method, entity, kind, default route (relative to
 * where a store router is mounted), query table, body and reply schemas. The store router routes
 * with this table, the caller builds its calls from it and the OpenAPI document describes it.
 */
import type { z } from 'zod';
import { ENTITY_DESCRIPTORS } from './entities';
import { ErrorBodySchema } from './messages';
import { LIST_QUERY, WRITE_QUERY, type QueryTable } from './query';
import { ENTITIES, OrderSchema, ProductSchema, type Entity } from './webhook';

export type WebhookOperation = 'listProducts' | 'getProduct' | 'writeProduct' | 'listOrders' | 'getOrder' | 'writeOrder';
export type WebhookKind = 'list' | 'get' | 'write';

/** A write body: the item, whose `_id` may be left out (it then takes the `id` parameter, or the store assigns one). */
export const ProductWriteBodySchema = ProductSchema.partial({ _id: true });
export const OrderWriteBodySchema = OrderSchema.partial({ _id: true });
const WRITE_BODIES = { products: ProductWriteBodySchema, orders: OrderWriteBodySchema } as const;

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
    { ...common, operation: d.operations.write, method: 'POST', kind: 'write', path: `/${entity}`, query: WRITE_QUERY, body: WRITE_BODIES[entity], reply: d.writeSuccessSchema },
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
