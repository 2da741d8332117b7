/**
 * The kit's built-in business checks of a write, run on the body as received (after the
 * `_id`/`id` merge). They look only at members of the right type, so they add to the schema's type
 * errors instead of repeating them, and every problem is reported in one answer.
 *
 * Reasons refuse the write; warnings are answered with a success and change nothing.
 * `docs/writes.md` lists every message.
 */
import { uniqueKeyOf, UNIQUE_MEMBERS } from '../adapter';
import type { GuardedAdapter } from '../adapter-guard';
import { entityOf } from '../contract/entities';
import { hasForbiddenCharacter, MAX_ID_LENGTH, ORDER_STATUSES, SHIPMENT_STATUSES, type Product } from '../contract/webhook';
import type { Entity } from '../contract/entities';
import { quote } from './write-messages';

export interface Findings {
  readonly reasons: string[];
  readonly warnings: string[];
}

export interface CheckContext {
  readonly adapter: GuardedAdapter;
  readonly signal: AbortSignal;
  /** `null`: any status is accepted (uncommon ones get a warning). */
  readonly allowedOrderStatuses: ReadonlySet<string> | null;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function arrayAt(obj: Json, key: string): unknown[] {
  const v = obj[key];
  return Array.isArray(v) ? v : [];
}

function isNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** ISO 4217 codes are three capital letters; anything else is likely a typo or a symbol. */
const ISO_CURRENCY = /^[A-Z]{3}$/;

function currencyWarning(path: string, value: unknown, out: string[]): void {
  if (typeof value === 'string' && value !== '' && !ISO_CURRENCY.test(value)) {
    out.push(`${path}: ${quote(value)} is not an ISO 4217 currency code (three capital letters)`);
  }
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)?)?$/;

/** An ISO 8601 calendar date (`2026-01-31`), optionally with a time and a UTC offset, that exists. */
function isIsoDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return false;
  const [hour, minute, second, offH, offM] = [m[4], m[5], m[6], m[7], m[8]].map((x) => Number(x ?? 0));
  return hour <= 23 && minute <= 59 && second <= 60 && offH <= 23 && offM <= 59;
}

/** Lookups in flight at once while resolving order items: enough to hide latency, not a flood. */
const LOOKUP_CONCURRENCY = 8;

/** Resolves each distinct item reference to a product: by `_id` first, then by SKU. */
async function resolveProducts(refs: readonly string[], ctx: CheckContext): Promise<Map<string, Product | undefined>> {
  const found = new Map<string, Product | undefined>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < refs.length) {
      const ref = refs[next++];
      ctx.signal.throwIfAborted();
      // No product can have an `_id` longer than the contract allows: skip that lookup.
      const byId = ref.length <= MAX_ID_LENGTH ? await ctx.adapter.products.get(ref, { signal: ctx.signal }) : undefined;
      found.set(ref, byId ?? (await ctx.adapter.productBySku(ref, { signal: ctx.signal })));
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, refs.length) }, worker));
  return found;
}

/** Sum of `quantity × unitPrice` in hundredths, or `undefined` when some item lacks either. */
function itemsTotalCents(items: readonly unknown[]): number | undefined {
  let sum = 0;
  for (const item of items) {
    if (!isObject(item) || !isNumber(item.quantity) || !isNumber(item.unitPrice)) return undefined;
    sum += item.quantity * item.unitPrice * 100;
  }
  return Math.round(sum);
}

/**
 * The reason a write may not take a `sku` / `orderid` another item holds: the same whether the
 * check below found it or the database refused the write (`DuplicateKeyError`).
 */
export function alreadyUsed(entity: Entity, value: string, holder: string | undefined): string {
  const { noun } = entityOf(entity);
  return `${UNIQUE_MEMBERS[entity]}: ${quote(value)} is already used by ${holder === undefined ? `another ${noun}` : `${noun} ${quote(holder)}`}`;
}

/** Built-in reasons and warnings of an order write; `id` is the order's `_id` (none on a create). */
export async function checkOrder(order: Json, id: string | undefined, ctx: CheckContext): Promise<Findings> {
  const reasons: string[] = [];
  const warnings: string[] = [];
  const items = arrayAt(order, 'orderItems');

  // An orderid names one order: a create carrying one is matched to its order (write-core); an
  // update may not take another order's.
  const orderid = uniqueKeyOf('orders', order);
  if (id !== undefined && orderid !== undefined && !hasForbiddenCharacter(orderid)) {
    const holder = await ctx.adapter.orderByOrderId(orderid, { signal: ctx.signal });
    if (holder && holder._id !== id) reasons.push(alreadyUsed('orders', orderid, holder._id));
  }

  const refs = new Set<string>();
  items.forEach((item, i) => {
    if (!isObject(item)) return;
    const at = `orderItems.${i}`;
    if (item.id === undefined) reasons.push(`${at}.id: SKU is missing`);
    else if (typeof item.id === 'string' && item.id.trim() === '') reasons.push(`${at}.id: SKU is blank`);
    // A reference with a forbidden character is refused by the schema; no adapter is asked for it.
    else if (typeof item.id === 'string' && !hasForbiddenCharacter(item.id)) refs.add(item.id);
    if (item.quantity === undefined) reasons.push(`${at}.quantity: is missing`);
    else if (typeof item.quantity === 'number' && item.quantity <= 0) {
      reasons.push(`${at}.quantity: must be greater than 0, got ${quote(item.quantity)}`);
    }
  });

  const products = await resolveProducts([...refs], ctx);
  items.forEach((item, i) => {
    if (!isObject(item) || typeof item.id !== 'string' || !products.has(item.id)) return;
    const product = products.get(item.id);
    const at = `orderItems.${i}`;
    if (!product) {
      reasons.push(
        ctx.adapter.hasSkuLookup
          ? `${at}.id: no product has the _id or SKU ${quote(item.id)}`
          : `${at}.id: no product has the _id ${quote(item.id)} (this store's adapter cannot look products up by SKU)`,
      );
      return;
    }
    const variationIds = (product.variations ?? []).map((v) => v.variationid).filter((v) => v !== undefined);
    if (typeof item.variation_id === 'string' && item.variation_id !== '' && variationIds.length > 0 && !variationIds.includes(item.variation_id)) {
      warnings.push(`${at}.variation_id: product ${quote(product._id)} has no variation ${quote(item.variation_id)}`);
    }
  });

  const status = order.status;
  if (typeof status === 'string') {
    const allowed = ctx.allowedOrderStatuses;
    if (allowed && !allowed.has(status)) {
      const list = allowed.size > 0 ? `allowed: ${[...allowed].join(', ')}` : 'this store accepts no status';
      reasons.push(`status: ${quote(status)} is not an allowed order status (${list})`);
    } else if (!allowed && !(ORDER_STATUSES as readonly string[]).includes(status)) {
      warnings.push(`status: ${quote(status)} is not one of the common order statuses (${ORDER_STATUSES.join(', ')})`);
    }
  }

  for (const field of ['dateCreated', 'dateClosed']) {
    const date = order[field];
    if (typeof date === 'string' && date !== '' && !isIsoDate(date)) {
      warnings.push(`${field}: ${quote(date)} is not an ISO 8601 date`);
    }
  }

  const total = isObject(order.total) ? order.total : undefined;
  if (total) {
    currencyWarning('total.currency', total.currency, warnings);
    const cents = items.length > 0 ? itemsTotalCents(items) : undefined;
    if (isNumber(total.amount) && cents !== undefined && Math.round(total.amount * 100) !== cents) {
      warnings.push(`total.amount: ${quote(total.amount)} differs from the sum of quantity × unitPrice over the items, ${quote(cents / 100)}`);
    }
  }
  items.forEach((item, i) => {
    if (!isObject(item)) return;
    const at = `orderItems.${i}.currencyId`;
    currencyWarning(at, item.currencyId, warnings);
    if (total && typeof total.currency === 'string' && typeof item.currencyId === 'string' && item.currencyId !== total.currency) {
      warnings.push(`${at}: ${quote(item.currencyId)} differs from total.currency ${quote(total.currency)}`);
    }
  });

  arrayAt(order, 'shipments').forEach((shipment, i) => {
    if (!isObject(shipment) || typeof shipment.shipstatus !== 'string') return;
    if (!(SHIPMENT_STATUSES as readonly string[]).includes(shipment.shipstatus)) {
      warnings.push(`shipments.${i}.shipstatus: ${quote(shipment.shipstatus)} is not one of the common shipment statuses (${SHIPMENT_STATUSES.join(', ')})`);
    }
  });

  return { reasons, warnings };
}

/** Built-in reasons and warnings of a product write; `id` is the product's `_id`. */
export async function checkProduct(product: Json, id: string | undefined, ctx: CheckContext): Promise<Findings> {
  const reasons: string[] = [];
  const warnings: string[] = [];
  const opts = { signal: ctx.signal };

  // Order items name products by `_id` first, then SKU: a SKU must name one product only.
  const sku = uniqueKeyOf('products', product);
  if (sku !== undefined && !hasForbiddenCharacter(sku)) {
    const owner = await ctx.adapter.productBySku(sku, opts);
    if (owner && owner._id !== id) reasons.push(alreadyUsed('products', sku, owner._id));
    if (sku !== id && sku.length <= MAX_ID_LENGTH) {
      const shadow = await ctx.adapter.products.get(sku, opts);
      if (shadow) warnings.push(`sku: ${quote(sku)} is also the _id of product ${quote(shadow._id)}; order items naming it resolve to that product`);
    }
  }
  if (id !== undefined) {
    const skuOwner = await ctx.adapter.productBySku(id, opts);
    if (skuOwner && skuOwner._id !== id) {
      warnings.push(`_id: ${quote(id)} is also the SKU of product ${quote(skuOwner._id)}; order items naming it now resolve to this product`);
    }
  }

  const seenVariation = new Map<string, number>();
  arrayAt(product, 'variations').forEach((variation, v) => {
    if (!isObject(variation)) return;
    const at = `variations.${v}`;
    if (typeof variation.variationid === 'string' && variation.variationid !== '') {
      const first = seenVariation.get(variation.variationid);
      if (first !== undefined) reasons.push(`${at}.variationid: ${quote(variation.variationid)} is already used by variations.${first}`);
      else seenVariation.set(variation.variationid, v);
    }
    const seenPrice = new Map<string, number>();
    arrayAt(variation, 'prices').forEach((price, p) => {
      if (!isObject(price)) return;
      const pat = `${at}.prices.${p}`;
      if (isNumber(price.number) && price.number < 0) reasons.push(`${pat}.number: must not be negative, got ${quote(price.number)}`);
      currencyWarning(`${pat}.currency`, price.currency, warnings);
      if (typeof price.tag === 'string' && typeof price.currency === 'string') {
        const key = JSON.stringify([price.tag, price.currency]);
        const first = seenPrice.get(key);
        if (first !== undefined) warnings.push(`${pat}: repeats tag ${quote(price.tag)} in ${quote(price.currency)} of ${at}.prices.${first}`);
        else seenPrice.set(key, p);
      }
    });
    arrayAt(variation, 'availabilities').forEach((availability, a) => {
      if (isObject(availability) && isNumber(availability.quantity) && availability.quantity < 0) {
        warnings.push(`${at}.availabilities.${a}.quantity: negative stock (${quote(availability.quantity)})`);
      }
    });
  });

  return { reasons, warnings };
}
