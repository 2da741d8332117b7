/**
 * `storebridge daemon --dialect click2sync --once --json` (the real CLI) against the emulated
 * deployed service (reverse-service-emulator.ts): numeric items, a `tmp-` order with no `_id`, one
 * poison product, replies with no `ok`/`received`, `upstreamstatus` under that member only, an HTML
 * `GET /`, an unknown `hasmore` end value; then an incremental push from `cursoroffset`. Every item
 * must be accounted for (stored or failed) and the run must end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guardAdapter } from '../../lib/adapter-guard';
import { openAdapter } from '../../lib/cli/adapter-spec';
import { demoCatalog } from '../../lib/demo';
import { runCli } from '../cli/cli-process';
import { ensureBuilt } from './peer-cli';
import { ReverseServiceEmulator } from './reverse-service-emulator';

const KEY = 'K7Q2M9X4ZP1A8C3V6B0N5L2J9H4G7F1D';
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'storebridge-svc-emulator-'));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1517360038797;
/** Products as the deployed service hands them out: numbers for quantities and prices, epoch-ms `last_updated`. */
const products = [1, 2, 3, 4, 5].map((i) => ({
  _id: `c2s-p${i}`,
  sku: `SKU ${i}`.replace(' ', '-'),
  title: `Item ${i}`,
  last_updated: T0 + i,
  variations: [{ availabilities: [{ tag: 'default', quantity: 10 * i }], prices: [{ tag: 'default', currency: 'MXN', number: 99.5 + i }], images: [], videos: [] }],
}));
/** One product the store cannot read: a price that is not a number. */
const poison = { _id: 'c2s-bad', sku: 'SKU-BAD', title: 'Broken', variations: [{ prices: [{ tag: 'default', currency: 'MXN', number: 'cheap' }] }] };
/** A new order (no `_id`, a `tmp-` orderid) as SAI's embedded example has it, and one the store knows. */
const tmpOrder = {
  orderid: 'tmp-5c3a1b2d4e6f708192a3b4c5',
  otherids: [{ connectionid: 'c1', id: '2000001234', connectiontype: 'mercadolibre' }],
  status: 'paid',
  dateCreated: T0,
  dateClosed: T0 + 60_000,
  total: { amount: 450, currency: 'MXN' },
  orderItems: [{ id: 'SKU-1', variation_id: '', quantity: 1, unitPrice: 450, currencyId: 'MXN' }],
  buyer: { id: 223369408, email: 'b@example.com', phone: '', firstName: 'Ana', lastName: 'Ruiz', billingaddress: { addressline: 'Calle 1', zipcode: '01000', city: 'CDMX', state: 'CDMX', country: 'MX' } },
};
const knownOrder = { _id: 'c2s-o2', orderid: '900002', status: 'shipped', dateCreated: T0, dateClosed: 0, last_updated: T0 + 9, total: { amount: '99.5', currency: 'MXN' }, orderItems: [{ id: 'SKU-2', quantity: 2, unitPrice: 49.75 }], buyer: { id: 42 } };

test('daemon --dialect click2sync --once against the deployed service: every item stored or failed, acks by sku/orderid, an incremental push', async () => {
  const db = join(dir, 'store.db');
  const catalog = demoCatalog(6);
  const seeded = guardAdapter(await openAdapter(`sqlite:${db}`));
  await seeded.entity('products').upsertMany(catalog.products, { lastUpdated: 'keep', now: 0, signal: AbortSignal.timeout(5000) });
  await seeded.entity('orders').upsertMany(catalog.orders, { lastUpdated: 'keep', now: 0, signal: AbortSignal.timeout(5000) });
  await seeded.close();

  const service = new ReverseServiceEmulator(KEY, { products: [products[0], products[1], poison, ...products.slice(2)], orders: [tmpOrder, knownOrder] });
  service.enqueue('pull');
  service.enqueue('push');
  const url = await service.listen();
  const args = ['daemon', '--service', url, '--connection', KEY, '--adapter', `sqlite:${db}`, '--dialect', 'click2sync', '--once', '--json', '--poll-ms', '5'];
  try {
    const started = Date.now();
    const first = await runCli(args);
    const elapsed = Date.now() - started;
    const firstCalls = service.calls.length;
    expect(first.code).toBe(0);
    const total = { products: catalog.products.length + 5, orders: catalog.orders.length + 2 };
    expect(JSON.parse(first.stdout.trim().split('\n').pop()!)).toEqual({ ok: true, pulled: { products: 5, orders: 2 }, failed: 1, failedByEntity: { products: 1, orders: 0 }, pushed: total });
    expect(service.idle).toBe(true);
    // Acknowledgements: by sku / orderid, the poison product reported with its reasons, the tmp- order with the store's new id.
    expect(service.acks.map((a) => `${a.entity} ${a.pathId} ${a.outcome}`)).toEqual([
      'products SKU-1 succeded',
      'products SKU-2 succeded',
      'products SKU-BAD failed',
      'products SKU-3 succeded',
      'products SKU-4 succeded',
      'products SKU-5 succeded',
      `orders ${tmpOrder.orderid} succeded`,
      'orders 900002 succeded',
    ]);
    const failed = service.acks[2].body as { error: string; reasons: Array<{ message: string; code: number }> };
    expect(failed).toEqual({ error: expect.any(String), reasons: [{ message: expect.stringMatching(/prices\.0\.number/), code: 1003 }] });
    const inserted = (service.acks[6].body.order as Record<string, unknown>);
    expect(inserted._id).toMatch(/^order-[0-9a-f]{24}$/);
    expect(inserted).toMatchObject({ orderid: tmpOrder.orderid, dateCreated: T0, buyer: { id: 223369408 }, orderItems: [{ quantity: 1, unitPrice: 450 }] });
    // It came without last_updated: stamped when stored (as an insert in the store is), not 0, and pushed with that stamp.
    expect(inserted.last_updated).toBeGreaterThanOrEqual(started);
    expect(inserted.last_updated).toBeLessThanOrEqual(started + elapsed);
    expect(service.received.orders.find((o) => o._id === inserted._id)?.last_updated).toBe(inserted.last_updated);
    // The known order kept the service's last_updated.
    expect((service.acks[7].body.order as Record<string, unknown>).last_updated).toBe(T0 + 9);
    // The push: the store's whole catalog (pulled items included), items in the deployed encoding.
    expect(service.received.products).toHaveLength(total.products);
    expect(service.received.orders).toHaveLength(total.orders);
    const pushedProduct = service.received.products.find((p) => p._id === 'c2s-p3')!;
    expect(pushedProduct).toMatchObject({ last_updated: T0 + 3, variations: [{ availabilities: [{ quantity: 30 }], prices: [{ number: 102.5 }] }] });
    expect(service.calls[0]).toBe('GET /');

    // An incremental push: two items changed since the cursor.
    const store = guardAdapter(await openAdapter(`sqlite:${db}`));
    const newest = Math.max(...service.received.products.map((p) => p.last_updated as number), ...service.received.orders.map((o) => o.last_updated as number));
    const changed = { ...catalog.products[2], title: 'Changed', last_updated: newest + 1000 };
    await store.entity('products').upsert(changed, { lastUpdated: 'keep', now: 0, signal: AbortSignal.timeout(5000) });
    await store.entity('orders').upsert({ ...catalog.orders[0], status: 'cancelled', last_updated: newest + 2000 }, { lastUpdated: 'keep', now: 0, signal: AbortSignal.timeout(5000) });
    await store.close();
    service.enqueue('push');
    const second = await runCli(args);
    expect(JSON.parse(second.stdout.trim().split('\n').pop()!)).toMatchObject({ ok: true, pushed: { products: 1, orders: 1 } });
    expect(service.pushes.at(-1)).toEqual({ kind: 'push', products: [1], orders: [1] });
    console.log(`service emulator: the first run (7 items pulled, ${total.products + total.orders} pushed) made ${firstCalls} calls in ${elapsed} ms (process start included); the incremental one ${service.calls.length - firstCalls}`);
  } finally {
    await service.close();
  }
}, 60_000);
