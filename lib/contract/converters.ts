/**
 * Converters between the webhook form (numbers) and the reverse form (strings).
 *
 * Money is decimal: `"19.99"` becomes `19.99` and `19.99` becomes `"19.99"` again. A JSON number
 * is an IEEE double, so a decimal string is converted only when the double it yields writes back
 * as the same decimal; anything else (`"0.10000000000000000001"`, 17+ significant digits) throws a
 * `ConversionError` instead of silently changing a price. Non-canonical spellings (`"19.90"`,
 * `"007"`) carry the same value and come back canonical (`"19.9"`, `"7"`).
 *
 * Fields the reverse form does not have (`variationid`, `properties`, `shipments`, `rating`,
 * `feedback`, `messages`, buyer addresses) are dropped by `toReverse*`, as the spec defines
 * that form; everything both forms share survives a round trip exactly.
 */
import { StorebridgeError } from '../errors';
import type { Order, OrderItem, Product, Variation } from './webhook';
import type { ReverseOrder, ReverseOrderItem, ReverseProduct, ReverseVariation } from './reverse';

/** A value that one wire form cannot carry exactly in the other (a NaN, a price with too many digits). */
export class ConversionError extends StorebridgeError {
  override readonly name = 'ConversionError';
  readonly code = 'CONVERSION';
  constructor(
    message: string,
    /** Path of the offending field, e.g. `variations.0.prices.1.number`. */
    readonly path: string,
  ) {
    super(`${path}: ${message}`);
  }
}

/** Writes a finite number as a plain decimal string (never exponent notation). */
export function numberToDecimalString(n: number): string {
  if (!Number.isFinite(n)) throw new ConversionError(`${n} is not a finite number`, '');
  if (Object.is(n, -0)) return '0';
  const s = String(n);
  const e = s.indexOf('e');
  if (e === -1) return s;
  // Expand `d.ddde±x` exactly: the digits are those of the shortest round-trip form.
  const negative = s.startsWith('-');
  const mantissa = s.slice(negative ? 1 : 0, e);
  const exponent = Number(s.slice(e + 1));
  const [int, frac = ''] = mantissa.split('.');
  const digits = int + frac;
  const point = int.length + exponent;
  let out: string;
  if (point <= 0) out = '0.' + '0'.repeat(-point) + digits;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = digits.slice(0, point) + '.' + digits.slice(point);
  return (negative ? '-' : '') + canonicalDecimal(out);
}

/** `"007.50"` → `"7.5"`, `"-0.0"` → `"0"`. Input must already match the decimal pattern. */
export function canonicalDecimal(s: string): string {
  let negative = s.startsWith('-');
  let body = negative ? s.slice(1) : s;
  let [int, frac = ''] = body.split('.');
  int = int.replace(/^0+(?=\d)/, '');
  frac = frac.replace(/0+$/, '');
  body = frac ? `${int}.${frac}` : int;
  if (/^0(\.0*)?$/.test(body)) negative = false;
  return (negative ? '-' : '') + body;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** `"19.99"` → `19.99`, throwing when the value cannot be carried by a JSON number exactly. */
export function decimalStringToNumber(s: string, path = ''): number {
  if (!DECIMAL.test(s)) throw new ConversionError(`"${s}" is not a decimal number`, path);
  const n = Number(s);
  if (!Number.isFinite(n) || numberToDecimalString(n) !== canonicalDecimal(s)) {
    throw new ConversionError(`"${s}" cannot be carried as a JSON number without changing its value`, path);
  }
  return n;
}

/** `"12"` → `12`; must be a safe integer. */
export function integerStringToNumber(s: string, path = ''): number {
  if (!/^-?\d+$/.test(s)) throw new ConversionError(`"${s}" is not an integer`, path);
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new ConversionError(`"${s}" is outside the safe integer range`, path);
  return n;
}

function integerToString(n: number, path: string): string {
  if (!Number.isSafeInteger(n)) throw new ConversionError(`${n} is not a safe integer`, path);
  return String(n);
}

function decimalToString(n: number, path: string): string {
  try {
    return numberToDecimalString(n);
  } catch {
    throw new ConversionError(`${n} is not a finite number`, path);
  }
}

/** Copies the listed optional members that are present (keeps "absent" absent). */
function pick<T extends object, K extends keyof T>(src: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) if (src[k] !== undefined) out[k] = src[k];
  return out;
}

const PRODUCT_SCALARS = ['_id', 'sku', 'last_updated', 'title', 'url', 'brand', 'mpn', 'model', 'description'] as const;
const VARIATION_SCALARS = ['size', 'color', 'barcode'] as const;
const ORDER_SCALARS = ['_id', 'orderid', 'last_updated', 'status', 'dateCreated', 'dateClosed'] as const;
const ITEM_SCALARS = ['id', 'variation_id', 'currencyId'] as const;
const BUYER_SCALARS = ['id', 'email', 'phone', 'firstName', 'lastName'] as const;

function variationToReverse(v: Variation, path: string): ReverseVariation {
  const out: ReverseVariation = pick(v, VARIATION_SCALARS);
  if (v.availabilities) out.availabilities = v.availabilities.map((a, i) => ({ tag: a.tag, quantity: integerToString(a.quantity, `${path}.availabilities.${i}.quantity`) }));
  if (v.prices) out.prices = v.prices.map((p, i) => ({ tag: p.tag, currency: p.currency, number: decimalToString(p.number, `${path}.prices.${i}.number`) }));
  if (v.images) out.images = v.images.map((x) => ({ url: x.url }));
  if (v.videos) out.videos = v.videos.map((x) => ({ url: x.url }));
  return out;
}

function variationToWebhook(v: ReverseVariation, path: string): Variation {
  const out: Variation = pick(v, VARIATION_SCALARS);
  if (v.availabilities) out.availabilities = v.availabilities.map((a, i) => ({ tag: a.tag, quantity: integerStringToNumber(a.quantity, `${path}.availabilities.${i}.quantity`) }));
  if (v.prices) out.prices = v.prices.map((p, i) => ({ tag: p.tag, currency: p.currency, number: decimalStringToNumber(p.number, `${path}.prices.${i}.number`) }));
  if (v.images) out.images = v.images.map((x) => ({ url: x.url }));
  if (v.videos) out.videos = v.videos.map((x) => ({ url: x.url }));
  return out;
}

export function productToReverse(p: Product): ReverseProduct {
  const out: ReverseProduct = pick(p, PRODUCT_SCALARS);
  if (p.variations) out.variations = p.variations.map((v, i) => variationToReverse(v, `variations.${i}`));
  return out;
}

export function productToWebhook(p: ReverseProduct): Product {
  const out: Product = pick(p, PRODUCT_SCALARS);
  if (p.variations) out.variations = p.variations.map((v, i) => variationToWebhook(v, `variations.${i}`));
  return out;
}

function orderItemToReverse(it: OrderItem, path: string): ReverseOrderItem {
  const out: ReverseOrderItem = pick(it, ITEM_SCALARS);
  if (it.quantity !== undefined) out.quantity = integerToString(it.quantity, `${path}.quantity`);
  if (it.unitPrice !== undefined) out.unitPrice = decimalToString(it.unitPrice, `${path}.unitPrice`);
  return out;
}

function orderItemToWebhook(it: ReverseOrderItem, path: string): OrderItem {
  const out: OrderItem = pick(it, ITEM_SCALARS);
  if (it.quantity !== undefined) out.quantity = integerStringToNumber(it.quantity, `${path}.quantity`);
  if (it.unitPrice !== undefined) out.unitPrice = decimalStringToNumber(it.unitPrice, `${path}.unitPrice`);
  return out;
}

export function orderToReverse(o: Order): ReverseOrder {
  const out: ReverseOrder = pick(o, ORDER_SCALARS);
  if (o.total) out.total = { amount: o.total.amount, currency: o.total.currency };
  if (o.orderItems) out.orderItems = o.orderItems.map((it, i) => orderItemToReverse(it, `orderItems.${i}`));
  if (o.buyer) out.buyer = pick(o.buyer, BUYER_SCALARS);
  return out;
}

export function orderToWebhook(o: ReverseOrder): Order {
  const out: Order = pick(o, ORDER_SCALARS);
  if (o.total) out.total = { amount: o.total.amount, currency: o.total.currency };
  if (o.orderItems) out.orderItems = o.orderItems.map((it, i) => orderItemToWebhook(it, `orderItems.${i}`));
  if (o.buyer) out.buyer = pick(o.buyer, BUYER_SCALARS);
  return out;
}

