import fc from 'fast-check';
import { guardAdapter, type GuardedAdapter } from '../../lib/adapter-guard';
import { mergeMembers, type EntityStore, type StoreAdapter } from '../../lib/adapter';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { AdapterContractError, AdapterError } from '../../lib/errors';
import { ORDER_STATUSES, type Order, type Product } from '../../lib/contract/webhook';
import { handleWrite, type CoreResponse, type WriteConfig } from '../../lib/server/write-core';

const signal = new AbortController().signal;
const catalog = demoCatalog(40);
const NOW = 1_800_000_000_000;
const ORDER_ID = 'ord-new-1';
const PRODUCT_ID = 'prod-new-1';

/** A memory adapter seeded with the demo catalog, wrapped to count upserts and optionally refuse them. */
class SpyAdapter implements StoreAdapter {
  upserts = 0;
  /** When set, any upsert throws: a write that should have been refused fails loudly. */
  blockWrites = false;
  checkOrderCalls = 0;
  partners: ReadonlySet<string> | undefined;
  readonly products: EntityStore<Product>;
  readonly orders: EntityStore<Order>;
  constructor(readonly memory: MemoryAdapter) {
    this.products = this.spy(memory.products);
    this.orders = this.spy(memory.orders);
  }
  private spy<T extends { _id: string; last_updated?: number }>(store: EntityStore<T>): EntityStore<T> {
    return {
      list: (o) => store.list(o),
      count: (o) => store.count(o),
      get: (id, o) => store.get(id, o),
      upsert: async (item, o) => {
        this.upserts++;
        if (this.blockWrites) throw new Error('test: this write must not happen');
        return store.upsert(item, o);
      },
    };
  }
  productBySku(sku: string) {
    return this.memory.productBySku(sku);
  }
  orderByOrderId(orderid: string) {
    return this.memory.orderByOrderId(orderid);
  }
  productReasons: string[] = [];
  async checkProduct(): Promise<string[]> {
    return this.productReasons;
  }
  /** An adapter's own check: the buyer must be a known business partner (when a list is set). */
  async checkOrder(order: Order): Promise<string[]> {
    this.checkOrderCalls++;
    if (!this.partners || this.partners.has(order.buyer?.id ?? '')) return [];
    return [`invalid business partner "${order.buyer?.id ?? ''}"`];
  }
}

interface Setup {
  spy: SpyAdapter;
  adapter: GuardedAdapter;
  config: WriteConfig & { clock: number };
}

function setup(): Setup {
  const spy = new SpyAdapter(createMemoryAdapter(structuredClone(catalog)));
  const config = {
    clock: NOW,
    allowedOrderStatuses: new Set<string>(ORDER_STATUSES) as ReadonlySet<string> | null,
    now() {
      return this.clock;
    },
  };
  return { spy, adapter: guardAdapter(spy), config };
}

const [p0, p1] = catalog.products;

/** A small valid order: one item by SKU, one by `_id`, total consistent with the items. */
function order(): Omit<Order, '_id'> {
  return {
    orderid: '#1',
    status: 'paid',
    dateCreated: '2026-01-02T03:04:05.000Z',
    dateClosed: '',
    total: { amount: 25, currency: 'USD' },
    orderItems: [
      { id: p0.sku!, variation_id: p0.variations![0].variationid!, quantity: 2, unitPrice: 7.5, currencyId: 'USD' },
      { id: p1._id, variation_id: p1.variations![0].variationid!, quantity: 1, unitPrice: 10, currencyId: 'USD' },
    ],
    buyer: { id: 'buyer-1', email: 'a@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    shipments: [],
    messages: [],
  };
}

function product(): Omit<Product, '_id'> {
  return {
    sku: 'SKU-NEW-1',
    title: 'Blue Mug',
    variations: [
      {
        variationid: 'v1',
        availabilities: [{ tag: 'default', quantity: 3 }],
        prices: [{ tag: 'default', currency: 'EUR', number: 9.99 }],
      },
    ],
  };
}

function write(s: Setup, entity: 'orders' | 'products', body: unknown, query: Record<string, unknown> = {}) {
  const id = entity === 'orders' ? ORDER_ID : PRODUCT_ID;
  return handleWrite(s.adapter, entity, { jobid: '42', id, ...query }, body, s.config, signal);
}

function reasonsOf(res: CoreResponse): string[] {
  expect(res.status).toBe(400);
  const body = res.body as { success: boolean; code: number; error: string; reasons: { msg: string }[]; warnings: unknown[] };
  expect(body.success).toBe(false);
  expect(body.code).toBe(400);
  expect(typeof body.error).toBe('string');
  return body.reasons.map((r) => r.msg);
}

function warningsOf(res: CoreResponse): string[] {
  return (res.body as { warnings: { msg: string }[] }).warnings.map((w) => w.msg);
}

/** Expects a refusal with exactly these reasons, and nothing stored. */
async function expectRefused(s: Setup, entity: 'orders' | 'products', body: unknown, reasons: string[], query?: Record<string, unknown>) {
  s.spy.blockWrites = true;
  const res = await write(s, entity, body, query);
  expect(reasonsOf(res)).toEqual(reasons);
  expect(s.spy.upserts).toBe(0);
  expect(await s.adapter.entity(entity).get(entity === 'orders' ? ORDER_ID : PRODUCT_ID, { signal })).toBeUndefined();
  return res;
}

describe('handleWrite: order success', () => {
  it('stores a valid order and answers the stored item with last_updated = now', async () => {
    const s = setup();
    const res = await write(s, 'orders', order());
    const stored = await s.adapter.orders.get(ORDER_ID, { signal });
    expect(res).toEqual({ status: 200, body: { success: true, code: 200, warnings: [], order: stored } });
    expect(stored).toEqual({ ...order(), _id: ORDER_ID, last_updated: NOW });
  });

  it('a body _id equal to id is accepted; a missing body _id takes id', async () => {
    const s = setup();
    expect((await write(s, 'orders', { ...order(), _id: ORDER_ID })).status).toBe(200);
    const t = setup();
    const res = await write(t, 'orders', order());
    expect((res.body as { order: Order }).order._id).toBe(ORDER_ID);
  });

  it('updates an existing order: the stored item is replaced by the complete new one', async () => {
    const s = setup();
    const existing = catalog.orders[0];
    const body = { ...order(), status: 'shipped', shipments: [{ id: 's1', shiptracknum: 'T1', shipitems: [p0.sku!], shiptype: 'ups', shipstatus: 'shipping' }] };
    const res = await write(s, 'orders', body, { id: existing._id });
    expect(res.status).toBe(200);
    expect(await s.adapter.orders.get(existing._id, { signal })).toEqual({ ...body, _id: existing._id, last_updated: NOW });
    expect(await s.adapter.orders.count({ signal })).toBe(catalog.orders.length);
  });

  it('every demo order rewritten as is succeeds without warnings', async () => {
    const s = setup();
    for (const o of catalog.orders) {
      const res = await write(s, 'orders', o, { id: o._id });
      expect({ id: o._id, status: res.status, warnings: warningsOf(res) }).toEqual({ id: o._id, status: 200, warnings: [] });
    }
  });

  it('a rating without feedback is stored without a warning', async () => {
    const s = setup();
    const res = await write(s, 'orders', { ...order(), rating: 4.5 });
    expect(res.status).toBe(200);
    expect(warningsOf(res)).toEqual([]);
  });

  it('an order without status is accepted (only a status that is present is checked)', async () => {
    const s = setup();
    const { status, ...body } = order();
    void status;
    expect((await write(s, 'orders', body)).status).toBe(200);
  });
});

describe('handleWrite: query parameters', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['empty id', { id: '' }, 'id: query parameter must not be empty'],
    ['id over 256 characters', { id: 'x'.repeat(257) }, `id: query parameter must be at most 256 characters, got "${'x'.repeat(40)}…"`],
    ['id with a NUL', { id: 'a\u0000b' }, 'id: query parameter must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF), got "a\\u0000b"'],
    ['id with a tab', { id: 'a\tb' }, 'id: query parameter must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF), got "a\\tb"'],
    ['id given twice', { id: ['a', 'b'] }, 'id: query parameter must be given once, got 2 values'],
    ['id as an object', { id: { a: '1' } }, 'id: query parameter must be a plain value, not an object'],
    ['non-integer jobid', { jobid: 'abc' }, 'jobid: query parameter must be an integer, got "abc"'],
    ['fractional jobid', { jobid: '1.5' }, 'jobid: query parameter must be an integer, got "1.5"'],
    ['empty jobid', { jobid: '' }, 'jobid: query parameter must be an integer'],
    ['huge jobid', { jobid: '99999999999999999' }, 'jobid: query parameter must be an integer, got "99999999999999999"'],
    ['jobid given twice', { jobid: ['1', '2'] }, 'jobid: query parameter must be given once, got 2 values'],
    ['jobid as an object', { jobid: { $gt: '1' } }, 'jobid: query parameter must be a plain value, not an object'],
  ];
  it.each(cases)('%s → failure', async (_name, query, reason) => {
    const s = setup();
    s.spy.blockWrites = true;
    const res = await write(s, 'orders', order(), query);
    expect(reasonsOf(res)).toEqual([reason]);
    expect(s.spy.upserts).toBe(0);
  });

  it('accepts a 256-character id and negative or zero jobids', async () => {
    const s = setup();
    expect((await write(s, 'orders', order(), { id: 'x'.repeat(256), jobid: '0' })).status).toBe(200);
    expect((await write(s, 'orders', { ...order(), orderid: '#2' }, { jobid: '-3' })).status).toBe(200);
  });

  it('query and body problems are reported together', async () => {
    const s = setup();
    const body = order();
    body.orderItems![1].quantity = 0;
    await expectRefused(s, 'orders', body, ['jobid: query parameter must be an integer, got "x"', 'orderItems.1.quantity: must be greater than 0, got 0'], { jobid: 'x' });
  });

  it('a body _id is checked like any member when id is missing', async () => {
    const s = setup();
    await expectRefused(s, 'orders', { ...order(), _id: '' }, ['_id: must not be empty'], { id: undefined });
  });

  it('jobid is optional (the deployed service sends none)', async () => {
    const s = setup();
    const res = await write(s, 'orders', order(), { jobid: undefined });
    expect(res).toMatchObject({ status: 200, body: { success: true, order: { _id: ORDER_ID } } });
  });
});

describe('handleWrite: creates (no id, no body _id: the store assigns the id)', () => {
  const create = (s: Setup, entity: 'orders' | 'products', body: unknown, query: Record<string, unknown> = {}) => handleWrite(s.adapter, entity, query, body, s.config, signal);

  it.each(['orders', 'products'] as const)('%s: a generated <noun>-<uuid> id, stored, answered in the success structure', async (entity) => {
    const s = setup();
    const body = entity === 'orders' ? order() : product();
    const before = await s.adapter.entity(entity).count({ signal });
    const res = await create(s, entity, body);
    const noun = entity === 'orders' ? 'order' : 'product';
    expect(res.status).toBe(200);
    const item = (res.body as Record<string, { _id: string; last_updated: number }>)[noun];
    expect(res.body).toMatchObject({ success: true, code: 200, warnings: [] });
    expect(item._id).toMatch(new RegExp(`^${noun}-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`));
    expect(item.last_updated).toBe(NOW);
    expect(await s.adapter.entity(entity).get(item._id, { signal })).toEqual(item);
    expect(await s.adapter.entity(entity).count({ signal })).toBe(before + 1);
  });

  it('with no id parameter, the body _id is the id (an update when it exists)', async () => {
    const s = setup();
    const res = await create(s, 'products', { ...product(), _id: 'from-body' }, { jobid: '3' });
    expect(res).toMatchObject({ status: 200, body: { product: { _id: 'from-body', title: 'Blue Mug' } } });
    const again = await create(s, 'products', { ...product(), _id: 'from-body', title: 'Red Mug' });
    expect(again).toMatchObject({ status: 200, body: { product: { _id: 'from-body', title: 'Red Mug' } } });
  });

  it("the adapter's newId is used (and gets the entity and the item)", async () => {
    const s = setup();
    const seen: unknown[] = [];
    const inner: StoreAdapter = Object.assign(s.spy, { newId: async (entity: string, item: object) => (seen.push([entity, (item as Product).sku]), `P-${seen.length}`) });
    const adapter = guardAdapter(inner);
    const res = await handleWrite(adapter, 'products', {}, product(), s.config, signal);
    expect(res).toMatchObject({ status: 200, body: { product: { _id: 'P-1', sku: 'SKU-NEW-1' } } });
    expect(seen).toEqual([['products', 'SKU-NEW-1']]);
  });

  it.each([
    ['an id with a "/"', 'a/b', /which holds "\/": the ids the store assigns must be safe in a raw URL/],
    ['an id with "#" and a space', '#1 2', /which holds "#" and a space/],
    ['an empty id', '', /not a valid _id/],
    ['a number', 7, /not a valid _id/],
  ])('a newId that returns %s is an adapter contract error (500), and nothing is stored', async (_name, bad, message) => {
    const s = setup();
    const adapter = guardAdapter(Object.assign(s.spy, { newId: async () => bad as string }));
    const before = await adapter.products.count({ signal });
    await expect(handleWrite(adapter, 'products', {}, product(), s.config, signal)).rejects.toThrow(AdapterContractError);
    await expect(handleWrite(adapter, 'products', {}, product(), s.config, signal)).rejects.toThrow(message);
    expect(await adapter.products.count({ signal })).toBe(before);
  });

  it('a refused create asks for no id and stores nothing', async () => {
    const s = setup();
    let asked = 0;
    const adapter = guardAdapter(Object.assign(s.spy, { newId: async () => `x-${++asked}` }));
    s.spy.blockWrites = true;
    const res = await handleWrite(adapter, 'products', {}, { ...product(), sku: p0.sku }, s.config, signal);
    expect(reasonsOf(res)).toEqual([`sku: "${p0.sku}" is already used by product "${p0._id}"`]);
    expect(asked).toBe(0);
    expect(s.spy.upserts).toBe(0);
  });

  it('an order create repeated (same orderid, a retry after a lost reply) answers the first order and stores nothing new (issue 19)', async () => {
    const s = setup();
    const a = await create(s, 'orders', order());
    const upserts = s.spy.upserts;
    const b = await create(s, 'orders', order());
    expect(b).toEqual(a);
    expect(s.spy.upserts - upserts).toBe(1); // resolved by the adapter as unchanged: nothing written
    const all = await s.adapter.orders.list({ sortorder: 'asc', limit: 1000, signal });
    expect(all.filter((x) => x.doc.orderid === '#1').map((x) => x._id)).toEqual([(a.body as { order: Order }).order._id]);
  });

  it('a create with a known orderid but another body updates that order, says so, and keeps what it leaves out', async () => {
    const s = setup();
    const a = (await create(s, 'orders', order())).body as { order: Order };
    const { total: _total, ...lessTotal } = order();
    const b = await create(s, 'orders', { ...lessTotal, status: 'shipped' });
    expect(b.status).toBe(200);
    const stored = (b.body as { order: Order }).order;
    expect(stored).toMatchObject({ _id: a.order._id, status: 'shipped', total: a.order.total });
    expect(warningsOf(b)).toEqual([
      'body: members the body leaves out were kept from the stored order: total (a write replaces only the members it carries; send a member as null to remove it)',
      `orderid: "#1" already names order "${a.order._id}": this create was written to that order instead of making a second one`,
    ]);
  });

  it('creates without an orderid, and product creates without a SKU, are each a new item (nothing to repeat them by)', async () => {
    const s = setup();
    const { orderid: _o, ...noOrderId } = order();
    const ids = [await create(s, 'orders', noOrderId), await create(s, 'orders', { ...noOrderId, orderid: '  ' }), await create(s, 'orders', noOrderId)].map((r) => (r.body as { order: Order }).order._id);
    expect(new Set(ids).size).toBe(3);
    const { sku: _s, ...noSku } = product();
    const p = [await create(s, 'products', noSku), await create(s, 'products', noSku)].map((r) => (r.body as { product: Product }).product._id);
    expect(p[0]).not.toBe(p[1]);
  });

  it('an update may not take the orderid of another order (400, like a SKU), and an order keeps its own', async () => {
    const s = setup();
    const other = catalog.orders[1];
    expect(reasonsOf(await write(s, 'orders', { ...order(), orderid: other.orderid }))).toEqual([`orderid: "${other.orderid}" is already used by order "${other._id}"`]);
    expect((await write(s, 'orders', { ...order(), orderid: other.orderid }, { id: other._id })).status).toBe(200);
  });
});

describe('handleWrite: ids deployed peers cannot put in a URL, and control characters', () => {
  it('a write whose id holds # ? / % or a space is stored, with a warning naming the characters', async () => {
    const s = setup();
    const res = await write(s, 'orders', order(), { id: 'shop/#1 %' });
    expect(res.status).toBe(200);
    expect(warningsOf(res)).toEqual(['_id: "shop/#1 %" holds "/", "#", a space and "%", which deployed peers put into URLs unencoded; prefer ids without # ? / % or spaces']);
  });

  /** An adapter that fails like PostgreSQL on a NUL (invalid byte sequence), on any lookup. */
  function nulIntolerant(): Setup {
    const s = setup();
    const check = (v: string) => {
      if (/[\u0000-\u001f]/.test(v)) throw new Error('invalid byte sequence for encoding "UTF8": 0x00');
    };
    const products = s.spy.products;
    const wrapped = Object.assign(s.spy, {
      productBySku: async (sku: string) => (check(sku), s.spy.memory.productBySku(sku)),
    });
    Object.assign(wrapped, { products: { ...products, get: async (id: string, o: { signal: AbortSignal }) => (check(id), products.get(id, o)) } });
    return { ...s, adapter: guardAdapter(wrapped) };
  }

  it.each([
    ['a sku', 'products', { ...product(), sku: 'SKU\u0000X' }, 'sku: must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)'],
    ['an order item id', 'orders', { ...order(), orderItems: [{ id: 'SKU\u0000X', quantity: 1 }] }, 'orderItems.0.id: must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)'],
    ['a body _id (no id parameter)', 'products', { ...product(), _id: 'p\u0000' }, '_id: must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)'],
  ] as const)('%s with a NUL is a reason, and no adapter is asked about it', async (_name, entity, body, reason) => {
    const s = nulIntolerant();
    s.spy.blockWrites = true;
    const query = '_id' in body ? { jobid: '1' } : { jobid: '1', id: entity === 'orders' ? ORDER_ID : PRODUCT_ID };
    const res = await handleWrite(s.adapter, entity, query, body, s.config, signal);
    expect(reasonsOf(res)).toEqual([reason]);
  });
});

describe('handleWrite: the body', () => {
  it.each([
    ['null', null, 'null'],
    ['an array', [order()], 'an array'],
    ['a string', 'order', 'string'],
    ['a number', 5, 'number'],
  ])('%s → failure', async (_name, body, got) => {
    const s = setup();
    await expectRefused(s, 'orders', body, [`body: must be a JSON object (the complete order), got ${got}`]);
  });

  it('a body nested millions of levels deep → failure, not a crash', async () => {
    const s = setup();
    const n = 1_000_000;
    const deep = JSON.parse(`{"orderItems":${'['.repeat(n)}${']'.repeat(n)}}`);
    await expectRefused(s, 'orders', deep, ['body: nested more than 64 levels deep']);
    let ok: unknown = {};
    for (let i = 0; i < 62; i++) ok = { x: ok };
    s.spy.blockWrites = false;
    const res = await write(s, 'orders', { ...order(), note: ok });
    expect(res.status).toBe(200);
  });

  it('a body _id that disagrees with id → failure', async () => {
    const s = setup();
    const res = await expectRefused(s, 'orders', { ...order(), _id: 'other' }, ['_id: "other" does not match the id query parameter "ord-new-1"']);
    expect((res.body as { error: string }).error).toBe('order not stored: _id: "other" does not match the id query parameter "ord-new-1"');
  });

  it('a non-string body _id disagrees with id', async () => {
    const s = setup();
    await expectRefused(s, 'orders', { ...order(), _id: 7 }, ['_id: 7 does not match the id query parameter "ord-new-1"']);
  });

  it.each([
    ['__proto__ at the top', '{"__proto__": {"polluted": true}, "status": "paid"}', '__proto__'],
    ['constructor in an item', '{"orderItems": [{"id": "SKU-000001", "quantity": 1, "constructor": {"prototype": {}}}]}', 'orderItems.0.constructor'],
    ['prototype in the buyer', '{"buyer": {"prototype": 1}}', 'buyer.prototype'],
  ])('forbidden key (%s) → failure naming its path', async (_name, json, path) => {
    const s = setup();
    await expectRefused(s, 'orders', JSON.parse(json), [`${path}: this key name is not allowed`]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('type errors become one reason each, with the field path', async () => {
    const s = setup();
    const body = {
      ...order(),
      rating: 7,
      total: { amount: '25', currency: 'USD' },
      orderItems: [{ id: p0.sku, quantity: 1.5 }, 'x', { id: p0.sku, quantity: '2' }],
      buyer: { billingaddress: { city: 5 }, email: true },
      messages: 'none',
    };
    await expectRefused(s, 'orders', body, [
      'total.amount: must be a number, got a string ("25")',
      'orderItems.0.quantity: must be an integer, got a number (1.5)',
      'orderItems.1: must be an object, got a string ("x")',
      'orderItems.2.quantity: must be a number, got a string ("2")',
      'buyer.email: must be a string, got a boolean (true)',
      'buyer.billingaddress.city: must be a string, got an integer (5)',
      'rating: must be at most 5, got 7',
      'messages: must be an array, got a string ("none")',
    ]);
  });

  it('a body last_updated is ignored: the store sets it', async () => {
    const s = setup();
    const res = await write(s, 'orders', { ...order(), last_updated: 5 });
    expect((res.body as { order: Order }).order.last_updated).toBe(NOW);
  });

  it('unknown fields are stripped and reported as warnings', async () => {
    const s = setup();
    const body = { ...order(), coupon: 'X', buyer: { ...order().buyer, vip: true } } as Record<string, unknown>;
    (body.orderItems as Record<string, unknown>[])[0].gift = true;
    const res = await write(s, 'orders', body);
    expect(res.status).toBe(200);
    expect(warningsOf(res)).toEqual(['orderItems.0.gift: unknown field, ignored', 'buyer.vip: unknown field, ignored', 'coupon: unknown field, ignored']);
    expect(await s.adapter.orders.get(ORDER_ID, { signal })).toEqual({ ...order(), _id: ORDER_ID, last_updated: NOW });
  });

  it('messages stay short when a hostile body has huge keys or values', async () => {
    const s = setup();
    const res = await write(s, 'orders', { ...order(), ['k'.repeat(100_000)]: 1, status: 's'.repeat(100_000) });
    const all = [...reasonsOf(res), ...warningsOf(res), (res.body as { error: string }).error];
    expect(all).toHaveLength(3);
    for (const msg of all) expect(msg.length).toBeLessThanOrEqual(520);
    expect(warningsOf(res)[0]).toMatch(/^k+…$/);
  });

  it('unknown fields are still warned about when the write is refused', async () => {
    const s = setup();
    const res = await expectRefused(s, 'orders', { ...order(), status: 'bogus', coupon: 1 }, [
      'status: "bogus" is not an allowed order status (allowed: pending, paid, processing, shipped, delivered, cancelled, refunded)',
    ]);
    expect(warningsOf(res)).toEqual(['coupon: unknown field, ignored']);
  });
});

describe('handleWrite: built-in order reasons', () => {
  function withItems(items: unknown[]) {
    return { ...order(), total: undefined, orderItems: items };
  }

  it('blank SKU: missing, empty or whitespace item id', async () => {
    const s = setup();
    await expectRefused(s, 'orders', withItems([{ quantity: 1 }, { id: '', quantity: 1 }, { id: '  ', quantity: 1 }]), [
      'orderItems.0.id: SKU is missing',
      'orderItems.1.id: SKU is blank',
      'orderItems.2.id: SKU is blank',
    ]);
  });

  it('unknown SKU: an id that names no product by _id or sku', async () => {
    const s = setup();
    await expectRefused(s, 'orders', withItems([{ id: 'NOPE-1', quantity: 1 }, { id: p0.sku, quantity: 1 }, { id: 'x'.repeat(300), quantity: 1 }]), [
      'orderItems.0.id: no product has the _id or SKU "NOPE-1"',
      `orderItems.2.id: no product has the _id or SKU "${'x'.repeat(80)}…"`,
    ]);
  });

  it('zero, negative and missing quantity', async () => {
    const s = setup();
    await expectRefused(s, 'orders', withItems([{ id: p0.sku, quantity: 0 }, { id: p0.sku, quantity: -2 }, { id: p0.sku }]), [
      'orderItems.0.quantity: must be greater than 0, got 0',
      'orderItems.1.quantity: must be greater than 0, got -2',
      'orderItems.2.quantity: is missing',
    ]);
  });

  it('status outside the allowed set', async () => {
    const s = setup();
    s.config.allowedOrderStatuses = new Set(['pending', 'paid']);
    await expectRefused(s, 'orders', { ...order(), status: 'shipped' }, ['status: "shipped" is not an allowed order status (allowed: pending, paid)']);
    await expectRefused(s, 'orders', { ...order(), status: 'Paid' }, ['status: "Paid" is not an allowed order status (allowed: pending, paid)']);
    s.config.allowedOrderStatuses = new Set();
    await expectRefused(s, 'orders', order(), ['status: "paid" is not an allowed order status (this store accepts no status)']);
  });

  it('unknown SKU on an adapter without SKU lookup says that only _id resolves', async () => {
    const memory = createMemoryAdapter(structuredClone(catalog));
    const s = setup();
    s.adapter = guardAdapter({ products: memory.products, orders: memory.orders });
    const res = await write(s, 'orders', order());
    expect(reasonsOf(res)).toEqual([`orderItems.0.id: no product has the _id "${p0.sku}" (this store's adapter cannot look products up by SKU)`]);
    expect(await memory.orders.get(ORDER_ID)).toBeUndefined();
  });

  it('every reason is collected, not just the first', async () => {
    const s = setup();
    const body = { ...withItems([{ quantity: 0 }, { id: 'NOPE', quantity: 1 }]), status: 'bogus', rating: -1 };
    const res = await expectRefused(s, 'orders', body, [
      'rating: must be at least 0, got -1',
      'orderItems.0.id: SKU is missing',
      'orderItems.0.quantity: must be greater than 0, got 0',
      'orderItems.1.id: no product has the _id or SKU "NOPE"',
      'status: "bogus" is not an allowed order status (allowed: pending, paid, processing, shipped, delivered, cancelled, refunded)',
    ]);
    expect((res.body as { error: string }).error).toBe('order not stored: rating: must be at least 0, got -1 (and 4 more)');
  });

  it('a very long list of reasons is capped at 100 with a summary', async () => {
    const s = setup();
    const res = await expectRefused(
      s,
      'orders',
      withItems(Array.from({ length: 150 }, () => ({ id: p0.sku, quantity: 0 }))),
      [...Array.from({ length: 99 }, (_, i) => `orderItems.${i}.quantity: must be greater than 0, got 0`), '… and 51 more'],
    );
    expect((res.body as { error: string }).error).toMatch(/\(and 149 more\)$/);
  });

  it("the adapter's own reasons surface, after the built-in checks pass", async () => {
    const s = setup();
    s.spy.partners = new Set(['buyer-2']);
    await expectRefused(s, 'orders', order(), ['invalid business partner "buyer-1"']);
    expect(s.spy.checkOrderCalls).toBe(1);
    s.spy.blockWrites = false;
    expect((await write(s, 'orders', { ...order(), buyer: { id: 'buyer-2' } })).status).toBe(200);
  });

  it('the adapter check is not asked when a built-in reason already refuses the write', async () => {
    const s = setup();
    s.spy.partners = new Set();
    await expectRefused(s, 'orders', { ...order(), status: 'bogus' }, [expect.stringMatching(/^status: /) as unknown as string]);
    expect(s.spy.checkOrderCalls).toBe(0);
  });
});

describe('handleWrite: order warnings', () => {
  async function warnings(s: Setup, body: unknown): Promise<string[]> {
    const res = await write(s, 'orders', body);
    expect(res.status).toBe(200);
    return warningsOf(res);
  }

  it('total.amount not equal to the sum of the items', async () => {
    const s = setup();
    expect(await warnings(s, { ...order(), total: { amount: 30, currency: 'USD' } })).toEqual([
      'total.amount: 30 differs from the sum of quantity × unitPrice over the items, 25',
    ]);
  });

  it('no total warning when sums agree to the cent, or when an item has no price', async () => {
    const s = setup();
    const items = [{ id: p0.sku!, quantity: 3, unitPrice: 0.1, currencyId: 'USD' }];
    expect(await warnings(s, { ...order(), orderItems: items, total: { amount: 0.3, currency: 'USD' } })).toEqual([]);
    expect(await warnings(s, { ...order(), orderItems: [{ id: p0.sku!, quantity: 3 }], total: { amount: 99, currency: 'USD' } })).toEqual([]);
  });

  it('an item currency that differs from the total currency', async () => {
    const s = setup();
    const body = order();
    body.orderItems![1].currencyId = 'EUR';
    expect(await warnings(s, body)).toEqual(['orderItems.1.currencyId: "EUR" differs from total.currency "USD"']);
  });

  it('currency codes that are not ISO 4217 shaped', async () => {
    const s = setup();
    const body = order();
    body.total!.currency = 'usd';
    body.orderItems!.forEach((it) => (it.currencyId = 'usd'));
    expect(await warnings(s, body)).toEqual([
      'total.currency: "usd" is not an ISO 4217 currency code (three capital letters)',
      'orderItems.0.currencyId: "usd" is not an ISO 4217 currency code (three capital letters)',
      'orderItems.1.currencyId: "usd" is not an ISO 4217 currency code (three capital letters)',
    ]);
  });

  it('an uncommon status, when any status is allowed', async () => {
    const s = setup();
    s.config.allowedOrderStatuses = null;
    expect(await warnings(s, { ...order(), status: 'on-hold' })).toEqual([
      'status: "on-hold" is not one of the common order statuses (pending, paid, processing, shipped, delivered, cancelled, refunded)',
    ]);
    expect(await warnings(s, { ...order(), status: 'paid' })).toEqual([]);
  });

  it('an uncommon shipment status', async () => {
    const s = setup();
    expect(await warnings(s, { ...order(), shipments: [{ id: 's', shipstatus: 'shipping' }, { id: 't', shipstatus: 'teleported' }] })).toEqual([
      'shipments.1.shipstatus: "teleported" is not one of the common shipment statuses (pending, shipping, delivered, returned, lost)',
    ]);
  });

  it('dates that are not ISO 8601 (an empty string means unavailable and is fine)', async () => {
    const s = setup();
    const ok = ['', '2026-01-31', '2026-01-02T03:04:05.123Z', '2026-01-02T03:04+05', '2026-01-02 03:04:05+05:30', '0050-06-01'];
    for (const date of ok) expect(await warnings(s, { ...order(), dateCreated: date, dateClosed: date })).toEqual([]);
    expect(await warnings(s, { ...order(), dateCreated: '31/01/2026', dateClosed: '2026-02-30' })).toEqual([
      'dateCreated: "31/01/2026" is not an ISO 8601 date',
      'dateClosed: "2026-02-30" is not an ISO 8601 date',
    ]);
    expect(await warnings(s, { ...order(), dateCreated: '2026-01-02T24:00Z' })).toEqual(['dateCreated: "2026-01-02T24:00Z" is not an ISO 8601 date']);
  });

  it('a variation_id the product does not have', async () => {
    const s = setup();
    const body = order();
    body.orderItems![0].variation_id = 'nope';
    expect(await warnings(s, body)).toEqual([`orderItems.0.variation_id: product "${p0._id}" has no variation "nope"`]);
  });
});

describe('handleWrite: products', () => {
  it('stores a valid product and answers it', async () => {
    const s = setup();
    const res = await write(s, 'products', product());
    const stored = await s.adapter.products.get(PRODUCT_ID, { signal });
    expect(res).toEqual({ status: 200, body: { success: true, code: 200, warnings: [], product: stored } });
    expect(stored).toEqual({ ...product(), _id: PRODUCT_ID, last_updated: NOW });
    // Order items can name it by SKU right away.
    const o = { ...order(), total: undefined, orderItems: [{ id: 'SKU-NEW-1', quantity: 1 }] };
    expect((await write(s, 'orders', o)).status).toBe(200);
  });

  it('rewriting every demo product as is succeeds (warned only about repeated price tiers)', async () => {
    const s = setup();
    for (const p of catalog.products) {
      const res = await write(s, 'products', p, { id: p._id });
      // The demo generator sometimes adds a second `default` USD tier to a USD product: ambiguous, so warned.
      const other = warningsOf(res).filter((w) => !/^variations\.\d+\.prices\.\d+: repeats tag "default" in "USD"/.test(w));
      expect({ id: p._id, status: res.status, warnings: other }).toEqual({ id: p._id, status: 200, warnings: [] });
    }
  });

  it('a SKU already used by another product → failure', async () => {
    const s = setup();
    await expectRefused(s, 'products', { ...product(), sku: p0.sku }, [`sku: "${p0.sku}" is already used by product "${p0._id}"`]);
  });

  it('a negative price and a duplicate variationid → failure, all reported', async () => {
    const s = setup();
    const body = product();
    body.variations = [
      { variationid: 'v1', prices: [{ tag: 'default', currency: 'EUR', number: -1 }] },
      { variationid: 'v2' },
      { variationid: 'v1', prices: [{ tag: 'default', currency: 'EUR', number: 0 }] },
    ];
    await expectRefused(s, 'products', body, [
      'variations.0.prices.0.number: must not be negative, got -1',
      'variations.2.variationid: "v1" is already used by variations.0',
    ]);
  });

  it('a body _id that disagrees, type errors and forbidden keys refuse product writes too', async () => {
    const s = setup();
    await expectRefused(s, 'products', { ...product(), _id: 'x', title: 3 }, [
      '_id: "x" does not match the id query parameter "prod-new-1"',
      'title: must be a string, got an integer (3)',
    ]);
    await expectRefused(s, 'products', JSON.parse('{"properties":[{"extraattributes":{"__proto__":"x"}}]}'), [
      'properties.0.extraattributes.__proto__: this key name is not allowed',
    ]);
  });

  it("the adapter's own product reasons surface", async () => {
    const s = setup();
    s.spy.productReasons = ['brand "Acme" is not licensed', 'title too long for the shop'];
    const res = await expectRefused(s, 'products', product(), ['brand "Acme" is not licensed', 'title too long for the shop']);
    expect((res.body as { error: string }).error).toBe('product not stored: brand "Acme" is not licensed (and 1 more)');
  });

  it('warnings: negative stock, repeated price tier, non-ISO currency, unknown field', async () => {
    const s = setup();
    const body = { ...product(), colour: 'blue' } as Record<string, unknown>;
    body.variations = [
      {
        variationid: 'v1',
        availabilities: [{ tag: 'default', quantity: -2 }],
        prices: [
          { tag: 'default', currency: 'EUR', number: 5 },
          { tag: 'default', currency: 'EUR', number: 6 },
          { tag: 'default', currency: '€', number: 6 },
        ],
      },
    ];
    const res = await write(s, 'products', body);
    expect(res.status).toBe(200);
    expect(warningsOf(res)).toEqual([
      'colour: unknown field, ignored',
      'variations.0.prices.1: repeats tag "default" in "EUR" of variations.0.prices.0',
      'variations.0.prices.2.currency: "€" is not an ISO 4217 currency code (three capital letters)',
      'variations.0.availabilities.0.quantity: negative stock (-2)',
    ]);
  });

  it('warnings: a SKU that is another product\'s _id, an _id that is another product\'s SKU', async () => {
    const s = setup();
    let res = await write(s, 'products', { ...product(), sku: p1._id });
    expect(warningsOf(res)).toEqual([`sku: "${p1._id}" is also the _id of product "${p1._id}"; order items naming it resolve to that product`]);
    res = await write(s, 'products', { ...product(), sku: undefined }, { id: p1.sku });
    expect(warningsOf(res)).toEqual([`_id: "${p1.sku}" is also the SKU of product "${p1._id}"; order items naming it now resolve to this product`]);
  });
});

describe('handleWrite: last_updated and repeated writes', () => {
  it('a repeated identical write stores nothing and answers the same result', async () => {
    const s = setup();
    const body = { ...order(), coupon: 'X', total: { amount: 1, currency: 'USD' } };
    const first = await write(s, 'orders', body);
    s.config.clock = NOW + 60_000;
    const again = await write(s, 'orders', structuredClone(body));
    expect(again).toEqual(first);
    expect(warningsOf(first)).toHaveLength(2);
    expect((await s.adapter.orders.get(ORDER_ID, { signal }))!.last_updated).toBe(NOW);
  });

  it('a repeated refused write answers the same failure', async () => {
    const s = setup();
    const body = { ...order(), status: 'bogus', coupon: 1 };
    expect(await write(s, 'orders', body)).toEqual(await write(s, 'orders', body));
  });

  it('a change sets last_updated to now', async () => {
    const s = setup();
    await write(s, 'orders', order());
    s.config.clock = NOW + 5_000;
    const res = await write(s, 'orders', { ...order(), status: 'shipped' });
    expect((res.body as { order: Order }).order).toMatchObject({ status: 'shipped', last_updated: NOW + 5_000 });
  });

  it('last_updated is monotonic per item even when the clock goes backwards', async () => {
    const s = setup();
    await write(s, 'products', product());
    s.config.clock = NOW - 1_000_000;
    const res = await write(s, 'products', { ...product(), title: 'Red Mug' });
    expect((res.body as { product: Product }).product.last_updated).toBe(NOW + 1);
  });

  it('concurrent identical writes (a retry storm) all answer the same result and write once', async () => {
    const s = setup();
    const results = await Promise.all(Array.from({ length: 20 }, () => write(s, 'orders', order())));
    for (const r of results) expect(r).toEqual(results[0]);
    expect(results[0].status).toBe(200);
    expect(await s.adapter.orders.get(ORDER_ID, { signal })).toEqual((results[0].body as { order: Order }).order);
  });

  it('concurrent writes of different bodies to one order leave exactly one of them', async () => {
    const s = setup();
    const bodies = Array.from({ length: 40 }, (_, i) => ({ ...order(), orderid: `#${i}`, status: ORDER_STATUSES[i % 7] }));
    const results = await Promise.all(bodies.map((b) => write(s, 'orders', b)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const stored = await s.adapter.orders.get(ORDER_ID, { signal });
    const { last_updated, ...content } = stored!;
    expect(last_updated).toBeGreaterThanOrEqual(NOW);
    expect(bodies.map((b) => ({ ...b, _id: ORDER_ID }))).toContainEqual(content);
    expect(await s.adapter.orders.count({ signal })).toBe(catalog.orders.length + 1);
    const page = await s.adapter.orders.list({ sortorder: 'asc', limit: 1000, signal });
    expect(page.filter((x) => x._id === ORDER_ID)).toHaveLength(1);
  });
});

describe('handleWrite: adapter failures are thrown, not answered', () => {
  it('an upsert that throws rejects with AdapterError', async () => {
    const s = setup();
    s.spy.blockWrites = true;
    await expect(write(s, 'orders', order())).rejects.toBeInstanceOf(AdapterError);
  });

  it('a checkOrder that throws rejects with AdapterError', async () => {
    const s = setup();
    s.spy.checkOrder = async () => {
      throw new Error('partner service down');
    };
    await expect(write(s, 'orders', order())).rejects.toBeInstanceOf(AdapterError);
    expect(s.spy.upserts).toBe(0);
  });

  it('a product lookup that throws during SKU resolution rejects with AdapterError', async () => {
    const s = setup();
    s.spy.productBySku = async () => {
      throw new Error('index offline');
    };
    await expect(write(s, 'orders', order())).rejects.toBeInstanceOf(AdapterError);
    expect(s.spy.upserts).toBe(0);
  });

  it('a check that returns something other than strings rejects with AdapterContractError', async () => {
    const s = setup();
    s.spy.checkOrder = async () => [42] as unknown as string[];
    await expect(write(s, 'orders', order())).rejects.toBeInstanceOf(AdapterContractError);
  });

  it('a deadline that passes during the checks rejects instead of writing', async () => {
    const s = setup();
    const controller = new AbortController();
    s.spy.checkOrder = async () => {
      controller.abort(new Error('time budget spent'));
      return [];
    };
    await expect(handleWrite(s.adapter, 'orders', { jobid: '1', id: ORDER_ID }, order(), s.config, controller.signal)).rejects.toThrow('time budget spent');
    expect(s.spy.upserts).toBe(0);
  });

  it('an aborted signal rejects instead of writing', async () => {
    const s = setup();
    const aborted = AbortSignal.abort(new Error('deadline'));
    await expect(handleWrite(s.adapter, 'orders', { jobid: '1', id: ORDER_ID }, order(), s.config, aborted)).rejects.toThrow('deadline');
    expect(s.spy.upserts).toBe(0);
  });
});

describe('handleWrite: property', () => {
  const known = [p0.sku!, p0._id, p1.sku!, p1._id];
  const itemArb = fc.record(
    {
      id: fc.oneof(fc.constantFrom(...known), fc.constantFrom('', ' ', 'NOPE'), fc.string({ maxLength: 4 })),
      quantity: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constant('2' as unknown as number), fc.double({ min: 0.1, max: 3, noNaN: true })),
      unitPrice: fc.double({ min: 0, max: 100, noNaN: true }),
      currencyId: fc.constantFrom('USD', 'EUR', 'usd'),
    },
    { requiredKeys: [] },
  );
  const orderArb = fc.record(
    {
      _id: fc.constantFrom(ORDER_ID, 'other'),
      status: fc.constantFrom(...ORDER_STATUSES, 'bogus'),
      orderItems: fc.array(itemArb, { maxLength: 4 }),
      total: fc.record({ amount: fc.double({ min: 0, max: 500, noNaN: true }), currency: fc.constantFrom('USD', 'EUR') }),
      rating: fc.double({ min: -1, max: 6, noNaN: true }),
      // null removes the member from the stored order; '' stores an empty one.
      feedback: fc.constantFrom(null, '', 'fine'),
      extra: fc.string(),
    },
    { requiredKeys: [] },
  );

  /** An independent oracle of validity for these generated bodies. */
  function expectedValid(b: Record<string, unknown>): boolean {
    if (b._id !== undefined && b._id !== ORDER_ID) return false;
    if (b.status === 'bogus') return false;
    if (typeof b.rating === 'number' && (b.rating < 0 || b.rating > 5)) return false;
    return ((b.orderItems as Record<string, unknown>[] | undefined) ?? []).every(
      (it) => typeof it.id === 'string' && known.includes(it.id) && Number.isInteger(it.quantity) && (it.quantity as number) > 0,
    );
  }

  it('random order bodies: success stores the body over what was stored (members left out kept, null ones removed) and answers what get returns; failure leaves the store unchanged', async () => {
    const s = setup();
    let tick = 0;
    await fc.assert(
      fc.asyncProperty(orderArb, async (body) => {
        s.config.clock = NOW + tick++;
        const before = await s.adapter.orders.get(ORDER_ID, { signal });
        const upsertsBefore = s.spy.upserts;
        const res = await write(s, 'orders', body);
        const after = await s.adapter.orders.get(ORDER_ID, { signal });
        expect(res.status === 200).toBe(expectedValid(body));
        if (res.status === 200) {
          expect((res.body as { order: Order }).order).toEqual(after);
          const { extra, ...content } = body as Record<string, unknown>;
          void extra;
          const removed = Object.keys(content).filter((k) => content[k] === null);
          const sent = { ...Object.fromEntries(Object.entries(content).filter(([, v]) => v !== null)), _id: ORDER_ID } as Order;
          expect({ ...after, last_updated: undefined }).toEqual({ ...(before ? mergeMembers(before, sent, removed) : sent), last_updated: undefined });
          const kept = Object.keys(before ?? {}).filter((k) => !(k in sent) && !removed.includes(k) && k !== 'last_updated');
          const keptWarning = warningsOf(res).find((w) => w.startsWith('body: members the body leaves out were kept'));
          expect(keptWarning).toEqual(kept.length > 0 ? expect.stringContaining(`stored order: ${kept.join(', ')} (`) : undefined);
        } else {
          expect(res.status).toBe(400);
          expect(reasonsOf(res).length).toBeGreaterThan(0);
          expect(after).toEqual(before);
          expect(s.spy.upserts).toBe(upsertsBefore);
        }
      }),
      { numRuns: 300 },
    );
  });
});
