/**
 * The entity registry: one descriptor per synchronized entity holds every fact the kit knows about
 * it (nouns, schemas in both wire forms, converters, envelopes, operation names, its natural key,
 * its cursor tag, its stub members, its adapter check hook), and `EntityTypes` maps each entity to
 * its types. Every other layer reads these two: the list of entities is `ENTITIES` (the registry's
 * keys), an item's type is `ItemOf<E>`, a per-entity fact is `entityOf(entity).<fact>`. Nothing
 * else in the kit lists the entities or keeps a table keyed by them (test/architecture holds this).
 *
 * @example
 * ```ts
 * import { entityOf, type Entity, type ItemOf } from 'storebridge/contract';
 * function describe<E extends Entity>(entity: E, item: ItemOf<E>): string {
 *   const d = entityOf(entity);
 *   return `${d.noun} ${item._id} (${d.naturalKey} ${String((item as Record<string, unknown>)[d.naturalKey] ?? '-')})`;
 * }
 * ```
 */
import { z } from 'zod';
import { orderToReverse, orderToWebhook, productToReverse, productToWebhook } from './converters';
import { keepOrderWebhookOnly, keepProductWebhookOnly } from './webhook-only';
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
import { OrderSchema, ProductSchema, type Order, type Product } from './webhook';

/**
 * The types of each entity, by entity name: its item in both wire forms and the literal types of
 * its descriptor's names. `Entity`, `ItemOf`, `ReverseItemOf` and the descriptor's member types are
 * all read from here, so no type branches on an entity's name.
 */
export interface EntityTypes {
  products: {
    readonly item: Product;
    readonly reverse: ReverseProduct;
    readonly noun: 'product';
    readonly naturalKey: 'sku';
    readonly operations: { readonly list: 'listProducts'; readonly get: 'getProduct'; readonly write: 'writeProduct' };
    readonly checkHook: 'checkProduct';
  };
  orders: {
    readonly item: Order;
    readonly reverse: ReverseOrder;
    readonly noun: 'order';
    readonly naturalKey: 'orderid';
    readonly operations: { readonly list: 'listOrders'; readonly get: 'getOrder'; readonly write: 'writeOrder' };
    readonly checkHook: 'checkOrder';
  };
}

/** A synchronized entity, as the spec names it (`entity` values, route names): `products` or `orders`. */
export type Entity = keyof EntityTypes;
/** The webhook-form item of an entity. */
export type ItemOf<E extends Entity> = EntityTypes[E]['item'];
/** The reverse-form item of an entity. */
export type ReverseItemOf<E extends Entity> = EntityTypes[E]['reverse'];
/** The business key of an entity (`sku`, `orderid`). */
export type NaturalKeyOf<E extends Entity> = EntityTypes[E]['naturalKey'];

/** The webhook operations of one entity, by kind. */
export type EntityOperations<E extends Entity> = EntityTypes[E]['operations'];

export interface EntityDescriptor<E extends Entity> {
  /** The entity as the interface names it (`entity` values, route segments, list members). */
  readonly entity: E;
  /** The member that carries one item: `{product}` / `{order}`. */
  readonly noun: EntityTypes[E]['noun'];
  /** For messages: `Product` / `Order`. */
  readonly title: string;
  /** The item in webhook form (numbers). */
  readonly schema: z.ZodObject<z.ZodRawShape> & z.ZodType<ItemOf<E>>;
  /** A write body: the item, whose `_id` may be left out (it then takes the `id` parameter, or the store assigns one). */
  readonly writeBodySchema: z.ZodType;
  /** The item in the reverse form of the spec (strings for quantities and money). */
  readonly reverseSchema: z.ZodType<ReverseItemOf<E>>;
  readonly listResponseSchema: z.ZodType;
  readonly byIdResponseSchema: z.ZodType;
  readonly writeSuccessSchema: z.ZodType;
  /** `{product}` / `{order}` of a pulled item and a `succeded` body, reverse form. */
  readonly pulledSchema: z.ZodType;
  /** `{products: […]}` / `{orders: […]}` of a push page, reverse form. */
  readonly pushPageSchema: z.ZodType;
  readonly toReverse: (item: ItemOf<E>) => ReverseItemOf<E>;
  readonly toWebhook: (item: ReverseItemOf<E>) => ItemOf<E>;
  /** A pulled (reverse-form) item replacing a stored one keeps what only the webhook form has (`converters.ts`). */
  readonly keepWebhookOnly: (stored: ItemOf<E>, incoming: ItemOf<E>) => ItemOf<E>;
  /**
   * An item of this entity may arrive from the service without an `_id` (a deployed service's new
   * order, named by its natural key only): the daemon's store then keys it by an id derived from
   * the natural key, so a re-delivery finds it. Otherwise such an item is refused.
   */
  readonly storeAssignsId: boolean;
  readonly operations: EntityOperations<E>;
  /**
   * The business id deployed peers key an item by when it has no `_id` or in acknowledgement paths,
   * and the member the store keeps unique: a product's `sku`, an order's `orderid`
   * (docs/interface.md "Dialects", docs/writes.md).
   */
  readonly naturalKey: NaturalKeyOf<E>;
  /** The optional `StoreAdapter` hook that vets a write of this entity (`checkProduct` / `checkOrder`). */
  readonly checkHook: EntityTypes[E]['checkHook'];
  /** One character naming the entity inside the store's cursors (a cursor of one entity is refused by another). */
  readonly cursorTag: string;
  /**
   * The members a stub carries besides `_id` and `last_updated` (the deployed ids-only list: the
   * cs-cart example's order stubs carry `orderid`; product stubs carry nothing more, so a caller
   * can tell a stub from an item).
   */
  readonly stubMembers: readonly string[];
}

export type EntityDescriptors = { readonly [E in Entity]: EntityDescriptor<E> };

/** A write body: the item, whose `_id` may be left out (it then takes the `id` parameter, or the store assigns one). */
export const ProductWriteBodySchema = ProductSchema.partial({ _id: true });
export const OrderWriteBodySchema = OrderSchema.partial({ _id: true });

/** The registry. The order of its members is the order entities are synchronized in (products first). */
export const ENTITY_DESCRIPTORS: EntityDescriptors = {
  products: {
    entity: 'products',
    noun: 'product',
    title: 'Product',
    schema: ProductSchema,
    writeBodySchema: ProductWriteBodySchema,
    reverseSchema: ReverseProductSchema,
    listResponseSchema: ProductListResponseSchema,
    byIdResponseSchema: ProductByIdResponseSchema,
    writeSuccessSchema: ProductWriteSuccessSchema,
    pulledSchema: PulledProductSchema,
    pushPageSchema: PushProductsPageSchema,
    toReverse: productToReverse,
    toWebhook: productToWebhook,
    keepWebhookOnly: keepProductWebhookOnly,
    storeAssignsId: false,
    operations: { list: 'listProducts', get: 'getProduct', write: 'writeProduct' },
    naturalKey: 'sku',
    checkHook: 'checkProduct',
    cursorTag: 'p',
    stubMembers: [],
  },
  orders: {
    entity: 'orders',
    noun: 'order',
    title: 'Order',
    schema: OrderSchema,
    writeBodySchema: OrderWriteBodySchema,
    reverseSchema: ReverseOrderSchema,
    listResponseSchema: OrderListResponseSchema,
    byIdResponseSchema: OrderByIdResponseSchema,
    writeSuccessSchema: OrderWriteSuccessSchema,
    pulledSchema: PulledOrderSchema,
    pushPageSchema: PushOrdersPageSchema,
    toReverse: orderToReverse,
    toWebhook: orderToWebhook,
    keepWebhookOnly: keepOrderWebhookOnly,
    storeAssignsId: true,
    operations: { list: 'listOrders', get: 'getOrder', write: 'writeOrder' },
    naturalKey: 'orderid',
    checkHook: 'checkOrder',
    cursorTag: 'o',
    stubMembers: ['orderid'],
  },
};

/**
 * Every entity, in synchronization order: the registry's keys. The one list of entities in the
 * kit; code that works for every entity iterates this.
 */
export const ENTITIES = Object.keys(ENTITY_DESCRIPTORS) as unknown as readonly [Entity, ...Entity[]];
/** An `entity` value: one of `ENTITIES`. */
export const EntitySchema = z.enum(ENTITIES);
/** `{entity}` (the reverse connection's `/entity` reply and `initialize` body). */
export const EntityBodySchema = z.object({ entity: EntitySchema });

/** A table with one value per entity, built from the registry. */
export function perEntity<T>(value: (entity: Entity) => T): Record<Entity, T> {
  return Object.fromEntries(ENTITIES.map((e) => [e, value(e)])) as Record<Entity, T>;
}

/** The descriptor of an entity, typed by it. */
export function entityOf<E extends Entity>(entity: E): EntityDescriptor<E> {
  return ENTITY_DESCRIPTORS[entity] as EntityDescriptor<E>;
}

/** Whether a string names an entity (one of `ENTITIES`). */
export function isEntity(value: unknown): value is Entity {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ENTITY_DESCRIPTORS, value);
}

/**
 * Registers one more entity: its descriptor joins `ENTITY_DESCRIPTORS` and its name `ENTITIES`.
 * An extension point for tests and experiments (test/contract/third-entity.test.ts): the kit's
 * tables that are built from the registry when their module loads (routes, `EntitySchema`, …)
 * see the entity only when this runs before those modules are first imported, so call it from a
 * module of its own that is imported first. Types follow by augmenting `EntityTypes`.
 *
 * @example
 * ```ts
 * // customers-entity.ts, imported before anything else of the kit
 * import { registerEntity } from 'storebridge/contract';
 * registerEntity({ entity: 'customers', noun: 'customer', title: 'Customer', schema: CustomerSchema, … } as never);
 * ```
 */
export function registerEntity(descriptor: EntityDescriptor<Entity>): void {
  const name = descriptor.entity as string;
  if (isEntity(name)) throw new Error(`entity ${name} is already registered`);
  (ENTITY_DESCRIPTORS as unknown as Record<string, EntityDescriptor<Entity>>)[name] = descriptor;
  (ENTITIES as unknown as string[]).push(name);
}

// ---- Views of the registry, kept for the public surface (prefer `entityOf(entity).<fact>`). ----

/** Webhook-form schema of each entity's item (`entityOf(entity).schema`). */
export const ITEM_SCHEMAS: { readonly [E in Entity]: EntityDescriptors[E]['schema'] } = perEntity((e) => ENTITY_DESCRIPTORS[e].schema) as never;
/** Reverse-form schema of each entity's item (`entityOf(entity).reverseSchema`). */
export const REVERSE_ITEM_SCHEMAS: { readonly [E in Entity]: EntityDescriptors[E]['reverseSchema'] } = perEntity((e) => ENTITY_DESCRIPTORS[e].reverseSchema) as never;
/** The JSON member that carries one item (`{product}`) in by-ID and write responses (`entityOf(entity).noun`). */
export const SINGULAR: { readonly [E in Entity]: EntityTypes[E]['noun'] } = perEntity((e) => ENTITY_DESCRIPTORS[e].noun) as never;
/** Per-entity converters (`entityOf(entity).toReverse` / `.toWebhook`). */
export const CONVERTERS: { readonly [E in Entity]: Pick<EntityDescriptor<E>, 'toReverse' | 'toWebhook'> } = perEntity((e) => ({
  toReverse: ENTITY_DESCRIPTORS[e].toReverse,
  toWebhook: ENTITY_DESCRIPTORS[e].toWebhook,
})) as never;
