/**
 * What only the webhook form carries, kept when a reverse-form item (a pull) replaces a stored one:
 * the registry's `keepWebhookOnly` (`entities.ts`). Reached through `entityOf(entity)`, not exported
 * from `./contract` on its own.
 */
import type { Order, Product } from './webhook';

/**
 * The members only the webhook form carries, kept from the stored item when a reverse-form item (a
 * pull) replaces it: product `properties` and `variationid`s (variations matched by position),
 * order `shipments`, `rating`, `feedback`, `messages`, buyer addresses. Everything both forms carry
 * comes from `incoming`. The registry's `keepWebhookOnly`.
 */
export function keepProductWebhookOnly(stored: Product, incoming: Product): Product {
  const out: Product = { ...incoming };
  if (out.properties === undefined && stored.properties !== undefined) out.properties = stored.properties;
  if (out.variations && stored.variations && out.variations.length === stored.variations.length) {
    out.variations = out.variations.map((v, i) => (v.variationid === undefined && stored.variations![i].variationid !== undefined ? { variationid: stored.variations![i].variationid, ...v } : v));
  }
  return out;
}

/** See `keepProductWebhookOnly`. */
export function keepOrderWebhookOnly(stored: Order, incoming: Order): Order {
  const out: Order = { ...incoming };
  for (const k of ['shipments', 'rating', 'feedback', 'messages'] as const) {
    if (out[k] === undefined && stored[k] !== undefined) (out as Record<string, unknown>)[k] = stored[k];
  }
  if (out.buyer && stored.buyer) {
    const buyer = { ...out.buyer };
    if (buyer.billingaddress === undefined && stored.buyer.billingaddress !== undefined) buyer.billingaddress = stored.buyer.billingaddress;
    if (buyer.shipmentaddress === undefined && stored.buyer.shipmentaddress !== undefined) buyer.shipmentaddress = stored.buyer.shipmentaddress;
    out.buyer = buyer;
  }
  return out;
}
