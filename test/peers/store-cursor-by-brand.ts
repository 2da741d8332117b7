/**
 * A clean-room emulator of a store modelled on the deployed cursor-by-brand example (grupocva,
 * `docs/interface.md`: "Webhooks", "What deployed peers send", the WH sources):
 * - one PHP script told apart by `?entity=`; the key in `C2SKey`, a wrong one answered HTTP 200
 *   with the text `401 Unauthorized`; JSON sent as `application/json` (this example sets it);
 * - cursor paging where `next` is a plain brand name, not Base64: the first request (no `next`)
 *   answers the first brand, each page is one whole brand, in the distributor's order (not sorted);
 *   `paging` carries `pageSize: 0`, the placeholder `itemsTotal: 9999`, the `(int)` of `offset`,
 *   the extra member `thismarca`, and `next: ""` on the last page; an unknown brand is an empty
 *   last page; `sortorder` is not read;
 * - items carry no `last_updated`; `quantity` `(int)`, prices `(float)`; `tags: []`;
 * - orders (the example answers `not supported`; this emulator lists them by sales channel in the
 *   same style) carry epoch-ms dates and no `last_updated` either.
 */
import type { Order, Product } from '../../lib/contract/webhook';
import { emulatorOf, type EmulatorOptions, money, phpInt, seeded, startPhpScript, Tally, type EmulatorReply, type EmulatorRequest, type StoreEmulator } from './store-emulator';

const SCRIPT = '/c2sapi_webhooks_cva.php';
const JSON_TYPE = 'application/json';
const BRANDS = ['HP', 'ACER', 'LOGITECH', 'DELL', 'BROTHER', 'ADATA', 'VORAGO'];
const CHANNELS = ['TIENDA', 'MAYOREO', 'WEB'];

type Grouped<T> = Map<string, T[]>;

function catalog(nProducts: number, nOrders: number): { products: Grouped<Product>; orders: Grouped<Order> } {
  const random = seeded(37);
  const products: Grouped<Product> = new Map(BRANDS.map((b) => [b, []]));
  for (let i = 0; i < nProducts; i++) {
    const brand = BRANDS[Math.floor(random() * BRANDS.length)];
    // Distributor codes: not in any order the walk could check (and no last_updated to order by).
    const code = `${brand.slice(0, 2)}-${(9973 * (i + 1)) % 100_000}`;
    products.get(brand)!.push({
      _id: code,
      sku: code,
      title: `${brand} artículo ${i}`,
      brand,
      mpn: `MPN${i}`,
      description: `Ficha técnica ${i}. Ficha comercial ${i}.`,
      variations: [{ availabilities: [{ tag: 'default', quantity: Math.floor(random() * 50) }], prices: [{ tag: 'default', currency: 'MXN', number: money(random, 5000) }], images: [] }],
    });
  }
  const orders: Grouped<Order> = new Map(CHANNELS.map((c) => [c, []]));
  const all = [...products.values()].flat();
  for (let i = 0; i < nOrders; i++) {
    const channel = CHANNELS[i % CHANNELS.length];
    const p = all[(i * 5) % all.length];
    const unitPrice = p.variations![0].prices![0].number;
    orders.get(channel)!.push({
      _id: `CVA-${channel}-${i}`,
      orderid: `${channel}-${i}`,
      status: 'paid',
      dateCreated: new Date(1_700_000_000_000 + i * 3_600_000).toISOString(),
      dateClosed: new Date(1_700_000_000_000 + i * 3_600_000 + 7_200_000).toISOString(),
      total: { amount: unitPrice, currency: 'MXN' },
      orderItems: [{ id: p._id, quantity: 1, unitPrice, currencyId: 'MXN' }],
    });
  }
  return { products, orders };
}

export async function startCursorByBrandStore(options: EmulatorOptions = {}): Promise<StoreEmulator> {
  const key = options.key ?? 'cva-c2s-key';
  const data = catalog(options.products ?? 64, options.orders ?? 20);
  const tally = new Tally();

  /** One group per page: `next` names the group to answer (none: the first). */
  function groupPage<T>(req: EmulatorRequest, groups: Grouped<T>): { name: string; rows: T[]; next: string } {
    const names = [...groups.keys()];
    const asked = req.url.searchParams.get('next');
    const at = asked === null ? 0 : names.indexOf(asked);
    if (at < 0) return { name: asked!, rows: [], next: '' };
    return { name: names[at], rows: groups.get(names[at])!, next: names[at + 1] ?? '' };
  }

  function listProducts(req: EmulatorRequest): EmulatorReply {
    const { name, rows, next } = groupPage(req, data.products);
    tally.add('products', 'unknown-member-dropped', rows.length); // tags
    tally.add('products', 'last-updated-missing', rows.length);
    if (next === '') tally.add('products', 'next-empty');
    const paging = { pageSize: 0, itemsTotal: 9999, offset: phpInt(req.url.searchParams.get('offset')), next, thismarca: name };
    return { type: JSON_TYPE, body: { paging, products: rows.map((p) => ({ ...p, tags: [] })) } };
  }

  function listOrders(req: EmulatorRequest): EmulatorReply {
    const { name, rows, next } = groupPage(req, data.orders);
    tally.add('orders', 'last-updated-missing', rows.length);
    tally.add('orders', 'date-from-epoch-ms', rows.length * 2);
    if (next === '') tally.add('orders', 'next-empty');
    const orders = rows.map((o) => ({ ...o, dateCreated: Date.parse(o.dateCreated!), dateClosed: Date.parse(o.dateClosed!) }));
    return { type: JSON_TYPE, body: { paging: { pageSize: 0, itemsTotal: 9999, offset: 0, next, thiscanal: name }, orders } };
  }

  const server = await startPhpScript(key, { products: listProducts, orders: listOrders });
  const flat = <T extends object>(g: Grouped<T>) => [...g.values()].flat().map((x) => ({ ...x, last_updated: 0 }));
  return emulatorOf('cursor-by-brand', server, SCRIPT, key, { products: flat(data.products), orders: flat(data.orders) }, tally);
}
