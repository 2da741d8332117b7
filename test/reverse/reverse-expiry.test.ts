/**
 * A transaction that cannot complete (its daemon gave up) no longer blocks the queue: it expires
 * after `transactionIdleMs` with no daemon call, or the operator cancels it; either way it is in the
 * status view, and what its daemon sends late is refused without changing anything.
 */
import request from 'supertest';
import express from 'express';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createReverseServiceRouter, } from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';

const KEY = 'expiry-key';
const P = `${REVERSE_BASE_PATH}/${KEY}`;

function setup(idle = 60_000) {
  const clock = { now: 5_000_000 };
  const router = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(6)), connections: [{ key: KEY, name: 'shop' }], transactionIdleMs: idle, now: () => clock.now });
  return { clock, router, app: express().use(router) };
}

test('a pull whose daemon went away expires after transactionIdleMs; the queue moves on; late calls change nothing', async () => {
  const { clock, router, app } = setup();
  await router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
  await router.service.enqueue('shop', { kind: 'push' });
  await request(app).post(`${P}/pull/initialize`).send({});
  const item = (await request(app).get(`${P}/pull/products/next`)).body.product;
  // Calls keep it alive: 59 s later it is still running.
  clock.now += 59_000;
  expect((await request(app).get(`${P}/pull/products/hasmore`)).body).toEqual({ hasmore: 'ready' });
  const view = await router.service.status('shop');
  expect(view.current).toMatchObject({ kind: 'pull', touchedAt: clock.now, expiresAt: clock.now + 60_000 });
  // Reads (ping, upstreamstatus) are not the transaction's daemon at work: they do not keep it alive.
  clock.now += 30_000;
  expect((await request(app).get(`${P}/ping`)).body).toEqual({ connectionstatus: 'pulling' });
  clock.now += 30_000;
  expect((await request(app).get(`${P}/ping`)).body).toEqual({ connectionstatus: 'fetchingremote' });
  const after = await router.service.status('shop');
  expect(after.current).toBeNull();
  expect(after.connectionstatus).toBe('waiting');
  expect(after.transactions).toEqual([expect.objectContaining({ kind: 'pull', outcome: 'expired', items: { products: 0, orders: 0 }, remaining: 6 })]);
  // The daemon comes back with its acknowledgement: refused, nothing counted.
  const late = await request(app).post(`${P}/pull/products/${encodeURIComponent(item._id)}/succeded`).send({ product: item });
  expect(late.status).toBe(409);
  expect((await router.service.status('shop')).products.succeeded).toBe(0);
  // The push queued behind it runs.
  expect((await request(app).post(`${P}/push/initialize`).send({})).body).toEqual({ upstreamstatus: 'initialized', connectionstatus: 'initialized' });
});

test('the operator cancels the running transaction through the queue route; a wrong number or nothing running is a 409', async () => {
  const { router, app } = setup();
  await router.service.enqueue('shop', { kind: 'push' });
  await router.service.enqueue('shop', { kind: 'pull' });
  await request(app).post(`${P}/push/initialize`).send({});
  await request(app).post(`${P}/push/products`).send({ products: [{ _id: 'p1', last_updated: 7 }] });
  const wrong = await request(app).post('/connections/shop/queue').send({ kind: 'cancel', transaction: 99 });
  expect([wrong.status, wrong.body]).toEqual([409, { error: 'transaction 99 is not the running one (1)' }]);
  expect((await request(app).post('/connections/shop/queue').send({ kind: 'cancel', transaction: 1 })).body).toEqual({ ok: true, cancelled: 1 });
  const view = (await request(app).get('/connections/shop/status')).body;
  expect(view).toMatchObject({ connectionstatus: 'waiting', mode: 'pull', current: null, cursoroffset: { products: 7 } });
  expect(view.transactions).toEqual([expect.objectContaining({ kind: 'push', outcome: 'cancelled', items: { products: 1, orders: 0 } })]);
  // The cancelled push's daemon goes on: refused.
  expect((await request(app).post(`${P}/push/orders`).send({ orders: [] })).status).toBe(409);
  expect((await request(app).post(`${P}/push/finish`).send({})).status).toBe(409);
  expect((await request(app).post('/connections/shop/queue').send({ kind: 'cancel', transaction: 'one' })).status).toBe(400);
  await request(app).post(`${P}/pull/initialize`).send({});
  await request(app).post('/connections/shop/queue').send({ kind: 'cancel' });
  const none = await request(app).post('/connections/shop/queue').send({ kind: 'cancel' });
  expect([none.status, none.body]).toEqual([409, { error: 'no transaction is running on this connection' }]);
});
