/**
 * The webhook wire form: what a store's list, by-ID and write endpoints carry.
 * `quantity` is an integer, `number` and `unitPrice` are JSON numbers.
 *
 * Field names are exactly the spec's (`docs/contract.md` lists every decision taken where the
 * spec says "not shown"). Only `_id` is required; every other field is optional but, when
 * present, must have the spec's type. Unknown members are stripped on parse and reported
 * (see `parseWire`), never stored blindly.
 */
import { z } from 'zod';

/** Keys that would reach `Object.prototype` through a careless merge. Rejected everywhere. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Longest `_id` the kit accepts on writes and in cursors. */
export const MAX_ID_LENGTH = 256;

/**
 * What no id, key, `sku`, `orderid` or cursor may hold, as every message names it: a C0 control
 * character (PostgreSQL cannot store NUL; a newline breaks logs and headers), or an unpaired
 * surrogate (ill-formed UTF-16: it has no UTF-8 form, so a database stores U+FFFD instead and the
 * stored id no longer matches its document, nor can a caller put it into a URL).
 */
export const FORBIDDEN_CHARACTERS = 'control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)';

/** In `u` mode a paired surrogate is one code point, so the class matches only an unpaired one. */
const FORBIDDEN_CHARACTER = /[\u0000-\u001f\ud800-\udfff]/u;
const UNPAIRED_SURROGATE = /[\ud800-\udfff]/u;

/** Whether a string holds a character no id, key, `sku`, `orderid` or cursor may hold (`FORBIDDEN_CHARACTERS`). */
export function hasForbiddenCharacter(s: string): boolean {
  return FORBIDDEN_CHARACTER.test(s);
}

/** Whether a string is ill-formed UTF-16 (an unpaired surrogate): it has no UTF-8 form, so it cannot be sent or stored. */
export function hasUnpairedSurrogate(s: string): boolean {
  return UNPAIRED_SURROGATE.test(s);
}

/** As a JSON Schema `pattern` too (the OpenAPI document shows it; JSON Schema patterns are Unicode-aware). */
const WITHOUT_FORBIDDEN_CHARACTERS = /^[^\u0000-\u001f\ud800-\udfff]*$/u;
const NO_FORBIDDEN_CHARACTERS = `must not contain ${FORBIDDEN_CHARACTERS}`;

export const IdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`)
  .regex(WITHOUT_FORBIDDEN_CHARACTERS, NO_FORBIDDEN_CHARACTERS);

/**
 * Text that names an item and ends up in a database key column: a product `sku`, an order's
 * `orderid`, an order item's product reference. Any text but `FORBIDDEN_CHARACTERS`.
 */
export const SkuSchema = z.string().regex(WITHOUT_FORBIDDEN_CHARACTERS, NO_FORBIDDEN_CHARACTERS);

/**
 * The request header that makes a write idempotent (IETF draft "The Idempotency-Key HTTP Header
 * Field"; Stripe's `Idempotency-Key`): a repeat of the request with the same key is answered from
 * the first one's record instead of writing again (docs/writes.md "Idempotency-Key"). The caller
 * sends one on every create and reuses it on each retry (docs/client.md "Creates").
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/**
 * The response header by which a store advertises the batched by-ID read (`?ids=a,b,c` on the list
 * URL, an extension of this kit): its value is the most ids one request may ask for
 * (`MAX_BY_IDS`). The kit's store sends it on its stub list pages; the kit's caller batches the
 * by-ID reads of a stub re-sync only after a list page carried it, and reads one id per request
 * otherwise, so a deployed store that never heard of `ids` never receives it.
 */
export const BY_IDS_HEADER = 'Storebridge-By-Ids';

/** A key's value (unquoted): 1–255 printable ASCII characters, e.g. a UUID. */
export const IdempotencyKeySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(/^[\x20-\x7e]*$/, 'must be printable ASCII (a UUID is a good key)');

/** Unix time in milliseconds. */
export const TimestampSchema = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** A finite JSON number (no NaN, no Infinity: JSON cannot carry them anyway). */
export const FiniteNumberSchema = z.number().finite();

export const IntegerSchema = z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

export const UrlRefSchema = z.object({ url: z.string() });

export const AvailabilitySchema = z.object({ tag: z.string(), quantity: IntegerSchema });
export const PriceSchema = z.object({ tag: z.string(), currency: z.string(), number: FiniteNumberSchema });

/** Custom string fields; the common names are listed in `COMMON_EXTRA_ATTRIBUTES`. */
export const ExtraAttributesSchema = z
  .record(z.string(), z.string())
  .refine((rec) => !Object.keys(rec).some((k) => FORBIDDEN_KEYS.has(k)), {
    message: 'extraattributes must not use the names __proto__, constructor or prototype',
  });

export const COMMON_EXTRA_ATTRIBUTES = [
  'promociones',
  'status',
  'condicion_venta',
  'peso',
  'relacionados',
  'custom_01',
  'custom_02',
  'custom_03',
] as const;

export const PropertySchema = z.object({ extraattributes: ExtraAttributesSchema });

export const VariationSchema = z.object({
  variationid: z.string().optional(),
  size: z.string().optional(),
  color: z.string().optional(),
  barcode: z.string().optional(),
  availabilities: z.array(AvailabilitySchema).optional(),
  prices: z.array(PriceSchema).optional(),
  images: z.array(UrlRefSchema).optional(),
  videos: z.array(UrlRefSchema).optional(),
});

export const ProductSchema = z.object({
  _id: IdSchema,
  sku: SkuSchema.optional(),
  last_updated: TimestampSchema.optional(),
  title: z.string().optional(),
  url: z.string().optional(),
  brand: z.string().optional(),
  mpn: z.string().optional(),
  model: z.string().optional(),
  description: z.string().optional(),
  variations: z.array(VariationSchema).optional(),
  properties: z.array(PropertySchema).optional(),
});

export const MoneySchema = z.object({ amount: FiniteNumberSchema, currency: z.string() });

export const OrderItemSchema = z.object({
  id: SkuSchema.optional(),
  variation_id: z.string().optional(),
  quantity: IntegerSchema.optional(),
  unitPrice: FiniteNumberSchema.optional(),
  currencyId: z.string().optional(),
});

export const AddressSchema = z.object({
  addressline: z.string().optional(),
  zipcode: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  country: z.string().optional(),
});

export const BuyerSchema = z.object({
  id: z.string().optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  billingaddress: AddressSchema.optional(),
  shipmentaddress: AddressSchema.optional(),
});

export const SHIPMENT_STATUSES = ['pending', 'shipping', 'delivered', 'returned', 'lost'] as const;

export const ShipmentSchema = z.object({
  id: z.string().optional(),
  shiptracknum: z.string().optional(),
  shipitems: z.array(z.string()).optional(),
  shiptype: z.string().optional(),
  shipstatus: z.string().optional(),
});

export const MessageSchema = z.object({
  message_id: z.string().optional(),
  date_created: IntegerSchema.optional(),
  from: z.string().optional(),
  message: z.string().optional(),
});

/** The seven status values the spec lists as common; the store router's default allowed set. */
export const ORDER_STATUSES = ['pending', 'paid', 'processing', 'shipped', 'delivered', 'cancelled', 'refunded'] as const;

export const OrderSchema = z.object({
  _id: IdSchema,
  orderid: SkuSchema.optional(),
  last_updated: TimestampSchema.optional(),
  status: z.string().optional(),
  dateCreated: z.string().optional(),
  dateClosed: z.string().optional(),
  total: MoneySchema.optional(),
  orderItems: z.array(OrderItemSchema).optional(),
  buyer: BuyerSchema.optional(),
  shipments: z.array(ShipmentSchema).optional(),
  rating: z.number().min(0).max(5).optional(),
  feedback: z.string().optional(),
  messages: z.array(MessageSchema).optional(),
});

export type Availability = z.infer<typeof AvailabilitySchema>;
export type Price = z.infer<typeof PriceSchema>;
export type Property = z.infer<typeof PropertySchema>;
export type Variation = z.infer<typeof VariationSchema>;
export type Product = z.infer<typeof ProductSchema>;
export type Money = z.infer<typeof MoneySchema>;
export type OrderItem = z.infer<typeof OrderItemSchema>;
export type Address = z.infer<typeof AddressSchema>;
export type Buyer = z.infer<typeof BuyerSchema>;
export type Shipment = z.infer<typeof ShipmentSchema>;
export type Message = z.infer<typeof MessageSchema>;
export type Order = z.infer<typeof OrderSchema>;

