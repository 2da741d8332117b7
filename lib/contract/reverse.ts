/**
 * The reverse-connection wire form: what the service hands the daemon on pull and receives on
 * push. Per the spec, `quantity`, `number` and `unitPrice` travel as strings, and the members the
 * spec marks "webhook form only" (`variationid`, `properties`, `shipments`, `rating`, `feedback`,
 * `messages`, buyer addresses) are absent. Converters between the forms are in `converters.ts`.
 */
import { z } from 'zod';
import { IdSchema, MoneySchema, SkuSchema, TimestampSchema, UrlRefSchema } from './webhook';

/** An integer as a decimal string: `"12"`, `"-3"`. */
export const IntegerStringSchema = z.string().regex(/^-?\d{1,16}$/, 'must be an integer written as a string, e.g. "12"');
/** A decimal number as a string: `"19.99"`, `"-0.5"`, `"7"`. */
export const DecimalStringSchema = z
  .string()
  .regex(/^-?\d{1,300}(\.\d{1,300})?$/, 'must be a decimal number written as a string, e.g. "19.99"');

export const ReverseAvailabilitySchema = z.object({ tag: z.string(), quantity: IntegerStringSchema });
export const ReversePriceSchema = z.object({ tag: z.string(), currency: z.string(), number: DecimalStringSchema });

export const ReverseVariationSchema = z.object({
  size: z.string().optional(),
  color: z.string().optional(),
  barcode: z.string().optional(),
  availabilities: z.array(ReverseAvailabilitySchema).optional(),
  prices: z.array(ReversePriceSchema).optional(),
  images: z.array(UrlRefSchema).optional(),
  videos: z.array(UrlRefSchema).optional(),
});

export const ReverseProductSchema = z.object({
  _id: IdSchema,
  sku: SkuSchema.optional(),
  last_updated: TimestampSchema.optional(),
  title: z.string().optional(),
  url: z.string().optional(),
  brand: z.string().optional(),
  mpn: z.string().optional(),
  model: z.string().optional(),
  description: z.string().optional(),
  variations: z.array(ReverseVariationSchema).optional(),
});

export const ReverseOrderItemSchema = z.object({
  id: SkuSchema.optional(),
  variation_id: z.string().optional(),
  quantity: IntegerStringSchema.optional(),
  unitPrice: DecimalStringSchema.optional(),
  currencyId: z.string().optional(),
});

export const ReverseBuyerSchema = z.object({
  id: z.string().optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
});

export const ReverseOrderSchema = z.object({
  _id: IdSchema,
  orderid: z.string().optional(),
  last_updated: TimestampSchema.optional(),
  status: z.string().optional(),
  dateCreated: z.string().optional(),
  dateClosed: z.string().optional(),
  total: MoneySchema.optional(),
  orderItems: z.array(ReverseOrderItemSchema).optional(),
  buyer: ReverseBuyerSchema.optional(),
});

export type ReverseVariation = z.infer<typeof ReverseVariationSchema>;
export type ReverseProduct = z.infer<typeof ReverseProductSchema>;
export type ReverseOrderItem = z.infer<typeof ReverseOrderItemSchema>;
export type ReverseOrder = z.infer<typeof ReverseOrderSchema>;

export const REVERSE_ITEM_SCHEMAS = { products: ReverseProductSchema, orders: ReverseOrderSchema } as const;
