import fc from 'fast-check';
import { OrderSchema, ProductSchema, readItem, type Entity, type Order, type Product } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';

const kinds = (r: ReturnType<typeof readItem>) => r.normalisations.map((n) => `${n.path}:${n.kind}`);

describe('readItem: what deployed peers send', () => {
  it('reads a cs-cart order (numeric ids, epoch-ms dates, dateClosed 0, raw total) with each change listed', () => {
    const r = readItem('orders', {
      _id: 1001,
      orderid: 1001,
      last_updated: 1517360038797,
      status: 'Pagado',
      dateCreated: 1517360038000,
      dateClosed: 0,
      total: { amount: '450.50', currency: 'MXN' },
      orderItems: [{ id: 77, quantity: 2, unitPrice: 225.25, currencyId: 'MXN' }, { id: 'shipping', quantity: 1, unitPrice: 0, currencyId: 'MXN' }],
      buyer: { id: 223369408, email: 'a@b.mx', phone: null, firstName: 'Ana', lastName: 'Ruiz' },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.item).toEqual({
      _id: '1001',
      orderid: '1001',
      last_updated: 1517360038797,
      status: 'Pagado',
      dateCreated: '2018-01-31T00:53:58.000Z',
      dateClosed: '',
      total: { amount: 450.5, currency: 'MXN' },
      orderItems: [{ id: '77', quantity: 2, unitPrice: 225.25, currencyId: 'MXN' }, { id: 'shipping', quantity: 1, unitPrice: 0, currencyId: 'MXN' }],
      buyer: { id: '223369408', email: 'a@b.mx', firstName: 'Ana', lastName: 'Ruiz' },
    });
    expect(kinds(r)).toEqual([
      '_id:string-from-number',
      'orderid:string-from-number',
      'dateCreated:date-from-epoch-ms',
      'dateClosed:date-from-epoch-ms',
      'total.amount:number-from-string',
      'orderItems.0.id:string-from-number',
      'buyer.id:string-from-number',
      'buyer.phone:null-dropped',
    ]);
  });

  it('keys a pulled order with no _id by its orderid (a deployed service\'s tmp- order)', () => {
    const r = readItem('orders', { orderid: 'tmp-5a1b2c3d4e5f60718293a4b5', status: 'paid', otherids: [{ id: '123', connectiontype: 'mercadolibre' }] });
    expect(r.ok && r.item._id).toBe('tmp-5a1b2c3d4e5f60718293a4b5');
    expect(kinds(r)).toEqual(['_id:id-from-natural-key']);
    expect(r.ok && r.unknownFields).toEqual(['otherids']);
  });

  it('reads the older docs\' string quantities and prices, a B1 composite last_updated and data: images', () => {
    const r = readItem('products', {
      sku: 'A-100',
      last_updated: '1517360038797 - 3',
      variations: [{ availabilities: [{ tag: 'default', quantity: '50' }], prices: [{ tag: 'default', currency: 'USD', number: '1060.51' }], images: [{ url: 'data:image/png;base64,iVBORw0KGgo=' }] }],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.item).toEqual({
      _id: 'A-100',
      sku: 'A-100',
      last_updated: 1517360038797,
      variations: [{ availabilities: [{ tag: 'default', quantity: 50 }], prices: [{ tag: 'default', currency: 'USD', number: 1060.51 }], images: [{ url: 'data:image/png;base64,iVBORw0KGgo=' }] }],
    });
    expect(kinds(r)).toContain('last_updated:timestamp-from-composite');
  });

  it('refuses what it cannot convert exactly, naming the field, and never returns an invalid item', () => {
    const lossy = readItem('products', { _id: 'p', variations: [{ prices: [{ tag: 'd', currency: 'EUR', number: '0.10000000000000000001' }] }] });
    expect(lossy.ok).toBe(false);
    expect(!lossy.ok && lossy.error).toMatch(/^variations\.0\.prices\.0\.number: /);
    expect(readItem('products', { _id: 'p', variations: [{ availabilities: [{ tag: 'd', quantity: '2.5' }] }] }).ok).toBe(false);
    expect(readItem('orders', { status: 'paid' }).ok).toBe(false); // no _id and no orderid
    expect(readItem('products', ['not', 'an', 'object']).ok).toBe(false);
    expect(readItem('products', { _id: 'a\u0000b' }).ok).toBe(false);
  });
});

/** A demo item mangled the ways deployed peers write items; each change is one the reader undoes. */
function mangled(entity: Entity, item: Product | Order, bits: readonly boolean[]): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(item)) as Record<string, any>;
  let i = 0;
  const pick = () => bits[i++ % bits.length];
  const stringify = (o: Record<string, any>, key: string) => {
    if (typeof o[key] === 'number' && pick()) o[key] = String(o[key]);
  };
  if (entity === 'products') {
    for (const v of copy.variations ?? []) {
      for (const a of v.availabilities ?? []) stringify(a, 'quantity');
      for (const p of v.prices ?? []) stringify(p, 'number');
    }
    if (typeof copy.sku === 'string' && copy.sku !== '' && pick()) delete copy._id;
  } else {
    for (const it of copy.orderItems ?? []) {
      stringify(it, 'quantity');
      stringify(it, 'unitPrice');
    }
    if (copy.total) stringify(copy.total, 'amount');
    for (const field of ['dateCreated', 'dateClosed']) {
      if (typeof copy[field] === 'string' && pick()) copy[field] = copy[field] === '' ? 0 : Date.parse(copy[field]);
    }
    if (copy.buyer && /^\d{1,15}$/.test(copy.buyer.id ?? '') && pick()) copy.buyer.id = Number(copy.buyer.id);
    if (typeof copy.orderid === 'string' && copy.orderid !== '' && pick()) delete copy._id;
  }
  stringify(copy, 'last_updated');
  if (pick()) copy.brand_or_note = null; // unknown member: stripped
  if (pick()) copy.title = null;
  return copy;
}

describe('readItem properties', () => {
  const catalog = demoCatalog(60);
  const items = [...catalog.products.map((p) => ['products', p] as const), ...catalog.orders.map((o) => ['orders', o] as const)];

  it('never loses a valid item: the webhook item back, whatever a peer did to its types (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...items), fc.array(fc.boolean(), { minLength: 1, maxLength: 200 }), (entry, bits) => {
        const [entity, item] = entry;
        const raw = mangled(entity, item, bits);
        const sent = structuredClone(raw); // readItem works in place
        const r = readItem(entity, raw);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        const expected: Record<string, unknown> = { ...item };
        // Without an _id the item is keyed by its natural key (sku / orderid).
        if (sent._id === undefined) expected._id = entity === 'products' ? (item as Product).sku : (item as Order).orderid;
        if (sent.title === null) delete expected.title;
        if (entity === 'orders') {
          // The ISO dates a peer sent as epoch ms come back in canonical ISO form.
          for (const f of ['dateCreated', 'dateClosed'] as const) {
            const v = (item as Order)[f];
            if (typeof v === 'string' && v !== '') expected[f] = new Date(Date.parse(v)).toISOString();
          }
        }
        expect(r.item).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });

  it('repairs instead of refusing: any valid item with members nulled out anywhere reads back valid, the rest intact (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...items).chain(([entity, item]) =>
          fc.tuple(fc.constant(entity), fc.constant(item), fc.subarray(pathsOf(item), { maxLength: 6 }), fc.array(fc.boolean(), { minLength: 6, maxLength: 6 })),
        ),
        ([entity, item, paths, asEmptyText]) => {
          const raw = structuredClone(item) as Record<string, unknown>;
          paths.forEach((path, i) => emptyAt(raw, path, asEmptyText[i]));
          const expected = repaired(structuredClone(raw), '');
          const r = readItem(entity, raw);
          expect(r.ok).toBe(true);
          if (!r.ok) return;
          expect((entity === 'products' ? ProductSchema : OrderSchema).safeParse(r.item).success).toBe(true);
          expect(r.item).toEqual(expected);
          // Every repair is counted, each as one of the three kinds that say what was dropped.
          if (paths.length > 0) expect(r.normalisations.length).toBeGreaterThan(0);
          for (const n of r.normalisations) expect(['null-dropped', 'empty-dropped', 'incomplete-member-dropped']).toContain(n.kind);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('quarantines only what cannot be read without loss, or has no usable id', () => {
    expect(readItem('products', { sku: null, title: 'no id' })).toMatchObject({ ok: false, error: expect.stringMatching(/^_id: /) });
    expect(readItem('products', { _id: 'p', variations: [{ availabilities: [{ tag: 'd', quantity: 'many' }], videos: [{ url: null }] }] }).ok).toBe(false);
    // The php-mysql example's NULL video column: the product is kept, the empty video dropped.
    const r = readItem('products', { sku: '7', variations: [{ images: [{ url: 'https://x/7.jpg' }], videos: [{ url: null }], barcode: null }] });
    expect(r.ok && r.item).toEqual({ _id: '7', sku: '7', variations: [{ images: [{ url: 'https://x/7.jpg' }], videos: [] }] });
    expect(kinds(r)).toEqual(['variations.0.barcode:null-dropped', 'variations.0.videos.0.url:null-dropped', '_id:id-from-natural-key', 'variations.0.videos.0:incomplete-member-dropped']);
    const total = readItem('orders', { _id: 'o', total: { amount: 5, currency: null }, orderItems: [null, { id: 'a', quantity: '' }] });
    expect(total.ok && total.item).toEqual({ _id: 'o', orderItems: [{ id: 'a' }] });
  });

  it('never returns an invalid item, whatever JSON it is given (property)', () => {
    const member = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(null), fc.boolean());
    const shaped = fc.record({
      _id: member,
      sku: member,
      orderid: member,
      last_updated: member,
      dateCreated: member,
      total: fc.record({ amount: member, currency: member }, { requiredKeys: [] }),
      variations: fc.array(fc.record({ availabilities: fc.array(fc.record({ tag: member, quantity: member })), prices: fc.array(fc.record({ tag: member, currency: member, number: member })) }, { requiredKeys: [] }), { maxLength: 2 }),
      orderItems: fc.array(fc.record({ id: member, quantity: member, unitPrice: member }, { requiredKeys: [] }), { maxLength: 2 }),
    }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.constantFrom<Entity>('products', 'orders'), fc.oneof(shaped, fc.jsonValue()), (entity, raw) => {
        const r = readItem(entity, structuredClone(raw));
        if (r.ok) expect((entity === 'products' ? ProductSchema : OrderSchema).safeParse(r.item).success).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});

/**
 * The parts each unit cannot be without, as the interface states them: an empty one drops its unit
 * (an array entry, or the member `total`). Written out here, apart from the reader's schema walk.
 */
const REQUIRED_PARTS: Record<string, readonly string[]> = {
  images: ['url'],
  videos: ['url'],
  availabilities: ['tag', 'quantity'],
  prices: ['tag', 'currency', 'number'],
  properties: ['extraattributes'],
  total: ['amount', 'currency'],
};
const NUMBER_MEMBERS = new Set(['quantity', 'number', 'unitPrice', 'amount', 'last_updated', 'rating', 'date_created']);

/** Every member and array entry of an item, as key paths (its own `_id` left out). */
function pathsOf(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((x, i) => [i, x]) : Object.entries(value);
  return entries.flatMap(([k, x]) => (prefix.length === 0 && k === '_id' ? [] : [[...prefix, k], ...pathsOf(x, [...prefix, k])]));
}

/** Empties the member at `path` (if it is still there): `null`, or `""` where a number belongs when `asText`. */
function emptyAt(root: Record<string, unknown>, path: Array<string | number>, asText: boolean): void {
  let at: any = root;
  for (const k of path.slice(0, -1)) {
    if (typeof at !== 'object' || at === null) return;
    at = at[k];
  }
  const last = path[path.length - 1];
  if (typeof at !== 'object' || at === null || !(last in at)) return;
  at[last] = asText && typeof at[last] === 'number' && NUMBER_MEMBERS.has(String(last)) ? '' : null;
}

const DROPPED = Symbol('dropped');
/** What must remain of `value` (a member named `unit`, or an entry of the array named so): empty values gone, units without a required part gone. */
function repaired(value: unknown, unit: string): unknown {
  if (value === null || value === '') return DROPPED;
  if (Array.isArray(value)) return value.map((x) => repaired(x, unit)).filter((x) => x !== DROPPED);
  if (typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) {
    const kept = x === '' && !NUMBER_MEMBERS.has(k) ? x : repaired(x, k);
    if (kept !== DROPPED) out[k] = kept;
    else if ((REQUIRED_PARTS[unit] ?? []).includes(k)) return DROPPED;
  }
  return out;
}
