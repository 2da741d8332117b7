/**
 * A clean-room emulator of a store modelled on the deployed php-mysql example, as it was observed
 * running (its PHP file unchanged over MariaDB; facts file §1.4, §1.10 "php-mysql, observed
 * running"; no code of the example):
 * - one PHP script that serves products only, whatever the URL's query says: no `entity`, no
 *   orders, no `?id=`, no key check (any key, or none, is let in);
 * - pages of 50 by `LIMIT 50 OFFSET (int)offset`, in row order, whatever `sortorder` or `limit`
 *   say; `paging.pageSize` 50; `paging.itemsTotal` the count query's row as an object,
 *   `{"0":"310","count(*)":"310"}`; `paging.offset` the query's text echoed (`"50"`), `null` when
 *   the request has none — and then, PHP 8 with `display_errors` on, a warning printed **before**
 *   the JSON (option `displayErrors`, default on);
 * - each row as one product: `sku` the row id as a string, no `_id`, no `last_updated`; one
 *   variation with `(int)` stock and `(float)` price; a NULL column gives `videos:[{"url":null}]`
 *   or `barcode: null`;
 * - JSON sent as PHP's default `text/html`; `POST` answered with the text `unimplemented method`,
 *   any other method with `unsupported request method`, all at HTTP 200.
 * Its table is seeded and can be changed between runs (`setPrice`); `truth` is what a sink must
 * hold afterwards, and the tally counts every deviation from the webhook form it put on the wire.
 */
import type { Product } from '../../lib/contract/webhook';
import { money, phpInt, seeded, startEmulator, Tally, type EmulatorReply, type EmulatorRequest, type RunningEmulator, type StoreEmulator } from './store-emulator';

const PAGE = 50;
const SCRIPT = '/php-mysql/php-mysql-products-adapter.php';
/** What PHP 8 prints (display_errors on) for `$_GET['offset']` when the request has none. */
const OFFSET_WARNING = `<br />\n<b>Warning</b>:  Undefined array key "offset" in /var/www/html${SCRIPT} on line 7<br />\n`;

/** One row of the example's table, as MySQL hands it to PHP: every column a string, or null. */
interface Row {
  id: number;
  title: string;
  description: string;
  brand: string;
  mpn: string;
  model: string;
  url: string;
  /** A DECIMAL column: the text, e.g. `"100.00"`. */
  price: string;
  stock: string;
  image: string;
  video: string | null;
  barcode: string | null;
  color: string;
  size: string;
}

export interface PhpMysqlOptions {
  /** Rows in the table (default 310, as observed). */
  readonly products?: number;
  /** Rows whose video column is NULL (default 172, as observed). */
  readonly nullVideos?: number;
  /** PHP 8 with `display_errors` on: a request without `offset` gets a warning before its JSON (default true). */
  readonly displayErrors?: boolean;
}

export interface PhpMysqlStore extends StoreEmulator {
  /** The script's one URL (products, and what an owner would try for orders). */
  readonly url: string;
  /** `UPDATE products SET price = ? WHERE id = ?`; the truth follows. */
  setPrice(id: number, price: string): void;
  /** Requests answered with the offset warning before the JSON. */
  readonly warnings: () => number;
}

function table(n: number, nullVideos: number): Row[] {
  const random = seeded(41);
  return Array.from({ length: n }, (_, i) => {
    const id = i + 1;
    return {
      id,
      title: `Producto ${id}`,
      description: `Descripción del producto ${id}`,
      brand: ['Acme', 'Norte', 'Sur'][i % 3],
      mpn: `MPN-${id}`,
      model: `M${id % 17}`,
      url: `https://tienda.example/producto.php?id=${id}`,
      // Row 1 costs 100.00: the price a test changes between runs.
      price: id === 1 ? '100.00' : money(random, 900).toFixed(2),
      stock: String(Math.floor(random() * 80)),
      image: `https://tienda.example/img/${id}.jpg`,
      // 7 and n share no factor for the default 310 rows, so exactly `nullVideos` rows get NULL.
      video: (i * 7) % n < nullVideos ? null : `https://tienda.example/video/${id}.mp4`,
      barcode: id % 5 === 0 ? null : String(7_500_000_000_000 + id),
      color: ['rojo', 'azul'][i % 2],
      size: ['CH', 'M', 'G'][i % 3],
    };
  });
}

/** The members the example copies from a row as they are (strings), and its one variation's casts. */
const described = (r: Row) => ({ title: r.title, description: r.description, url: r.url, brand: r.brand, mpn: r.mpn, model: r.model });
const variationOf = (r: Row) => ({
  availabilities: [{ tag: 'default', quantity: phpInt(r.stock) }],
  prices: [{ tag: 'default', currency: 'USD', number: Number(r.price) }],
  images: [{ url: r.image }],
  size: r.size,
  color: r.color,
});

/** The product the example prints for a row (json_encode of its PHP array): a NULL column is `null`. */
function wireProduct(r: Row): object {
  return { sku: String(r.id), ...described(r), variations: [{ ...variationOf(r), videos: [{ url: r.video }], barcode: r.barcode }] };
}

/** What a sink must hold for a row: keyed by its sku, `last_updated` 0 (none sent), the NULL video dropped, no barcode where NULL. */
function truthOf(r: Row): Product {
  const video = r.video === null ? [] : [{ url: r.video }];
  return { _id: String(r.id), sku: String(r.id), last_updated: 0, ...described(r), variations: [{ ...variationOf(r), videos: video, ...(r.barcode === null ? {} : { barcode: r.barcode }) }] };
}

/** Starts the emulator. */
export async function startPhpMysqlStore(options: PhpMysqlOptions = {}): Promise<PhpMysqlStore> {
  const n = options.products ?? 310;
  const rows = table(n, options.nullVideos ?? 172);
  const displayErrors = options.displayErrors ?? true;
  const tally = new Tally();
  let warnings = 0;

  function list(req: EmulatorRequest): EmulatorReply {
    const raw = req.url.searchParams.get('offset');
    const page = rows.slice(phpInt(raw), phpInt(raw) + PAGE);
    tally.add('products', 'content-type-not-json');
    tally.add('products', 'items-total-unusable');
    tally.add('products', raw === null ? 'offset-unusable' : 'offset-from-string');
    tally.add('products', 'id-from-natural-key', page.length);
    tally.add('products', 'last-updated-missing', page.length);
    const nullVideos = page.filter((r) => r.video === null).length;
    tally.add('products', 'null-dropped', nullVideos + page.filter((r) => r.barcode === null).length);
    tally.add('products', 'incomplete-member-dropped', nullVideos);
    const json = JSON.stringify({ paging: { pageSize: PAGE, itemsTotal: { 0: String(n), 'count(*)': String(n) }, offset: raw }, products: page.map(wireProduct) });
    if (raw === null && displayErrors) {
      warnings++;
      return { body: OFFSET_WARNING + json };
    }
    return { body: json };
  }

  const server: RunningEmulator = await startEmulator((req) => {
    if (req.method === 'GET') return list(req);
    if (req.method === 'POST') return { body: 'unimplemented method' };
    return { body: 'unsupported request method' };
  });
  const url = `${server.origin}${SCRIPT}`;
  const truth = { products: [] as Product[], orders: [] as object[] };
  const refresh = () => void truth.products.splice(0, truth.products.length, ...rows.map(truthOf));
  refresh();
  return {
    name: 'php-mysql',
    url,
    urls: { products: url, orders: url },
    key: 'php-mysql-any-key',
    truth,
    tally,
    server,
    warnings: () => warnings,
    setPrice(id, price) {
      rows[id - 1].price = price;
      refresh();
    },
    close: () => server.close(),
  };
}
