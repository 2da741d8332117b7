/**
 * Deterministic, realistic demo data: a catalog of products (1–6 variations with stock per
 * location, price tiers in ISO currencies, images, some videos, `extraattributes` with the common
 * names) and about a quarter as many orders (buyers with addresses, items that name real products
 * by `sku` or `_id`, shipments, messages, ratings). The same `(count, seed)` always yields the same
 * data, so tests, the CLI and benchmarks agree byte for byte.
 */
import { ORDER_STATUSES, SHIPMENT_STATUSES, type Order, type Product, type Variation } from '../contract/webhook';

/** Demo timestamps start here (2026-01-01T00:00:00Z) and grow with the item index. */
export const DEMO_EPOCH_MS = Date.UTC(2026, 0, 1);

/** mulberry32: small, fast, good enough for demo data, and identical on every platform. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (r: Rand, min: number, max: number) => min + Math.floor(r() * (max - min + 1));
const pickOne = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const money = (r: Rand, min: number, max: number) => Math.round((min + r() * (max - min)) * 100) / 100;
const pad = (n: number, width: number) => String(n).padStart(width, '0');

const ADJECTIVES = ['Classic', 'Urban', 'Eco', 'Pro', 'Ultra', 'Vintage', 'Smart', 'Compact', 'Deluxe', 'Sport', 'Outdoor', 'Premium'];
const NOUNS = ['Backpack', 'Sneaker', 'Jacket', 'Mug', 'Lamp', 'Headphones', 'Watch', 'Bottle', 'Chair', 'Tent', 'Kettle', 'Scarf', 'Blender', 'Notebook'];
const BRANDS = ['Andes', 'Nordhaus', 'Solaris', 'Kite & Co', 'Montebello', 'Ruta 5', 'Bluefin', 'Ostara'];
const COLORS = ['black', 'white', 'red', 'navy', 'olive', 'sand', 'grey', 'teal'];
const SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL'];
const LOCATIONS = ['default', 'warehouse-north', 'store-centro', 'store-norte'];
const CURRENCIES = ['USD', 'EUR', 'MXN', 'BRL', 'CLP', 'COP', 'ARS'];
const FIRST = ['Ana', 'Luis', 'María', 'João', 'Sofía', 'Chen', 'Amara', 'Lukas', 'Olga', 'Diego', 'Fatima', 'Noah'];
const LAST = ['García', 'Silva', 'Müller', 'Okafor', 'Rossi', 'Novak', 'Haddad', 'Tanaka', 'López', 'Smith'];
const CITIES: ReadonlyArray<[string, string, string]> = [
  ['Ciudad de México', 'CDMX', 'MX'],
  ['São Paulo', 'SP', 'BR'],
  ['Santiago', 'RM', 'CL'],
  ['Bogotá', 'DC', 'CO'],
  ['Madrid', 'MD', 'ES'],
  ['Berlin', 'BE', 'DE'],
  ['Austin', 'TX', 'US'],
];
const CARRIERS = ['dhl', 'fedex', 'ups', 'correos', 'estafeta', 'local-courier'];
const LOREM =
  'Built to last with carefully chosen materials. Designed for everyday use, tested in real conditions and backed by our warranty. Easy to clean, light to carry and made to look good for years. '.split(
    ' ',
  );

function sentence(r: Rand, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(LOREM[(i + int(r, 0, LOREM.length - 1)) % LOREM.length]);
  return out.join(' ').trim();
}

/** EAN-13 with a correct check digit. */
function ean13(r: Rand): string {
  let digits = '';
  for (let i = 0; i < 12; i++) digits += int(r, 0, 9);
  const sum = [...digits].reduce((s, d, i) => s + Number(d) * (i % 2 ? 3 : 1), 0);
  return digits + ((10 - (sum % 10)) % 10);
}

export function demoProductId(i: number): string {
  return `prod-${pad(i + 1, 6)}`;
}

/** The `last_updated` of item `i`: increasing, with every 7th item sharing its predecessor's (ties). */
function demoTimestamp(i: number): number {
  const slot = i % 7 === 6 ? i - 1 : i;
  return DEMO_EPOCH_MS + slot * 61_000;
}

export function demoProduct(i: number, seed = 1): Product {
  const r = prng(seed * 1_000_003 + i);
  const id = demoProductId(i);
  const title = `${pickOne(r, ADJECTIVES)} ${pickOne(r, NOUNS)} ${int(r, 100, 999)}`;
  const currency = pickOne(r, CURRENCIES);
  const base = money(r, 5, 500);
  const nVariations = int(r, 1, 6);
  const variations: Variation[] = [];
  for (let v = 0; v < nVariations; v++) {
    const tiers = [{ tag: 'default', currency, number: base }];
    if (r() < 0.5) tiers.push({ tag: 'wholesale', currency, number: Math.round(base * 80) / 100 });
    if (r() < 0.2) tiers.push({ tag: 'default', currency: 'USD', number: money(r, 5, 500) });
    const variation: Variation = {
      variationid: `${id}-v${v + 1}`,
      size: SIZES[(v + int(r, 0, 5)) % SIZES.length],
      color: pickOne(r, COLORS),
      barcode: ean13(r),
      availabilities: LOCATIONS.slice(0, int(r, 1, LOCATIONS.length)).map((tag) => ({ tag, quantity: int(r, 0, 250) })),
      prices: tiers,
      images: Array.from({ length: int(r, 1, 3) }, (_, k) => ({ url: `https://cdn.example.com/img/${id}/${v + 1}-${k + 1}.jpg` })),
      videos: r() < 0.15 ? [{ url: `https://cdn.example.com/video/${id}-${v + 1}.mp4` }] : [],
    };
    variations.push(variation);
  }
  const attributes: Record<string, string> = {
    status: r() < 0.9 ? 'active' : 'paused',
    condicion_venta: pickOne(r, ['nuevo', 'usado', 'reacondicionado']),
    peso: `${int(r, 50, 9000)}g`,
  };
  if (r() < 0.3) attributes.promociones = `${int(r, 5, 40)}% off`;
  if (r() < 0.4) attributes.relacionados = [demoProductId(int(r, 0, 999)), demoProductId(int(r, 0, 999))].join(',');
  if (r() < 0.2) attributes.custom_01 = `lote-${int(r, 1000, 9999)}`;
  // A few items are large (long descriptions), so pages vary in size.
  const descriptionWords = r() < 0.05 ? int(r, 400, 1500) : int(r, 10, 50);
  return {
    _id: id,
    sku: `SKU-${pad(i + 1, 6)}`,
    last_updated: demoTimestamp(i),
    title,
    url: r() < 0.95 ? `https://shop.example.com/p/${id}` : '',
    brand: pickOne(r, BRANDS),
    mpn: `MPN-${int(r, 10000, 99999)}`,
    model: `${pickOne(r, NOUNS).slice(0, 3).toUpperCase()}-${int(r, 1, 99)}`,
    description: sentence(r, descriptionWords),
    variations,
    properties: [{ extraattributes: attributes }],
  };
}

export function demoOrderId(i: number): string {
  return `ord-${pad(i + 1, 6)}`;
}

/** Order `i` of a catalog of `productCount` products; its items name real products. */
export function demoOrder(i: number, productCount: number, seed = 1): Order {
  const r = prng(seed * 7_000_003 + i);
  const status = pickOne(r, ORDER_STATUSES);
  const created = DEMO_EPOCH_MS + i * 233_000;
  const lines = int(r, 1, 4);
  const currency = pickOne(r, CURRENCIES);
  const orderItems = Array.from({ length: lines }, () => {
    const pi = int(r, 0, Math.max(0, productCount - 1));
    const product = demoProduct(pi, seed);
    const variation = pickOne(r, product.variations!);
    return {
      // Half the items name the product by SKU, half by `_id` (both are valid references).
      id: r() < 0.5 ? product.sku! : product._id,
      variation_id: variation.variationid!,
      quantity: int(r, 1, 5),
      unitPrice: variation.prices![0].number,
      currencyId: currency,
    };
  });
  const amount = Math.round(orderItems.reduce((s, it) => s + it.quantity * it.unitPrice * 100, 0)) / 100;
  const [city, state, country] = pickOne(r, CITIES);
  const first = pickOne(r, FIRST);
  const last = pickOne(r, LAST);
  const address = { addressline: `${int(r, 1, 999)} ${pickOne(r, LAST)} St`, zipcode: pad(int(r, 1000, 99999), 5), city, state, country };
  const shipped = status === 'shipped' || status === 'delivered';
  const closed = status === 'delivered' || status === 'cancelled' || status === 'refunded';
  const order: Order = {
    _id: demoOrderId(i),
    // A number as text, like a shop's order number: no `#` (a deployed daemon puts it in a URL path raw).
    orderid: String(100000 + i),
    last_updated: created + int(r, 0, 3) * 3_600_000,
    status,
    dateCreated: new Date(created).toISOString(),
    dateClosed: closed ? new Date(created + 5 * 86_400_000).toISOString() : '',
    total: { amount, currency },
    orderItems,
    buyer: {
      id: `buyer-${pad(int(r, 1, 5000), 5)}`,
      email: `${first}.${last}@example.com`.toLowerCase().normalize('NFD').replace(/[^\x00-\x7f]/g, ''),
      phone: `+${int(r, 1, 99)} ${int(r, 100, 999)} ${int(r, 1000000, 9999999)}`,
      firstName: first,
      lastName: last,
      billingaddress: address,
      shipmentaddress: r() < 0.8 ? address : { ...address, addressline: `${int(r, 1, 999)} Market Ave` },
    },
    shipments: shipped
      ? [
          {
            id: `shp-${pad(i + 1, 6)}`,
            shiptracknum: `TRK${int(r, 100000000, 999999999)}`,
            shipitems: orderItems.map((it) => it.id),
            shiptype: pickOne(r, CARRIERS),
            shipstatus: status === 'delivered' ? 'delivered' : pickOne(r, SHIPMENT_STATUSES.slice(0, 2)),
          },
        ]
      : [],
    messages: Array.from({ length: int(r, 0, 3) }, (_, k) => ({
      message_id: `msg-${pad(i + 1, 6)}-${k + 1}`,
      date_created: Math.floor(created / 1000) + k * 3600,
      from: k % 2 ? 'seller' : 'buyer',
      message: sentence(r, int(r, 4, 20)),
    })),
  };
  if (status === 'delivered') {
    order.rating = int(r, 0, 10) / 2;
    order.feedback = sentence(r, int(r, 3, 12));
  }
  return order;
}

export interface DemoCatalog {
  products: Product[];
  orders: Order[];
}

/** `count` products and about `count / 4` orders (at least one when `count > 0`). */
export function demoOrderCount(productCount: number): number {
  return productCount > 0 ? Math.max(1, Math.round(productCount / 4)) : 0;
}

export function demoCatalog(productCount: number, seed = 1): DemoCatalog {
  const products = Array.from({ length: productCount }, (_, i) => demoProduct(i, seed));
  const orders = Array.from({ length: demoOrderCount(productCount) }, (_, i) => demoOrder(i, productCount, seed));
  return { products, orders };
}
