/**
 * The ERP behind the emulated deployed daemons (daemon-emulator.ts): what Click2Sync's Java daemons
 * store from a pull and send in a push, written for these tests from the facts file
 * (`/work/shared/spec/click2sync-as-deployed.md` §2.6, §2.11; no daemon code copied). Every write
 * gets an ERP timestamp `(ms, row)`; B1 writes `last_updated` as the composite string
 * `"<ms> - <row>"`, SAI as the number `ms`, ECC writes none.
 *
 * Storing a pulled order casts like the daemons, and a wrong JSON type throws (a `ClassCastException`
 * or `NullPointerException` the daemons do not catch):
 * - B1: `(String) _id`: a document number of its own is an update (the document is returned as it
 *   is), anything else an insert under the next document number; `(Long) quantity` of each line;
 *   a line naming an item code the ERP does not know is refused (caught: `failed`); its reference
 *   is read from `otherids[0].id` (without it: "Could not extract referenceid", counted);
 * - SAI: `(long) dateCreated`, and `(long) quantity` / `(long) unitPrice` of every line (a decimal
 *   price throws); every pulled order is inserted under the next row number;
 * - ECC: `(String) _id` (a number of its own: update), `(Long) buyer.id` unboxed (missing: NPE); its
 *   `storeOrder` returns null, so the daemon acknowledges with `{"order": null}`.
 * Products are refused by all three ("protected"). A `poison` order throws an uncaught runtime
 * exception, as any of them would on data it cannot digest.
 */
import { asLong, asNumber, asObject, asPrimitiveLong, asString, NullPointerException, type JavaObject, type JavaValue } from './java-json';

export type Flavor = 'b1' | 'sai' | 'ecc';

/** The ERP refused to store an item (caught by the daemons and reported `failed`). */
export class ErpException extends Error {
  override readonly name = 'ErpException';
}

interface Row {
  item: JavaObject;
  ms: number;
  row: number;
}

/** Order lines that are not products (the daemons map them to configured item codes). */
const PSEUDO_ITEMS = new Set(['shipping', 'surcharge']);

export class Erp {
  readonly products = new Map<string, Row>();
  readonly orders = new Map<string, Row>();
  /** How often each pulled order was inserted, by the `_id` it was pulled with (else its `orderid`). */
  readonly inserts = new Map<string, number>();
  /** Pulled orders updated in place (B1, ECC: their `_id` was a document number of the ERP's). */
  updates = 0;
  /** B1: references read from `otherids[0].id`, by document number; and inserts that had none. */
  readonly references = new Map<string, string>();
  missingReferences = 0;
  /** Orders that make the daemon throw an uncaught runtime exception (a test's crash loop). */
  poison?: (order: JavaObject) => boolean;
  private ms = 1_700_000_000_000;
  private row = 0;
  private docNum = 5000;

  constructor(
    readonly flavor: Flavor,
    /** B1, SAI and ECC refuse to store pulled products ("protected"): every one is answered `failed`. */
    readonly productsProtected: boolean,
    /** B1: refuse order lines naming an item code the ERP does not know (a real DI API add() does). Default: only when the ERP has products. */
    readonly checkItemCodes?: boolean,
  ) {}

  /** The next ERP timestamp; `sameMs` keeps the millisecond (rows of one write), else the clock moves on. */
  private stamp(sameMs = false): { ms: number; row: number } {
    if (sameMs) this.row++;
    else {
      this.ms += 1000;
      this.row = 1;
    }
    return { ms: this.ms, row: this.row };
  }

  private withLastUpdated(item: JavaObject, t: { ms: number; row: number }): JavaObject {
    if (this.flavor === 'ecc') return item; // ECC items carry no last_updated
    return { ...item, last_updated: this.flavor === 'b1' ? `${t.ms} - ${t.row}` : BigInt(t.ms) };
  }

  /** Adds (or rewrites) an ERP product; `sameMs` writes it in the same millisecond as the previous write. */
  putProduct(sku: string, fields: { title: string; quantity: number; price: number }, sameMs = false): void {
    const t = this.stamp(sameMs);
    const item: JavaObject = {
      _id: sku,
      sku,
      title: fields.title,
      variations: [
        {
          availabilities: [{ tag: 'default', quantity: fields.quantity }], // a Double, as getDouble gives it
          prices: [{ tag: 'default', currency: 'MXN', number: fields.price }],
          images: [{ url: 'data:image/png;base64,iVBORw0KGgo=' }],
          videos: [],
        },
      ],
    };
    this.products.set(sku, { item: this.withLastUpdated(item, t), ...t });
  }

  /** Adds an ERP order of its own (not pulled); returns its document number. */
  putOrder(fields: { sku: string; quantity: number; unitPrice: number; buyerId: number | string }, sameMs = false): string {
    const id = String(++this.docNum);
    const t = this.stamp(sameMs);
    this.orders.set(id, { item: this.orderDoc(id, fields, t), ...t });
    return id;
  }

  /** Rewrites an order in the ERP (a change made there): it goes out with the next push. */
  touchOrder(id: string, status = 'closed'): void {
    const row = this.orders.get(id);
    if (!row) throw new Error(`no ERP order ${id}`);
    const t = this.stamp();
    this.orders.set(id, { item: this.withLastUpdated({ ...row.item, status }, t), ...t });
  }

  private orderDoc(id: string, f: { sku: string; quantity: number; unitPrice: number; buyerId: number | string }, t: { ms: number; row: number }): JavaObject {
    // SAI writes unitPrice as a string and dateCreated as ""; B1 numbers and epoch ms; B1 and ECC buyer ids are the ERP's customer codes.
    const price: JavaValue = this.flavor === 'sai' ? f.unitPrice.toFixed(2) : f.unitPrice;
    return this.withLastUpdated(
      {
        _id: id,
        orderid: id,
        status: 'open',
        dateCreated: this.flavor === 'sai' ? '' : BigInt(t.ms),
        dateClosed: 0n,
        total: { amount: f.quantity * f.unitPrice + 0.5, currency: 'MXN' },
        orderItems: [
          { id: f.sku, quantity: BigInt(f.quantity), unitPrice: price, currencyId: 'MXN' },
          { id: 'shipping', quantity: 1n, unitPrice: this.flavor === 'sai' ? '0.50' : 0.5, currencyId: 'MXN' },
        ],
        buyer: { id: typeof f.buyerId === 'number' ? BigInt(f.buyerId) : f.buyerId, email: 'buyer@example.com', phone: '', firstName: 'Ana', lastName: 'López' },
      },
      t,
    );
  }

  /** Stores a pulled product by its sku; returns it as stored. */
  storeProduct(pulled: JavaObject): JavaObject {
    if (this.productsProtected) throw new ErpException('products are protected in this ERP');
    const sku = asString(pulled.sku, 'product.sku');
    if (!sku) throw new ErpException('the product has no sku');
    const variation = asObject((pulled.variations as JavaValue[] | undefined)?.[0] ?? null, 'product.variations[0]');
    const quantity = asNumber(asObject((variation.availabilities as JavaValue[])[0], 'availabilities[0]').quantity, 'quantity') ?? 0;
    const price = asNumber(asObject((variation.prices as JavaValue[])[0], 'prices[0]').number, 'number') ?? 0;
    this.putProduct(sku, { title: asString(pulled.title, 'title') ?? '', quantity, price });
    return this.products.get(sku)!.item;
  }

  /**
   * Stores a pulled order the way the flavor does (see the top of this file); returns it as stored
   * (the ERP's document number as `_id` and `orderid`), or `null` (ECC). Wrong types throw, uncaught.
   */
  storeOrder(pulled: JavaObject): JavaObject | null {
    if (this.poison?.(pulled)) throw new NullPointerException('the ERP layer cannot digest this order');
    const pulledId = asString(pulled._id, 'order._id'); // B1 and ECC read _id as a String
    const key = pulledId ?? asString(pulled.orderid, 'order.orderid') ?? '';
    const lines = ((pulled.orderItems as JavaValue[] | undefined) ?? []).map((l, i) => asObject(l, `orderItems[${i}]`));
    if (this.flavor === 'sai') return this.insertSai(pulled, key, lines);
    if (this.flavor === 'ecc') {
      asPrimitiveLong(asObject(pulled.buyer, 'order.buyer').id, 'order.buyer.id'); // Long.toString((Long) buyer.get("id"))
      if (pulledId !== null && /^\d+$/.test(pulledId)) {
        this.updates++;
        return null;
      }
      this.insert(key, { sku: asString(lines[0]?.id ?? null, 'orderItems[0].id') ?? '', quantity: 1, unitPrice: 0, buyerId: 'C-DEFAULT' });
      return null;
    }
    return this.storeB1(pulled, pulledId, key, lines);
  }

  private storeB1(pulled: JavaObject, pulledId: string | null, key: string, lines: JavaObject[]): JavaObject {
    if (pulledId !== null && /^\d{1,9}$/.test(pulledId) && this.orders.has(String(Number(pulledId)))) {
      this.updates++;
      return this.orders.get(String(Number(pulledId)))!.item; // the real update re-reads the document as it is
    }
    const buyer = asObject(pulled.buyer, 'order.buyer');
    let first: { sku: string; quantity: number; unitPrice: number } | undefined;
    for (const line of lines) {
      const code = asString(line.id, 'orderItem.id') ?? '';
      if (PSEUDO_ITEMS.has(code)) continue;
      const quantity = Number(asLong(line.quantity, 'orderItem.quantity') ?? 0n); // (Long) quantity
      if ((this.checkItemCodes ?? this.products.size > 0) && !this.products.has(code)) throw new ErpException(`Could not store document... errorcode:-10 'Invalid item code ${code}'`);
      first ??= { sku: code, quantity, unitPrice: asNumber(line.unitPrice, 'orderItem.unitPrice') ?? 0 };
    }
    const reference = this.referenceOf(pulled);
    const id = this.insert(key, { ...(first ?? { sku: '', quantity: 0, unitPrice: 0 }), buyerId: `C${String(buyer.id ?? '0')}` });
    if (reference !== undefined) this.references.set(id, reference);
    return this.orders.get(id)!.item;
  }

  /** B1 reads `otherids[0].id` in a try/catch: without it, the reference stays empty. */
  private referenceOf(pulled: JavaObject): string | undefined {
    try {
      const other = asObject((pulled.otherids as JavaValue[] | undefined)?.[0] ?? null, 'otherids[0]');
      return asString(other.id, 'otherids[0].id') ?? undefined;
    } catch {
      this.missingReferences++;
      return undefined;
    }
  }

  private insertSai(pulled: JavaObject, key: string, lines: JavaObject[]): JavaObject {
    asPrimitiveLong(pulled.dateCreated, 'order.dateCreated'); // (long) dateCreated
    let first: { sku: string; quantity: number; unitPrice: number } | undefined;
    for (const line of lines) {
      const quantity = Number(asPrimitiveLong(line.quantity, 'orderItem.quantity')); // (long) quantity
      const unitPrice = Number(asPrimitiveLong(line.unitPrice, 'orderItem.unitPrice')); // (long) unitPrice: a decimal throws
      first ??= { sku: asString(line.id, 'orderItem.id') ?? '', quantity, unitPrice };
    }
    const id = this.insert(key, { ...(first ?? { sku: '', quantity: 0, unitPrice: 0 }), buyerId: '' });
    return this.orders.get(id)!.item;
  }

  private insert(key: string, fields: { sku: string; quantity: number; unitPrice: number; buyerId: number | string }): string {
    this.inserts.set(key, (this.inserts.get(key) ?? 0) + 1);
    return this.putOrder(fields);
  }

  /** The items of an entity after a cursor, in `(ms, row)` order (ECC: all of them, it has no timestamps). */
  itemsAfter(entity: 'products' | 'orders', cursor: { ms: number; row: number }): JavaObject[] {
    const rows = [...(entity === 'products' ? this.products : this.orders).values()];
    return rows
      .filter((r) => this.flavor === 'ecc' || r.ms > cursor.ms || (r.ms === cursor.ms && r.row > cursor.row))
      .sort((a, b) => a.ms - b.ms || a.row - b.row)
      .map((r) => r.item);
  }
}
