/**
 * A clean-room emulator of a store modelled on the deployed magento2 example
 * (`docs/interface.md`: "Webhooks", "What deployed peers send", the WH sources):
 * - one PHP script told apart by `?entity=`; the key in `C2SKey`, a wrong one answered HTTP 200
 *   with the text `401 Unauthorized`; JSON sent as `text/html`;
 * - pages of its own size 10 whatever `limit` says; the offset `(int)`, then **rounded up** to a
 *   multiple of 10, and that rounded offset echoed in `paging.offset`; `sortorder` asc unless
 *   `desc`; `?id=` not read (the example has no by-ID read: it answers the list);
 * - products: `_id` = the SKU, `last_updated` from `strtotime()·1000` (whole seconds), `model: null`,
 *   `tags: []`, `itemsTotal` the real count;
 * - orders (the example answers `not supported`; this emulator lists them in its style, with the
 *   older documentation's string numbers): `quantity`, `unitPrice` and the total's amount as
 *   strings, epoch-ms dates, the offset echoed as a string, `itemsTotal` the placeholder 999.
 */
import type { Order, Product } from '../../lib/contract/webhook';
import { emulatorOf, type EmulatorOptions, money, phpInt, seeded, startPhpScript, Tally, type EmulatorReply, type EmulatorRequest, type StoreEmulator } from './store-emulator';

const PAGE = 10;
const SCRIPT = '/pub/c2s_webhooks_magento2.php';

function catalog(nProducts: number, nOrders: number): { products: Product[]; orders: Order[] } {
  const random = seeded(23);
  const t0 = 1_600_000_000_000;
  const products: Product[] = Array.from({ length: nProducts }, (_, i) => {
    const sku = `MG-${String(24 + (i % 5)).padStart(2, '0')}-WB${String(i).padStart(3, '0')}`;
    return {
      _id: sku,
      sku,
      // strtotime() has whole seconds; some products share one (the SKU breaks the tie).
      last_updated: t0 + Math.floor(i / 3) * 1000,
      title: `Bolsa ${i}`,
      url: `https://magento.example/catalog/product/view/sku/${sku}`,
      brand: 'Luma',
      mpn: sku,
      description: `<p>Bolsa ${i}</p>`,
      variations: [
        {
          color: ['Negro', 'Gris'][i % 2],
          size: ['S', 'M', 'L'][i % 3],
          availabilities: [{ tag: 'default', quantity: Math.floor(random() * 100) }],
          prices: [{ tag: 'default', currency: 'MXN', number: money(random, 2000) }],
          images: [{ url: `https://magento.example/media/${sku}.jpg` }],
        },
      ],
    };
  });
  const orders: Order[] = Array.from({ length: nOrders }, (_, i) => {
    const p = products[(i * 7) % products.length];
    const unitPrice = p.variations![0].prices![0].number;
    const quantity = 1 + (i % 4);
    return {
      _id: `MG-ORD-${String(1000 + i)}`,
      orderid: String(1000 + i),
      last_updated: t0 + 500_000 + i * 1000,
      status: ['pending', 'processing', 'shipped'][i % 3],
      dateCreated: new Date(t0 + i * 60_000).toISOString(),
      dateClosed: '',
      total: { amount: Math.round(unitPrice * 100 * quantity) / 100, currency: 'MXN' },
      orderItems: [{ id: p.sku!, variation_id: '', quantity, unitPrice, currencyId: 'MXN' }],
      buyer: { id: `c-${i % 7}`, email: `c${i % 7}@example.mx`, firstName: 'Ana', lastName: 'López' },
    };
  });
  return { products, orders };
}

const asc = (a: { last_updated?: number; _id: string }, b: { last_updated?: number; _id: string }) =>
  a.last_updated! - b.last_updated! || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0);

export async function startMagentoStore(options: EmulatorOptions = {}): Promise<StoreEmulator> {
  const key = options.key ?? 'magento-c2s-key';
  const data = catalog(options.products ?? 87, options.orders ?? 33);
  const tally = new Tally();

  /** The page at `offset` rounded up to the store's page size, and that offset. */
  function page<T extends { last_updated?: number; _id: string }>(req: EmulatorRequest, rows: readonly T[]): { offset: number; rows: T[] } {
    const offset = Math.ceil(phpInt(req.url.searchParams.get('offset')) / PAGE) * PAGE;
    const ordered = [...rows].sort(asc);
    if (req.url.searchParams.get('sortorder') === 'desc') ordered.reverse();
    return { offset, rows: ordered.slice(offset, offset + PAGE) };
  }

  function listProducts(req: EmulatorRequest): EmulatorReply {
    const { offset, rows } = page(req, data.products);
    tally.add('products', 'content-type-not-json');
    tally.add('products', 'null-dropped', rows.length); // model: null
    tally.add('products', 'unknown-member-dropped', rows.length); // tags
    return { body: { paging: { pageSize: PAGE, itemsTotal: data.products.length, offset }, products: rows.map((p) => ({ ...p, model: null, tags: [] })) } };
  }

  function listOrders(req: EmulatorRequest): EmulatorReply {
    const { offset, rows } = page(req, data.orders);
    tally.add('orders', 'content-type-not-json');
    tally.add('orders', 'offset-from-string');
    tally.add('orders', 'date-from-epoch-ms', rows.length * 2);
    tally.add('orders', 'number-from-string', rows.length * 3); // quantity, unitPrice, total.amount
    const orders = rows.map((o) => ({
      ...o,
      dateCreated: Date.parse(o.dateCreated!),
      dateClosed: 0,
      total: { ...o.total, amount: String(o.total!.amount) },
      orderItems: o.orderItems!.map((it) => ({ ...it, quantity: String(it.quantity), unitPrice: String(it.unitPrice) })),
    }));
    return { body: { paging: { pageSize: PAGE, itemsTotal: 999, offset: String(offset) }, orders } };
  }

  const server = await startPhpScript(key, { products: listProducts, orders: listOrders });
  return emulatorOf('magento', server, SCRIPT, key, data, tally);
}
