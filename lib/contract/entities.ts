/**
 * One descriptor per synchronized entity: its nouns, schemas in both wire forms, converters,
 * envelopes and operation names. Code that works for both entities takes a descriptor
 * (`entityOf(entity)`) instead of branching on `entity === 'products'`, and the types carry
 * through: `entityOf('orders').schema` parses an `Order`.
 *
 * @example
 * ```ts
 * import { entityOf } from 'storebridge/contract';
 * function describe<E extends Entity>(entity: E, item: ItemOf<E>): string {
 *   const d = entityOf(entity);
 *   return `${d.noun} ${item._id} (${d.naturalKey} ${String(item[d.naturalKey as keyof ItemOf<E>] ?? '-')})`;
 * }
 * ```
 */
import type { z } from 'zod';
import { orderToReverse, orderToWebhook, productToReverse, productToWebhook } from './converters';
import {
  OrderByIdResponseSchema,
  OrderListResponseSchema,
  OrderWriteSuccessSchema,
  ProductByIdResponseSchema,
  ProductListResponseSchema,
  ProductWriteSuccessSchema,
  PulledOrderSchema,
  PulledProductSchema,
  PushOrdersPageSchema,
  PushProductsPageSchema,
} from './messages';
import { ReverseOrderSchema, ReverseProductSchema, type ReverseOrder, type ReverseProduct } from './reverse';
import { OrderSchema, ProductSchema, type Entity, type Order, type Product } from './webhook';

/** The reverse-form item of an entity. */
export type ReverseItemOf<E extends Entity> = E extends 'products' ? ReverseProduct : ReverseOrder;

/** The webhook operations of one entity, by kind. */
export interface EntityOperations<E extends Entity> {
  readonly list: E extends 'products' ? 'listProducts' : 'listOrders';
  readonly get: E extends 'products' ? 'getProduct' : 'getOrder';
  readonly write: E extends 'products' ? 'writeProduct' : 'writeOrder';
}

export interface EntityDescriptor<E extends Entity> {
  /** The entity as the interface names it (`entity` values, route segments, list members). */
  readonly entity: E;
  /** The member that carries one item: `{product}` / `{order}`. */
  readonly noun: E extends 'products' ? 'product' : 'order';
  /** For messages: `Product` / `Order`. */
  readonly title: string;
  /** The item in webhook form (numbers). */
  readonly schema: z.ZodType<E extends 'products' ? Product : Order>;
  /** The item in the reverse form of the spec (strings for quantities and money). */
  readonly reverseSchema: z.ZodType<ReverseItemOf<E>>;
  readonly listResponseSchema: z.ZodType;
  readonly byIdResponseSchema: z.ZodType;
  readonly writeSuccessSchema: z.ZodType;
  /** `{product}` / `{order}` of a pulled item and a `succeded` body, reverse form. */
  readonly pulledSchema: z.ZodType;
  /** `{products: […]}` / `{orders: […]}` of a push page, reverse form. */
  readonly pushPageSchema: z.ZodType;
  readonly toReverse: (item: E extends 'products' ? Product : Order) => ReverseItemOf<E>;
  readonly toWebhook: (item: ReverseItemOf<E>) => E extends 'products' ? Product : Order;
  readonly operations: EntityOperations<E>;
  /**
   * The business id deployed peers key an item by when it has no `_id` or in acknowledgement paths:
   * a product's `sku`, an order's `orderid` (docs/interface.md "Dialects").
   */
  readonly naturalKey: E extends 'products' ? 'sku' : 'orderid';
}

export type EntityDescriptors = { readonly [E in Entity]: EntityDescriptor<E> };

export const ENTITY_DESCRIPTORS: EntityDescriptors = {
  products: {
    entity: 'products',
    noun: 'product',
    title: 'Product',
    schema: ProductSchema,
    reverseSchema: ReverseProductSchema,
    listResponseSchema: ProductListResponseSchema,
    byIdResponseSchema: ProductByIdResponseSchema,
    writeSuccessSchema: ProductWriteSuccessSchema,
    pulledSchema: PulledProductSchema,
    pushPageSchema: PushProductsPageSchema,
    toReverse: productToReverse,
    toWebhook: productToWebhook,
    operations: { list: 'listProducts', get: 'getProduct', write: 'writeProduct' },
    naturalKey: 'sku',
  },
  orders: {
    entity: 'orders',
    noun: 'order',
    title: 'Order',
    schema: OrderSchema,
    reverseSchema: ReverseOrderSchema,
    listResponseSchema: OrderListResponseSchema,
    byIdResponseSchema: OrderByIdResponseSchema,
    writeSuccessSchema: OrderWriteSuccessSchema,
    pulledSchema: PulledOrderSchema,
    pushPageSchema: PushOrdersPageSchema,
    toReverse: orderToReverse,
    toWebhook: orderToWebhook,
    operations: { list: 'listOrders', get: 'getOrder', write: 'writeOrder' },
    naturalKey: 'orderid',
  },
};

/** The descriptor of an entity, typed by it. */
export function entityOf<E extends Entity>(entity: E): EntityDescriptor<E> {
  return ENTITY_DESCRIPTORS[entity] as EntityDescriptor<E>;
}

/** Whether a string names an entity (`products` or `orders`). */
export function isEntity(value: unknown): value is Entity {
  return value === 'products' || value === 'orders';
}
