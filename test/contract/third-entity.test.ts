/**
 * The entity registry drives every layer (issue 23): a test-only third entity, `customers`, is
 * registered (./third-entity/customers-entity.ts: its schemas, nouns, operation names, natural key)
 * and the kit serves and moves it with no other edit: the store router lists it, reads it by id and
 * writes it (in every binding), the caller walks it, a sync copies it into a memory sink, and the
 * OpenAPI document describes its routes, and a reverse service takes its push pages (after the
 * orders, in registry order) into its store. The only other entity-specific code is the adapter: the
 * memory adapter keeps a store for every registered entity.
 */
import { CUSTOMERS, type Customer } from './third-entity/customers-entity'; // first: registers the entity
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import type { EntityStore } from '../../lib/adapter';
import { createStoreClient } from '../../lib/client';
import { ENTITIES, REVERSE_ROUTES, WEBHOOK_ROUTES, entityOf, isEntity, reverseUrl } from '../../lib/contract';
import { createOpenApiDocument } from '../../lib/openapi';
import { createMemoryStateStore, createReverseServiceRouter, type ReverseServiceRouter, type ReverseStateStore } from '../../lib/reverse';
import { MemoryCheckpointStore, runSync } from '../../lib/sync';
import { BINDINGS, KEY, get, post, startBinding } from '../server/helpers';

const signal = () => AbortSignal.timeout(10_000);
const customersOf = (adapter: MemoryAdapter) => (adapter as unknown as Record<string, EntityStore<Customer>>)[CUSTOMERS];

function seeded(n: number): MemoryAdapter {
  const adapter = createMemoryAdapter();
  for (let i = 0; i < n; i++) (customersOf(adapter) as unknown as { seed(c: Customer): void }).seed({ _id: `c${String(i).padStart(3, '0')}`, last_updated: 1000 + i, email: `c${i}@example.com`, name: `Customer ${i}`, points: i * 10 });
  return adapter;
}

describe('a third entity registered in the registry', () => {
  it('is an entity of the registry, after products and orders', () => {
    expect(ENTITIES).toEqual(['products', 'orders', 'customers']);
    expect(isEntity('customers')).toBe(true);
    expect(Object.keys(WEBHOOK_ROUTES)).toEqual(expect.arrayContaining(['listCustomers', 'getCustomer', 'writeCustomer']));
  });

  it.each(BINDINGS)('%s: the store router lists it (offsets and cursors), reads it by id and writes it', async (kind) => {
    const adapter = seeded(12);
    const s = await startBinding(kind, { adapter, defaultPagination: 'cursor' });
    try {
      const first = await get(`${s.base}/customers?limit=5`);
      expect(first.status).toBe(200);
      expect(first.body.paging).toMatchObject({ itemsTotal: 12 });
      expect(first.body.customers.map((c: Customer) => c._id)).toEqual(['c000', 'c001', 'c002', 'c003', 'c004']);
      const desc = await get(`${s.base}/customers?sortorder=desc&limit=2&offset=0`);
      expect(desc.body.customers.map((c: Customer) => c._id)).toEqual(['c011', 'c010']);
      // A cursor of one entity is not accepted by another.
      const next: string = first.body.paging.next;
      expect((await get(`${s.base}/customers?limit=5&next=${encodeURIComponent(next)}`)).body.customers.map((c: Customer) => c._id)).toEqual(['c005', 'c006', 'c007', 'c008', 'c009']);
      expect((await get(`${s.base}/products?next=${encodeURIComponent(next)}`)).status).toBe(400);

      expect(await get(`${s.base}/customers/c003`)).toMatchObject({ status: 200, body: { customer: { _id: 'c003', email: 'c3@example.com', points: 30 } } });
      expect(await get(`${s.base}/customers?id=c003`)).toMatchObject({ status: 200, body: { _id: 'c003' } });
      expect((await get(`${s.base}/customers/nobody`)).status).toBe(404);

      const written = await post(`${s.base}/customers?jobid=1&id=c003`, { _id: 'c003', name: 'Renamed' });
      expect(written).toMatchObject({ status: 200, body: { success: true, customer: { _id: 'c003', name: 'Renamed', email: 'c3@example.com' } } });
      expect(await customersOf(adapter).get('c003', { signal: signal() })).toMatchObject({ name: 'Renamed', points: 30 });
      const bad = await post(`${s.base}/customers?jobid=1&id=c004`, { _id: 'c004', points: 'many' });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain('points');
      expect(await customersOf(adapter).get('c004', { signal: signal() })).toMatchObject({ points: 40 });
      // Its natural key is unique, as sku and orderid are.
      const taken = await post(`${s.base}/customers?jobid=1&id=c005`, { _id: 'c005', email: 'c6@example.com' });
      expect(taken.status).toBe(400);
      expect(JSON.stringify(taken.body)).toContain('email');
    } finally {
      await s.close();
    }
  });

  it('the caller walks it, with offsets and with cursors, each item once', async () => {
    const adapter = seeded(23);
    const s = await startBinding('node:http', { adapter });
    try {
      const client = createStoreClient({ baseUrl: s.base, svcKey: KEY, pageSize: 5 });
      expect(client.config.entities).toContain(CUSTOMERS);
      for (const strategy of ['offset', 'cursor'] as const) {
        const walk = client.walk(CUSTOMERS, { jobid: 7, strategy });
        const ids: string[] = [];
        for await (const c of walk) ids.push(c._id);
        expect(ids).toEqual(Array.from({ length: 23 }, (_, i) => `c${String(i).padStart(3, '0')}`));
        expect(walk.summary).toMatchObject({ complete: true, duplicates: 0, invalid: 0, itemsTotal: 23 });
      }
      const one = await client.get(CUSTOMERS, 'c007');
      expect(one).toMatchObject({ _id: 'c007', points: 70 });
      const result = await client.write(CUSTOMERS, { _id: 'c007', name: 'Seven' } as never, { jobid: 8 });
      expect(result).toMatchObject({ ok: true, item: { _id: 'c007', name: 'Seven' } });
    } finally {
      await s.close();
    }
  });

  it('a sync copies it into a memory sink, and a second run writes nothing again', async () => {
    const adapter = seeded(17);
    const s = await startBinding('node:http', { adapter });
    try {
      const client = createStoreClient({ baseUrl: s.base, svcKey: KEY, pageSize: 4 });
      const sink = createMemoryAdapter();
      const checkpoints = new MemoryCheckpointStore();
      const report = await runSync({ connectionId: 'third-entity', client, sink, checkpoints, entities: [CUSTOMERS] });
      expect(report.ok).toBe(true);
      const entityReport = (report as unknown as Record<string, { count: number; written: number }>)[CUSTOMERS];
      expect(entityReport).toMatchObject({ count: 17, written: 17 });
      const copied = await customersOf(sink).list({ sortorder: 'asc', limit: 100, signal: signal() });
      const original = await customersOf(adapter).list({ sortorder: 'asc', limit: 100, signal: signal() });
      expect(copied).toEqual(original);
      const again = await runSync({ connectionId: 'third-entity', client, sink, checkpoints, entities: [CUSTOMERS] });
      expect((again as unknown as Record<string, { written: number }>)[CUSTOMERS].written).toBe(0);
    } finally {
      await s.close();
    }
  });

  it('the OpenAPI document describes its three webhook routes', () => {
    const doc = createOpenApiDocument({ include: ['webhooks'] }) as unknown as {
      paths: Record<string, Record<string, { operationId?: string }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(doc.paths['/customers'].get.operationId).toBe('listCustomers');
    expect(doc.paths['/customers'].post.operationId).toBe('writeCustomer');
    expect(doc.paths['/customers/{id}'].get.operationId).toBe('getCustomer');
    expect(JSON.stringify(doc.paths['/customers'])).toContain('#/components/schemas/CustomerListResponse');
    expect(Object.keys(doc.components.schemas.Customer.properties ?? {})).toEqual(['_id', 'last_updated', 'email', 'name', 'points']);
  });

  it("the reverse connection's route table has its pull and push calls", () => {
    const routes = REVERSE_ROUTES.filter((r) => r.entity === CUSTOMERS);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining(['POST /push/customers', 'POST /push/customers/finish', 'GET /pull/customers/next']));
    expect(routes.find((r) => r.path === '/push/customers')?.request).toBe(entityOf(CUSTOMERS).pushPageSchema);
  });
});

/**
 * The reverse service's push follows the registry: products, then orders, then customers (registry
 * order), each entity's pages stored in the service's store, exactly once when a page is re-sent
 * (a lost reply) or re-sent to a restarted service. Plain HTTP calls to a real service on
 * loopback, as a daemon makes them.
 */
describe('the third entity through a real reverse service (push and pull)', () => {
  const REVERSE_KEY = 'third-entity-conn-key';
  const PAGE = (suffix = '') => ({
    customers: [
      { _id: 'k1', last_updated: 2001, email: 'k1@example.com', name: `One${suffix}`, points: '10' },
      { _id: 'k2', last_updated: 2002, email: 'k2@example.com', name: `Two${suffix}`, points: '20' },
      { _id: 'k3', last_updated: 2003, email: 'k3@example.com', name: `Three${suffix}` },
    ],
  });

  interface Running {
    readonly service: ReverseServiceRouter['service'];
    call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }>;
    close(): Promise<void>;
  }

  async function startReverse(adapter: MemoryAdapter, stateStore: ReverseStateStore): Promise<Running> {
    const router = createReverseServiceRouter({ adapter, connections: [{ key: REVERSE_KEY, name: 'shop' }], stateStore, maxCallsPerSecond: 0 });
    const app = express();
    app.use(router);
    const server: Server = await new Promise((resolve) => {
      const srv = app.listen(0, '127.0.0.1', () => resolve(srv));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      service: router.service,
      async call(method, path, body) {
        const res = await fetch(reverseUrl(base, REVERSE_KEY, path), {
          method,
          signal: signal(),
          ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) } : {}),
        });
        return { status: res.status, body: await res.json() };
      },
      close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
    };
  }

  const storedCustomers = async (adapter: MemoryAdapter) => (await customersOf(adapter).list({ sortorder: 'asc', limit: 100, signal: signal() })).map((x) => ('json' in x ? JSON.parse(x.json) : x) as Customer);
  const countsOf = async (r: Running) => (await r.service.status('shop')) as unknown as Record<string, { received: number; sampled: number }> & { cursoroffset: Record<string, number | string> };

  it('pushes products, orders, then customers; a re-sent customers page is stored once; the status counts them', async () => {
    const adapter = createMemoryAdapter();
    const s = await startReverse(adapter, createMemoryStateStore());
    try {
      await s.service.enqueue('shop', { kind: 'push' });
      expect(await s.call('POST', '/push/initialize')).toMatchObject({ status: 200 });
      expect((await s.call('GET', '/entity')).body).toEqual({ entity: 'products' });
      // Customers come after orders: their page and finish are refused now, and nothing is stored.
      expect(await s.call('POST', '/push/customers', PAGE())).toMatchObject({ status: 409, body: { error: expect.stringContaining('finish the products first') } });
      expect((await s.call('POST', '/push/customers/finish')).status).toBe(409);
      expect((await s.call('POST', '/push/products', { products: [] })).body).toEqual({ received: 0 });
      expect((await s.call('POST', '/push/products/finish')).body).toEqual({ ok: true });
      expect((await s.call('GET', '/entity')).body).toEqual({ entity: 'orders' });
      expect((await s.call('POST', '/push/customers', PAGE())).status).toBe(409);
      expect((await s.call('POST', '/push/orders', { orders: [] })).body).toEqual({ received: 0 });
      // The spec's printed order finish (push/products/finish) still finishes the orders.
      expect((await s.call('POST', '/push/products/finish')).body).toEqual({ ok: true });
      expect((await s.call('GET', '/entity')).body).toEqual({ entity: CUSTOMERS });
      expect((await s.call('POST', '/push/finish')).status).toBe(409);
      expect(await storedCustomers(adapter)).toEqual([]);

      expect(await s.call('POST', '/push/customers', PAGE())).toEqual({ status: 200, body: { received: 3 } });
      // The reply was lost: the daemon sends the same page again.
      expect(await s.call('POST', '/push/customers', PAGE())).toEqual({ status: 200, body: { received: 0 } });
      expect((await s.call('GET', '/cursoroffset')).body).toEqual({ cursoroffset: 2003 });
      // An earlier entity's finish is a duplicate now (the slip finishes only the orders).
      expect((await s.call('POST', '/push/products/finish')).body).toEqual({ ok: true, duplicate: true });
      expect((await s.call('GET', '/entity')).body).toEqual({ entity: CUSTOMERS });
      expect((await s.call('POST', '/push/customers/finish')).body).toEqual({ ok: true });
      expect((await s.call('POST', '/push/customers/finish')).body).toEqual({ ok: true, duplicate: true });
      expect((await s.call('GET', '/entity')).status).toBe(409);
      expect((await s.call('POST', '/push/finish')).body).toEqual({ ok: true });
      expect((await s.call('GET', '/upstreamstatus')).body).toMatchObject({ upstreamstatus: 'finished' });

      expect(await storedCustomers(adapter)).toEqual([
        { _id: 'k1', last_updated: 2001, email: 'k1@example.com', name: 'One', points: 10 },
        { _id: 'k2', last_updated: 2002, email: 'k2@example.com', name: 'Two', points: 20 },
        { _id: 'k3', last_updated: 2003, email: 'k3@example.com', name: 'Three' },
      ]);
      const status = await countsOf(s);
      expect(status[CUSTOMERS]).toMatchObject({ received: 3 });
      expect(status.cursoroffset).toEqual({ products: 0, orders: 0, [CUSTOMERS]: 2003 });
      expect((await s.service.status('shop')).transactions.at(-1)).toMatchObject({ kind: 'push', outcome: 'finished', items: { products: 0, orders: 0, [CUSTOMERS]: 3 } });
    } finally {
      await s.close();
    }
  });

  it('a page re-sent to a restarted service is stored once; a second push updates the same customers', async () => {
    const adapter = createMemoryAdapter();
    const state = createMemoryStateStore();
    const toCustomers = async (r: Running) => {
      await r.service.enqueue('shop', { kind: 'push' });
      await r.call('POST', '/push/initialize');
      await r.call('POST', '/push/products/finish');
      await r.call('POST', '/push/orders/finish');
    };
    const first = await startReverse(adapter, state);
    try {
      await toCustomers(first);
      expect((await first.call('POST', '/push/customers', PAGE())).body).toEqual({ received: 3 });
    } finally {
      await first.close();
    }
    const second = await startReverse(adapter, state);
    try {
      expect((await second.call('GET', '/entity')).body).toEqual({ entity: CUSTOMERS });
      expect((await second.call('POST', '/push/customers', PAGE())).body).toEqual({ received: 0 });
      expect((await second.call('POST', '/push/customers/finish')).body).toEqual({ ok: true });
      expect((await second.call('POST', '/push/finish')).body).toEqual({ ok: true });
      await second.call('GET', '/upstreamstatus');
      expect((await countsOf(second))[CUSTOMERS]).toMatchObject({ received: 3 });

      // The next push starts where the last one ended for customers, and updates in place.
      await toCustomers(second);
      expect((await second.call('GET', '/cursoroffset')).body).toEqual({ cursoroffset: 2003 });
      expect((await second.call('POST', '/push/customers', PAGE(' again'))).body).toEqual({ received: 3 });
      const stored = await storedCustomers(adapter);
      expect(stored.map((c) => [c._id, c.name])).toEqual([
        ['k1', 'One again'],
        ['k2', 'Two again'],
        ['k3', 'Three again'],
      ]);
    } finally {
      await second.close();
    }
  });

  it('a pull hands out customers after the orders, each acknowledged once', async () => {
    const adapter = seeded(3);
    const s = await startReverse(adapter, createMemoryStateStore());
    try {
      await s.service.enqueue('shop', { kind: 'pull' });
      expect((await s.call('POST', '/pull/initialize')).status).toBe(200);
      expect((await s.call('GET', '/pull/products/hasmore')).body).toEqual({ hasmore: 'done' });
      expect((await s.call('POST', '/pull/products/finish')).body).toEqual({ ok: true });
      expect((await s.call('POST', '/pull/orders/finish')).body).toEqual({ ok: true });
      expect((await s.call('GET', '/entity')).body).toEqual({ entity: CUSTOMERS });
      const got: string[] = [];
      while ((await s.call('GET', '/pull/customers/hasmore')).body.hasmore === 'ready') {
        const next = await s.call('GET', '/pull/customers/next');
        expect(next.status).toBe(200);
        const id: string = next.body.customer._id;
        got.push(id);
        expect((await s.call('POST', `/pull/customers/${id}/succeded`, next.body)).body).toEqual({ ok: true });
        // The reply was lost: the daemon acknowledges again.
        expect((await s.call('POST', `/pull/customers/${id}/succeded`, next.body)).body).toMatchObject({ ok: true, duplicate: true });
        expect((await s.call('GET', '/pull/customers/readyfornext')).body).toEqual({ ready: true });
      }
      expect(got).toEqual(['c000', 'c001', 'c002']);
      expect((await s.call('POST', '/pull/customers/finish')).body).toEqual({ ok: true });
      expect((await s.call('POST', '/pull/finish')).body).toEqual({ ok: true });
      expect((await s.service.status('shop')).transactions.at(-1)).toMatchObject({ kind: 'pull', outcome: 'finished', items: { products: 0, orders: 0, [CUSTOMERS]: 3 } });
      expect((await countsOf(s))[CUSTOMERS]).toMatchObject({ delivered: 3, succeeded: 3 });
    } finally {
      await s.close();
    }
  });

  it('a sample push keeps customers for inspection and stores none', async () => {
    const adapter = createMemoryAdapter();
    const s = await startReverse(adapter, createMemoryStateStore());
    try {
      await s.service.enqueue('shop', { kind: 'pingsample' });
      expect((await s.call('POST', '/pingsample/initialize')).status).toBe(200);
      await s.call('POST', '/pingsample/products/finish');
      // A sample has no finish slip: the products path is a duplicate once products are finished.
      expect((await s.call('POST', '/pingsample/products/finish')).body).toEqual({ ok: true, duplicate: true });
      expect((await s.call('GET', '/entity')).body).toEqual({ entity: 'orders' });
      await s.call('POST', '/pingsample/orders/finish');
      expect((await s.call('POST', '/pingsample/customers', PAGE())).body).toEqual({ received: 3 });
      expect((await s.call('POST', '/pingsample/customers/finish')).body).toEqual({ ok: true });
      expect((await s.call('POST', '/pingsample/finish')).body).toEqual({ ok: true });
      const status = await s.service.status('shop');
      expect((status.lastSample as unknown as Record<string, Customer[]>)[CUSTOMERS].map((c) => c._id)).toEqual(['k1', 'k2', 'k3']);
      expect((status as unknown as Record<string, { sampled: number }>)[CUSTOMERS]).toMatchObject({ sampled: 3 });
      expect(await storedCustomers(adapter)).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
