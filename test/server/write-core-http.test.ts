/**
 * The write core behind the real store router, over loopback HTTP: what a sync service sees.
 * (The rules themselves are tested in write-core.test.ts; this proves the wiring end to end.)
 */
import express from 'express';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import type { StoreAdapter } from '../../lib/adapter';
import { OrderWriteSuccessSchema, ProductWriteSuccessSchema, WriteFailureSchema, type Order } from '../../lib/contract';
import { createStoreRouter } from '../../lib/server';
import { KEY, listen } from './helpers';

const catalog = demoCatalog(20);
let clock = 1_800_000_000_000;

async function serve(adapter: StoreAdapter) {
  const app = express();
  app.use('/sync', createStoreRouter({ adapter, svcKeys: [KEY], rateLimit: false, now: () => clock }));
  return listen(app);
}

function post(url: string, path: string, body: unknown) {
  return fetch(`${url}/sync/${path}`, { method: 'POST', headers: { SvcKey: KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** The demo's first order under a new order number (its own is taken: an orderid names one order). */
const newOrder = (): Omit<Order, '_id'> => {
  const { _id, last_updated, ...rest } = catalog.orders[0];
  void _id, void last_updated;
  return { ...rest, orderid: 'WEB-1' };
};

describe('writes over HTTP through the store router', () => {
  it('order: success, repeat, failure, and what is stored', async () => {
    const memory = createMemoryAdapter(structuredClone(catalog));
    const srv = await serve(memory);
    try {
      const res = await post(srv.url, 'orders?jobid=7&id=web-1', { ...newOrder(), coupon: 'SAVE10' });
      expect(res.status).toBe(200);
      const ok = OrderWriteSuccessSchema.parse(await res.json());
      expect(ok.warnings).toEqual([{ msg: 'coupon: unknown field, ignored' }]);
      expect(ok.order).toEqual({ ...newOrder(), _id: 'web-1', last_updated: clock });
      expect(await memory.orders.get('web-1')).toEqual(ok.order);

      clock += 1000;
      const again = await post(srv.url, 'orders?jobid=7&id=web-1', { ...newOrder(), coupon: 'SAVE10' });
      expect(await again.json()).toEqual(ok);

      const bad = await post(srv.url, 'orders?jobid=8&id=web-2', { ...newOrder(), orderid: 'WEB-2', status: 'lost-in-space', orderItems: [{ id: '', quantity: 0 }] });
      expect(bad.status).toBe(400);
      const failure = WriteFailureSchema.parse(await bad.json());
      expect(failure.reasons.map((r) => r.msg)).toEqual([
        'orderItems.0.id: SKU is blank',
        'orderItems.0.quantity: must be greater than 0, got 0',
        'status: "lost-in-space" is not an allowed order status (allowed: pending, paid, processing, shipped, delivered, cancelled, refunded)',
      ]);
      expect(await memory.orders.get('web-2')).toBeUndefined();

      const twice = await post(srv.url, 'orders?jobid=8&id=a&id=b', newOrder());
      expect(twice.status).toBe(400);
      expect(WriteFailureSchema.parse(await twice.json()).reasons).toEqual([{ msg: 'id: query parameter must be given once, got 2 values', message: 'id: query parameter must be given once, got 2 values', code: 400 }]);
    } finally {
      await srv.close();
    }
  });

  it('product: success, then a SKU clash is refused', async () => {
    const memory = createMemoryAdapter(structuredClone(catalog));
    const srv = await serve(memory);
    try {
      const res = await post(srv.url, 'products?jobid=1&id=mug-1', { sku: 'MUG-1', title: 'Mug' });
      expect(res.status).toBe(200);
      expect(ProductWriteSuccessSchema.parse(await res.json()).product).toEqual({ _id: 'mug-1', sku: 'MUG-1', title: 'Mug', last_updated: clock });
      const clash = await post(srv.url, 'products?jobid=1&id=mug-2', { sku: 'MUG-1' });
      expect(clash.status).toBe(400);
      expect(WriteFailureSchema.parse(await clash.json()).reasons).toEqual([{ msg: 'sku: "MUG-1" is already used by product "mug-1"', message: 'sku: "MUG-1" is already used by product "mug-1"', code: 400 }]);
    } finally {
      await srv.close();
    }
  });

  it('refuses a write whose item could never fit on a list page, and stores nothing', async () => {
    // The body limit (maxBodyBytes) is larger than the page budget (maxPageBytes): an item between the
    // two must not be stored, or every walk of the list would stop at it with a 500 forever.
    const memory = createMemoryAdapter();
    const app = express();
    app.use('/sync', createStoreRouter({ adapter: memory, svcKeys: [KEY], rateLimit: false, now: () => clock, maxPageBytes: 4000 }));
    const srv = await listen(app);
    try {
      const big = await post(srv.url, 'orders?jobid=1&id=big', { status: 'paid', feedback: 'x'.repeat(5000) });
      expect(big.status).toBe(400);
      const failure = WriteFailureSchema.parse(await big.json());
      expect(failure.reasons).toHaveLength(1);
      expect(failure.reasons[0].msg).toMatch(/^body: the order is \d+ bytes as JSON, more than the \d+ bytes one list page can hold \(page budget 4000 bytes\)/);
      expect(await memory.orders.get('big')).toBeUndefined();
      const product = await post(srv.url, 'products?jobid=1&id=big', { title: 'y'.repeat(5000) });
      expect(product.status).toBe(400);
      expect(await memory.products.get('big')).toBeUndefined();

      // Around the limit, with the longest ids (the longest cursors): whatever is accepted is listed.
      const id = 'i'.repeat(256);
      let accepted = 0;
      let refused = 0;
      for (let n = 1300; n <= 2100; n += 11) {
        const res = await post(srv.url, `orders?jobid=1&id=${id}`, { status: 'paid', feedback: 'z'.repeat(n) });
        if (res.status === 200) accepted++;
        else {
          refused++;
          expect(res.status).toBe(400);
          continue;
        }
        for (const sortorder of ['asc', 'desc']) {
          for (const paging of ['offset=9007199254740991', 'offset=0', '']) {
            const page = await fetch(`${srv.url}/sync/orders?sortorder=${sortorder}&jobid=1${paging ? `&${paging}` : ''}`, { headers: { SvcKey: KEY } });
            const text = await page.text();
            expect(page.status).toBe(200);
            expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4000);
          }
        }
      }
      expect(accepted).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
    } finally {
      await srv.close();
    }
  });

  it('an adapter that throws gives 500 {error} without internals, and the server keeps serving', async () => {
    const memory = createMemoryAdapter(structuredClone(catalog));
    let broken = true;
    const adapter: StoreAdapter = {
      products: memory.products,
      orders: {
        list: (o) => memory.orders.list(o),
        count: (o) => memory.orders.count(o),
        get: (id) => memory.orders.get(id),
        upsert: async (item, o) => {
          if (broken) throw new Error('ECONNRESET db-primary.internal:5432');
          return memory.orders.upsert(item, o);
        },
      },
      productBySku: (sku) => memory.productBySku(sku),
    };
    const srv = await serve(adapter);
    try {
      const res = await post(srv.url, 'orders?jobid=1&id=web-9', newOrder());
      expect(res.status).toBe(500);
      const body = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['error']);
      expect(JSON.stringify(body)).not.toMatch(/ECONNRESET|db-primary|at /);
      broken = false;
      expect((await post(srv.url, 'orders?jobid=1&id=web-9', newOrder())).status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});
