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

const newOrder = (): Omit<Order, '_id'> => {
  const { _id, last_updated, ...rest } = catalog.orders[0];
  void _id, void last_updated;
  return rest;
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

      const bad = await post(srv.url, 'orders?jobid=8&id=web-2', { ...newOrder(), status: 'lost-in-space', orderItems: [{ id: '', quantity: 0 }] });
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
      expect(WriteFailureSchema.parse(await twice.json()).reasons).toEqual([{ msg: 'id: query parameter must be given once, got 2 values' }]);
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
      expect(WriteFailureSchema.parse(await clash.json()).reasons).toEqual([{ msg: 'sku: "MUG-1" is already used by product "mug-1"' }]);
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
