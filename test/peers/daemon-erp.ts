/**
 * The ERP behind the emulated deployed daemon (daemon-emulator.ts): what Click2Sync's Java daemons
 * store from a pull and send in a push (`docs/interface.md`, "What deployed peers send"), written for these tests from
 * those facts. Every write gets an ERP timestamp `(ms, row)`; B1 writes `last_updated` as the
 * composite string `"<ms> - <row>"`, SAI as the number `ms`.
 *
 * Storing a pulled order casts like the daemons (B1 `(Long) quantity`, SAI `(long) dateCreated`, ECC
 * `(Long) buyer.id`): a wrong JSON type throws a `ClassCastException`, which the daemons do not catch.
 * An inserted order gets the ERP's next document number as its `_id` and `orderid`.
 */
import { asLong, asNumber, asObject, asPrimitiveLong, asString, type JavaObject, type JavaValue } from './java-json';

export type Flavor = 'b1' | 'sai';

/** The ERP refused to store an item (caught by the daemons and reported `failed`). */
export class ErpException extends Error {
  override readonly name = 'ErpException';
}

interface Row {
  item: JavaObject;
  ms: number;
  row: number;
}

export class Erp {
  readonly products = new Map<string, Row>();
  readonly orders = new Map<string, Row>();
  /** How often each pulled order (by the `orderid` it was pulled with) was inserted. */
  readonly inserts = new Map<string, number>();
  private ms = 1_700_000_000_000;
  private row = 0;
  private docNum = 5000;

  constructor(
    readonly flavor: Flavor,
    /** B1, SAI and ECC refuse to store pulled products ("protected"): every one is answered `failed`. */
    readonly productsProtected: boolean,
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

  private lastUpdated(t: { ms: number; row: number }): JavaValue {
    return this.flavor === 'b1' ? `${t.ms} - ${t.row}` : BigInt(t.ms);
  }

  /** Adds (or rewrites) an ERP product; `sameMs` writes it in the same millisecond as the previous write. */
  putProduct(sku: string, fields: { title: string; quantity: number; price: number }, sameMs = false): void {
    const t = this.stamp(sameMs);
    const item: JavaObject = {
      _id: sku,
      sku,
      title: fields.title,
      last_updated: this.lastUpdated(t),
      variations: [
        {
          availabilities: [{ tag: 'default', quantity: fields.quantity }], // a Double, as getDouble gives it
          prices: [{ tag: 'default', currency: 'MXN', number: fields.price }],
          images: [{ url: 'data:image/png;base64,iVBORw0KGgo=' }],
          videos: [],
        },
      ],
    };
    this.products.set(sku, { item, ...t });
  }

  /** Adds an ERP order of its own (not pulled). */
  putOrder(fields: { sku: string; quantity: number; unitPrice: number; buyerId: number }, sameMs = false): string {
    const id = String(++this.docNum);
    const t = this.stamp(sameMs);
    this.orders.set(id, { item: this.orderDoc(id, fields, t), ...t });
    return id;
  }

  private orderDoc(id: string, f: { sku: string; quantity: number; unitPrice: number; buyerId: number }, t: { ms: number; row: number }): JavaObject {
    // SAI writes unitPrice as a string and dateCreated as ""; B1 numbers and epoch ms.
    const price: JavaValue = this.flavor === 'sai' ? f.unitPrice.toFixed(2) : f.unitPrice;
    return {
      _id: id,
      orderid: id,
      status: 'open',
      dateCreated: this.flavor === 'sai' ? '' : BigInt(t.ms),
      dateClosed: 0n,
      last_updated: this.lastUpdated(t),
      total: { amount: f.quantity * f.unitPrice + 0.5, currency: 'MXN' },
      orderItems: [
        { id: f.sku, quantity: BigInt(f.quantity), unitPrice: price, currencyId: 'MXN' },
        { id: 'shipping', quantity: 1n, unitPrice: this.flavor === 'sai' ? '0.50' : 0.5, currencyId: 'MXN' },
      ],
      buyer: { id: BigInt(f.buyerId), email: 'buyer@example.com', phone: '', firstName: 'Ana', lastName: 'López' },
    };
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
   * Inserts a pulled order under the ERP's next document number, casting its fields like the
   * daemons do (a wrong type throws, uncaught); returns it as stored (new `_id` and `orderid`).
   */
  storeOrder(pulled: JavaObject): JavaObject {
    asString(pulled._id, 'order._id'); // ECC reads _id as a String
    const pulledId = asString(pulled.orderid, 'order.orderid') ?? '';
    asPrimitiveLong(pulled.dateCreated, 'order.dateCreated'); // SAI: (long) dateCreated
    const buyer = asObject(pulled.buyer, 'order.buyer');
    const buyerId = asLong(buyer.id, 'order.buyer.id'); // ECC: (Long) buyer.id
    const lines = (pulled.orderItems as JavaValue[] | undefined) ?? [];
    const first = asObject(lines[0] ?? null, 'order.orderItems[0]');
    const quantity = asLong(first.quantity, 'orderItems[0].quantity'); // B1: (Long) quantity
    const unitPrice = asNumber(first.unitPrice, 'orderItems[0].unitPrice');
    if (Array.isArray(pulled.otherids) && pulled.otherids.length > 0) {
      const other = asObject(pulled.otherids[0], 'otherids[0]');
      asString(other.id, 'otherids[0].id');
    }
    this.inserts.set(pulledId, (this.inserts.get(pulledId) ?? 0) + 1);
    const id = this.putOrder({ sku: asString(first.id, 'orderItems[0].id') ?? '', quantity: Number(quantity ?? 0n), unitPrice: unitPrice ?? 0, buyerId: Number(buyerId ?? 0n) });
    return this.orders.get(id)!.item;
  }

  /** The items of an entity after a cursor, in `(ms, row)` order. */
  itemsAfter(entity: 'products' | 'orders', cursor: { ms: number; row: number }): JavaObject[] {
    const rows = [...(entity === 'products' ? this.products : this.orders).values()];
    return rows
      .filter((r) => r.ms > cursor.ms || (r.ms === cursor.ms && r.row > cursor.row))
      .sort((a, b) => a.ms - b.ms || a.row - b.row)
      .map((r) => r.item);
  }
}
