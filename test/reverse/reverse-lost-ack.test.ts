/**
 * An acknowledgement the service stored whose reply never reached the daemon (a lost reply, or the
 * service killed after saving it). A deployed daemon reads `readyfornext` only after an
 * acknowledgement it saw succeed; its next pass starts with `hasmore`. So `hasmore` must not keep
 * answering `waiting` for an acknowledgement nobody will close: the deployed daemons give up after
 * ~11 `waiting`s, send `pull/{entity}/finish` (refused while items are left) and start again, for ever.
 */
import request from 'supertest';
import express from 'express';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createReverseServiceRouter, } from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';

const KEY = 'lost-ack-key';
const P = `${REVERSE_BASE_PATH}/${KEY}`;

test('hasmore after an acknowledgement whose readyfornext never came closes it: the pull goes on, nothing lost or doubled', async () => {
  const router = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(3)), connections: [{ key: KEY, name: 'shop' }], dialect: 'click2sync' });
  const app = express().use(router);
  await router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
  await request(app).post(`${P}/pull/initialize`).send({});
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    expect((await request(app).get(`${P}/pull/products/hasmore`)).body).toEqual({ hasmore: 'ready' });
    const product = (await request(app).get(`${P}/pull/products/next`)).body.product;
    seen.push(product._id);
    // The acknowledgement is stored, but its reply is lost: the daemon never reads readyfornext.
    expect((await request(app).post(`${P}/pull/products/${product.sku}/failed`).send({ error: 'protected' })).body).toEqual({ ok: true });
  }
  expect((await request(app).get(`${P}/pull/products/hasmore`)).body).toEqual({ hasmore: 'done' });
  expect((await request(app).post(`${P}/pull/products/finish`).send({})).body).toEqual({ ok: true });
  expect((await request(app).post(`${P}/pull/finish`).send({})).body).toEqual({ ok: true });
  expect(new Set(seen).size).toBe(3);
  const view = await router.service.status('shop');
  expect(view.products).toMatchObject({ delivered: 3, redelivered: 0, failed: 3 });
  expect(view.transactions).toEqual([expect.objectContaining({ kind: 'pull', outcome: 'finished' })]);
});

test('a daemon that reads readyfornext after its acknowledgement still gets it as before', async () => {
  const router = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(2)), connections: [{ key: KEY, name: 'shop' }] });
  const app = express().use(router);
  await router.service.enqueue('shop', { kind: 'pull', entity: 'products' });
  await request(app).post(`${P}/pull/initialize`).send({});
  const product = (await request(app).get(`${P}/pull/products/next`)).body.product;
  expect((await request(app).get(`${P}/pull/products/readyfornext`)).body).toEqual({ ready: false });
  await request(app).post(`${P}/pull/products/${product._id}/succeded`).send({ product });
  expect((await request(app).get(`${P}/pull/products/readyfornext`)).body).toEqual({ ready: true });
  expect((await request(app).get(`${P}/pull/products/hasmore`)).body).toEqual({ hasmore: 'ready' });
  // A repeated acknowledgement of the last item is still a duplicate, not a 409.
  expect((await request(app).post(`${P}/pull/products/${product._id}/succeded`).send({ product })).body).toEqual({ ok: true, duplicate: true });
});
