/**
 * The deployed Click2Sync service (emulated from the facts, `deployed-service.ts`) calling a
 * storebridge store: the store router on memory and on SQLite, full and ids-only listings, then
 * the real `storebridge serve` once. Every item must arrive exactly, creates must work without an
 * id, and the emulator must have sent only what the deployed service sends (C2SKey, no jobid).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlAdapter } from '../../adapters/sql';
import { createMemoryAdapter } from '../../adapters/memory';
import type { StoreAdapter } from '../../lib/adapter';
import { guardAdapter } from '../../lib/adapter-guard';
import { demoCatalog, seedDemo } from '../../lib/demo';
import type { Listing } from '../../lib/server';
import { ROOT, spawnCli } from '../cli/cli-process';
import { KEY, startStore } from '../server/helpers';
import { DeployedServiceEmulator, type Entity, type Item } from './deployed-service';

const N = 83;
const signal = new AbortController().signal;

/** Every item the adapter holds, by `_id`. */
async function everything(adapter: StoreAdapter, entity: Entity): Promise<Map<string, Item>> {
  const store = guardAdapter(adapter).entity(entity);
  const items = await store.list({ sortorder: 'asc', limit: 100_000, signal });
  return new Map(items.map((x) => [x._id, x.doc as Item]));
}

/** What the emulator sent is what the deployed service sends. */
function expectDeployedRequests(service: DeployedServiceEmulator): void {
  expect(service.sent.length).toBeGreaterThan(0);
  for (const r of service.sent) {
    expect(r.headerNames).toContain('c2skey');
    expect(r.headerNames).not.toContain('svckey');
    expect(new URL(r.url).searchParams.has('jobid')).toBe(false);
  }
  // Some list walks carried no sortorder at all (the older documented form).
  expect(service.sent.some((r) => r.method === 'GET' && new URL(r.url).searchParams.has('offset') && !new URL(r.url).searchParams.has('sortorder'))).toBe(true);
}

const fixtures: Array<[string, () => Promise<StoreAdapter>]> = [
  ['memory', async () => createMemoryAdapter(demoCatalog(N))],
  [
    'sqlite',
    async () => {
      const sql = await openSqlAdapter('sqlite::memory:');
      await seedDemo(sql, N);
      return sql;
    },
  ],
];

describe.each(fixtures)('the deployed service and a store on %s', (_name, make) => {
  describe.each(['full', 'stubs'] as Listing[])('listing %s', (listing) => {
    let adapter: StoreAdapter;
    let store: Awaited<ReturnType<typeof startStore>>;
    let service: DeployedServiceEmulator;
    beforeAll(async () => {
      adapter = await make();
      // The store owner's URLs carry a query of their own, as the PHP examples' do.
      store = await startStore({ adapter, listing, pageSize: 10 }, '/c2s');
      service = new DeployedServiceEmulator({ productsUrl: `${store.base}/products?entity=products`, ordersUrl: `${store.base}/orders?entity=orders`, key: KEY });
    });
    afterAll(() => store.close());

    it('grabs every product and order exactly, walking offset pages', async () => {
      for (const entity of ['products', 'orders'] as const) {
        const walk = await service.grab(entity);
        expect(service.held[entity]).toEqual(await everything(adapter, entity));
        expect(walk.pages).toBeGreaterThan(1);
        if (listing === 'stubs') expect(walk).toMatchObject({ stubs: service.held[entity].size, fetchedById: service.held[entity].size });
        else expect(walk).toMatchObject({ stubs: 0, fetchedById: 0 });
      }
      // Walked again without sortorder (the older request form): the same items, nothing new to fetch.
      const before = service.readsById.products;
      await service.grab('products');
      expect(service.held.products).toEqual(await everything(adapter, 'products'));
      expect(service.readsById.products).toBe(before);
    });

    it('reads one item on the list URL: the bare item, or nothing for an unknown id', async () => {
      const [id, item] = [...(await everything(adapter, 'orders'))][3];
      expect(await service.readById('orders', id)).toEqual(item);
      expect(await service.readById('products', 'no-such-product')).toBeUndefined();
      const answer = await service.call('GET', `${store.base}/products?entity=products&id=no-such-product`);
      expect(answer).toMatchObject({ status: 404, json: { error: 'no product with _id "no-such-product"' } });
    });

    it('creates a product and an order without an id; the store assigns ids it can put in a URL raw', async () => {
      const product = await service.create('products', { sku: `NEW-${listing}`, title: 'Created by the service', variations: [{ availabilities: [{ tag: 'default', quantity: 4 }], prices: [{ tag: 'default', currency: 'MXN', number: 99.5 }] }] });
      expect(product).toMatchObject({ success: true, id: expect.stringMatching(/^product-[0-9a-f-]{36}$/) });
      expect(product.id).not.toMatch(/[#?/% ]/);
      const order = await service.create('orders', { status: 'paid', orderItems: [{ id: `NEW-${listing}`, quantity: 2, unitPrice: 99.5, currencyId: 'MXN' }], total: { amount: 199, currency: 'MXN' } });
      expect(order).toMatchObject({ success: true, id: expect.stringMatching(/^order-/) });
      expect(await service.readById('products', product.id!)).toMatchObject({ _id: product.id, sku: `NEW-${listing}`, title: 'Created by the service' });
      expect(await service.readById('orders', order.id!)).toMatchObject({ _id: order.id, status: 'paid' });
    });

    it('updates by ?id=, and a later grab fetches only what changed', async () => {
      const [id, item] = [...(await everything(adapter, 'products'))][10];
      const updated = await service.update('products', id, { ...item, title: 'Renamed by the service', last_updated: undefined });
      expect(updated).toMatchObject({ success: true, id });
      const before = service.readsById.products;
      await service.grab('products');
      expect(service.held.products.get(id)).toMatchObject({ title: 'Renamed by the service' });
      expect(service.held.products).toEqual(await everything(adapter, 'products'));
      // Stubs: only the renamed product and the one created above are read again.
      expect(service.readsById.products - before).toBe(listing === 'stubs' ? 2 : 0);
    });

    it('reads a refused write from its body: success false, reasons with message; nothing stored', async () => {
      const count = (await everything(adapter, 'orders')).size;
      const refused = await service.create('orders', { status: 'paid', orderItems: [{ id: 'NO-SUCH-SKU', quantity: 1 }] });
      expect(refused.success).toBe(false);
      expect(refused.messages).toEqual(['orderItems.0.id: no product has the _id or SKU "NO-SUCH-SKU"']);
      expect((await everything(adapter, 'orders')).size).toBe(count);
    });

    it('sent only what the deployed service sends', () => expectDeployedRequests(service));
  });
});

describe('the deployed service and the real `storebridge serve --listing stubs` on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-peer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('grabs everything through stubs and ?id=, creates without an id', async () => {
    expect(existsSync(join(ROOT, 'dist', 'lib', 'cli', 'commands', 'serve.js'))).toBe(true);
    const cli = spawnCli(['serve', '--port', '0', '--demo', '40', '--adapter', `sqlite:${join(dir, 'store.db')}`, '--listing', 'stubs'], { STOREBRIDGE_KEY: KEY });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const m = /^listening on (\S+)$/m.exec(cli.stdout());
          if (m) {
            clearInterval(timer);
            resolve(m[1]);
          }
        }, 20);
        void cli.exit.then((code) => (clearInterval(timer), reject(new Error(`serve exited ${code}: ${cli.stderr()}`))));
      });
      const service = new DeployedServiceEmulator({ productsUrl: `${url}/products`, ordersUrl: `${url}/orders`, key: KEY });
      const catalog = demoCatalog(40);
      expect(await service.grab('products')).toMatchObject({ stubs: 40, fetchedById: 40 });
      expect([...service.held.products.values()].sort((a, b) => String(a._id).localeCompare(String(b._id)))).toEqual(catalog.products);
      await service.grab('orders');
      expect(service.held.orders.size).toBe(catalog.orders.length);
      expect([...service.held.orders.values()].every((o) => !String(o.orderid).includes('#'))).toBe(true);
      const created = await service.create('products', { sku: 'CLI-NEW', title: 'from the service' });
      expect(created).toMatchObject({ success: true, id: expect.stringMatching(/^product-/) });
      expectDeployedRequests(service);
      expect(cli.stdout() + cli.stderr()).not.toContain(KEY);
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exit;
    }
  });
});
