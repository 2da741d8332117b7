/**
 * A clean-room emulator of a store modelled on the deployed cs-cart example
 * (`docs/interface.md`: "Webhooks", "What deployed peers send", the WH sources):
 * - one PHP script told apart by `?entity=products|orders`; the key in `C2SKey`, a wrong one
 *   answered HTTP 200 with the text `401 Unauthorized`; JSON sent as `text/html`;
 * - pages of 50: page = floor(offset / 50) + 1, `(int)` of the offset, echoed in `paging.offset`;
 *   `sortorder` asc unless `desc`; `pageSize` the constant 50;
 * - products: `_id` and `sku` the numeric product id (not cast to a string), `tags: []`,
 *   `itemsTotal` the placeholder 999;
 * - orders: an ids-only list of stubs `{_id, orderid, last_updated}` (numbers), `itemsTotal` the
 *   placeholder 99999 except on an empty page, where it becomes the offset asked for; `?id=X`
 *   answers the bare order: numeric ids, epoch-ms `dateCreated`, `dateClosed: 0`, the total's
 *   amount as a string, pseudo-items `shipping` and `surcharge`, a numeric buyer id.
 * Its catalog is seeded; `truth` is what a sink must hold afterwards.
 */
import type { Order, Product } from '../../lib/contract/webhook';
import { emulatorOf, type EmulatorOptions, money, phpInt, seeded, startPhpScript, Tally, type EmulatorReply, type EmulatorRequest, type StoreEmulator } from './store-emulator';

const PAGE = 50;
const SCRIPT = '/app/addons/c2s/c2s_webhooks.php';

interface CsProduct {
  id: number;
  updated: number;
  name: string;
  brand: string;
  amount: number;
  price: number;
}
interface CsOrder {
  id: number;
  updated: number;
  created: number;
  closed: number;
  status: string;
  user: number;
  lines: Array<{ product: number; qty: number; price: number }>;
  shipping: number;
}

function catalog(products: number, orders: number): { products: CsProduct[]; orders: CsOrder[] } {
  const random = seeded(11);
  const t0 = 1_517_360_038_000;
  const ps: CsProduct[] = Array.from({ length: products }, (_, i) => ({
    id: 100 + i * 7,
    // Distinct timestamps: cs sorts by its update time, and ties would put numeric ids in the wrong (code-point) order.
    updated: t0 + i * 61_000 + Math.floor(random() * 1000),
    name: `Producto ${i} ${['azul', 'rojo', 'ñandú'][i % 3]}`,
    brand: ['Acme', 'Zeta', 'Lumen'][i % 3],
    amount: Math.floor(random() * 40),
    price: money(random, 900),
  }));
  const os: CsOrder[] = Array.from({ length: orders }, (_, i) => ({
    id: 5000 + i,
    updated: t0 + 3_600_000 + i * 97_000,
    created: t0 + i * 90_000,
    closed: i % 4 === 0 ? t0 + i * 90_000 + 86_400_000 : 0,
    status: i % 4 === 0 ? 'Complete' : 'Open',
    user: 300 + (i % 9),
    lines: [{ product: ps[i % ps.length].id, qty: 1 + (i % 3), price: ps[i % ps.length].price }],
    shipping: 99.5,
  }));
  return { products: ps, orders: os };
}

/** A total as CS-Cart keeps it (a DECIMAL column: PHP reads it as a string, the example does not cast it). */
const totalOf = (o: CsOrder) => (o.lines.reduce((s, l) => s + Math.round(l.price * 100) * l.qty, 0) + Math.round(o.shipping * 100)) / 100;
const decimalText = (n: number) => n.toFixed(2);

function productTruth(p: CsProduct): Product {
  return {
    _id: String(p.id),
    sku: String(p.id),
    last_updated: p.updated,
    title: p.name,
    url: `https://shop.example/index.php?dispatch=products.view&product_id=${p.id}`,
    brand: p.brand,
    description: '',
    variations: [{ availabilities: [{ tag: 'default', quantity: p.amount }], prices: [{ tag: 'default', currency: 'MXN', number: p.price }], images: [{ url: `https://shop.example/images/${p.id}.jpg` }], videos: [] }],
  };
}

function orderTruth(o: CsOrder): Order {
  return {
    _id: String(o.id),
    orderid: String(o.id),
    last_updated: o.updated,
    status: o.status,
    dateCreated: new Date(o.created).toISOString(),
    dateClosed: o.closed ? new Date(o.closed).toISOString() : '',
    total: { amount: Number(decimalText(totalOf(o))), currency: 'MXN' },
    orderItems: [
      ...o.lines.map((l) => ({ id: String(l.product), quantity: l.qty, unitPrice: l.price, currencyId: 'MXN' })),
      { id: 'shipping', quantity: 1, unitPrice: o.shipping, currencyId: 'MXN' },
      { id: 'surcharge', quantity: 1, unitPrice: 0, currencyId: 'MXN' },
    ],
    buyer: { id: String(o.user), email: `cliente${o.user}@example.mx`, phone: '+52 55 1234 5678', firstName: 'Cliente', lastName: String(o.user) },
  };
}

/** Starts the emulator. */
export async function startCsCartStore(options: EmulatorOptions = {}): Promise<StoreEmulator> {
  const key = options.key ?? 'cs-cart-c2s-key';
  const data = catalog(options.products ?? 120, options.orders ?? 61);
  const tally = new Tally();

  /** The page holding `offset` (page = floor(offset / 50) + 1: the offset rounded down), by update time. */
  function pageOf<T extends { updated: number }>(req: EmulatorRequest, all: readonly T[]): { offset: number; rows: T[] } {
    const offset = phpInt(req.url.searchParams.get('offset'));
    const desc = req.url.searchParams.get('sortorder') === 'desc';
    const start = Math.floor(offset / PAGE) * PAGE;
    return { offset, rows: [...all].sort((a, b) => (desc ? b.updated - a.updated : a.updated - b.updated)).slice(start, start + PAGE) };
  }

  function listProducts(req: EmulatorRequest): EmulatorReply {
    const { offset, rows } = pageOf(req, data.products);
    tally.add('products', 'content-type-not-json');
    tally.add('products', 'string-from-number', rows.length * 2); // _id and sku: the numeric product id
    tally.add('products', 'unknown-member-dropped', rows.length); // tags
    const products = rows.map((p) => ({ ...productTruth(p), _id: p.id, sku: p.id, tags: [] }));
    return { body: { paging: { pageSize: PAGE, itemsTotal: 999, offset }, products } };
  }

  function listOrders(req: EmulatorRequest): EmulatorReply {
    const { offset, rows } = pageOf(req, data.orders);
    tally.add('orders', 'content-type-not-json');
    tally.add('orders', 'string-from-number', rows.length * 2); // _id and orderid
    const orders = rows.map((o) => ({ _id: o.id, orderid: o.id, last_updated: o.updated }));
    // The example's way to say "the end": an empty page reports the offset asked for as the total.
    return { body: { paging: { pageSize: PAGE, itemsTotal: rows.length === 0 ? offset : 99999, offset }, orders } };
  }

  function orderById(id: string): EmulatorReply {
    const o = data.orders.find((x) => String(x.id) === id);
    tally.add('orders', 'content-type-not-json');
    if (!o) return { body: 'null' };
    const t = orderTruth(o);
    tally.add('orders', 'string-from-number', 3 + o.lines.length); // _id, orderid, buyer.id, each product line's id
    tally.add('orders', 'date-from-epoch-ms', 2);
    tally.add('orders', 'number-from-string'); // total.amount
    const body = {
      ...t,
      _id: o.id,
      orderid: o.id,
      dateCreated: o.created,
      dateClosed: o.closed,
      total: { amount: decimalText(totalOf(o)), currency: 'MXN' },
      orderItems: t.orderItems!.map((it, i) => (i < o.lines.length ? { ...it, id: o.lines[i].product } : it)),
      buyer: { ...t.buyer, id: o.user },
    };
    return { body };
  }

  const server = await startPhpScript(key, {
    products: listProducts,
    orders: (req) => {
      const id = req.url.searchParams.get('id');
      return id === null ? listOrders(req) : orderById(id);
    },
  });
  return emulatorOf('cs-cart', server, SCRIPT, key, { products: data.products.map(productTruth), orders: data.orders.map(orderTruth) }, tally);
}
