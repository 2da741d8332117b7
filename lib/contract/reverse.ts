/**
 * The reverse-connection wire form: what the service hands the daemon on pull and receives on
 * push. Per the spec, `quantity`, `number` and `unitPrice` travel as strings, and the members the
 * spec marks "webhook form only" (`variationid`, `properties`, `shipments`, `rating`, `feedback`,
 * `messages`, buyer addresses) are absent. Converters between the forms are in `converters.ts`.
 */
import { z } from 'zod';
import { AvailabilitySchema, BuyerSchema, OrderItemSchema, OrderSchema, PriceSchema, ProductSchema, VariationSchema } from './webhook';

/** An integer as a decimal string: `"12"`, `"-3"`. */
export const IntegerStringSchema = z.string().regex(/^-?\d{1,16}$/, 'must be an integer written as a string, e.g. "12"');
/** A decimal number as a string: `"19.99"`, `"-0.5"`, `"7"`. */
export const DecimalStringSchema = z
  .string()
  .regex(/^-?\d{1,300}(\.\d{1,300})?$/, 'must be a decimal number written as a string, e.g. "19.99"');

/*
 * The reverse form is the webhook form with the differences the spec names, stated once here:
 * `quantity`, `number` and `unitPrice` as strings, and the "webhook form only" members left out.
 */
export const ReverseAvailabilitySchema = AvailabilitySchema.extend({ quantity: IntegerStringSchema });
export const ReversePriceSchema = PriceSchema.extend({ number: DecimalStringSchema });

export const ReverseVariationSchema = VariationSchema.omit({ variationid: true }).extend({
  availabilities: z.array(ReverseAvailabilitySchema).optional(),
  prices: z.array(ReversePriceSchema).optional(),
});

export const ReverseProductSchema = ProductSchema.omit({ properties: true }).extend({
  variations: z.array(ReverseVariationSchema).optional(),
});

export const ReverseOrderItemSchema = OrderItemSchema.extend({
  quantity: IntegerStringSchema.optional(),
  unitPrice: DecimalStringSchema.optional(),
});

export const ReverseBuyerSchema = BuyerSchema.omit({ billingaddress: true, shipmentaddress: true });

export const ReverseOrderSchema = OrderSchema.omit({ shipments: true, rating: true, feedback: true, messages: true }).extend({
  orderItems: z.array(ReverseOrderItemSchema).optional(),
  buyer: ReverseBuyerSchema.optional(),
});

export type ReverseVariation = z.infer<typeof ReverseVariationSchema>;
export type ReverseProduct = z.infer<typeof ReverseProductSchema>;
export type ReverseOrderItem = z.infer<typeof ReverseOrderItemSchema>;
export type ReverseOrder = z.infer<typeof ReverseOrderSchema>;

