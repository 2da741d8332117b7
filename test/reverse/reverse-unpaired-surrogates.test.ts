/**
 * Issue 20 A on the reverse side: ids, SKUs and orderids must be well-formed UTF-16 there too. A
 * pushed item holding an unpaired surrogate (which a JSON body can carry as `\ud800`) is refused
 * and never stored, while the page's good items are; a pull of such an id is refused before it is
 * queued; both messages name the two rules (control characters, unpaired surrogates).
 */
import express from 'express';
import request from 'supertest';
import { createMemoryAdapter } from '../../adapters/memory';
import { FORBIDDEN_CHARACTERS } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createReverseServiceRouter, } from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';
import { allItems } from './reverse-helpers';

const KEY = 'surrogate-key-1';
const P = `${REVERSE_BASE_PATH}/${KEY}`;

function setup() {
  const store = createMemoryAdapter(demoCatalog(4));
  const router = createReverseServiceRouter({ adapter: store, connections: [{ key: KEY, name: 'shop' }] });
  const app = express();
  app.use(router);
  return { store, router, app };
}

test('pushed items with an unpaired surrogate in _id, sku or orderid are refused and not stored; the good ones are', async () => {
  const { store, router, app } = setup();
  const before = { products: await allItems(store, 'products'), orders: await allItems(store, 'orders') };
  await router.service.enqueue('shop', { kind: 'push' });
  expect((await request(app).post(`${P}/push/initialize`).send({})).status).toBe(200);
  const products = await request(app)
    .post(`${P}/push/products`)
    .set('content-type', 'application/json')
    .send('{"products":[{"_id":"x\\ud800","title":"a"},{"_id":"p-ok-2","sku":"S\\udc00","title":"b"},{"_id":"p-ok-1","sku":"S-1","title":"c"}]}');
  expect(products.status).toBe(200);
  expect(products.body.received).toBe(1);
  expect(products.body.refused).toHaveLength(2);
  expect(products.body.refused.map((r: { error: string }) => r.error).join('\n')).toContain(FORBIDDEN_CHARACTERS);
  expect((await request(app).post(`${P}/push/products/finish`).send({})).status).toBe(200);
  const orders = await request(app).post(`${P}/push/orders`).set('content-type', 'application/json').send('{"orders":[{"_id":"o-ok-1","orderid":"\\ud83dX","status":"paid"}]}');
  expect([orders.status, orders.body.refused?.length]).toEqual([200, 1]);
  expect((await allItems(store, 'products')).map((p) => p._id)).toEqual([...before.products.map((p) => p._id), 'p-ok-1'].sort());
  expect(await allItems(store, 'orders')).toEqual(before.orders);
  expect(JSON.stringify(await allItems(store, 'products'))).not.toMatch(/\\ud[89a-f]|\ufffd/i);
});

test('a pull of an id with an unpaired surrogate is refused before it is queued, in the API and over the operator route', async () => {
  const { router, app } = setup();
  expect(() => router.service.enqueue('shop', { kind: 'pull', entity: 'products', ids: ['x\ud800'] })).toThrow(`expected an array of non-empty ids without ${FORBIDDEN_CHARACTERS}`);
  const queued = await request(app).post('/connections/shop/queue').set('content-type', 'application/json').send('{"kind":"pull","entity":"products","ids":["x\\ud800"]}');
  expect(queued.status).toBe(400);
  expect(queued.body.error).toContain(FORBIDDEN_CHARACTERS);
  expect((await request(app).get('/connections/shop/status')).body.queue ?? []).toEqual([]);
});
