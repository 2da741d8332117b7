/**
 * The entity registry drives every layer (issue 23): a test-only third entity, `customers`, is
 * registered (./third-entity/customers-entity.ts: its schemas, nouns, operation names, natural key)
 * and the kit serves and moves it with no other edit: the store router lists it, reads it by id and
 * writes it (in every binding), the caller walks it, a sync copies it into a memory sink, and the
 * OpenAPI document describes its routes. The only other entity-specific code is the adapter: the
 * memory adapter keeps a store for every registered entity.
 */
import { CUSTOMERS, type Customer } from './third-entity/customers-entity'; // first: registers the entity
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import type { EntityStore } from '../../lib/adapter';
import { createStoreClient } from '../../lib/client';
import { ENTITIES, REVERSE_ROUTES, WEBHOOK_ROUTES, entityOf, isEntity } from '../../lib/contract';
import { createOpenApiDocument } from '../../lib/openapi';
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

  it("the reverse connection's route table has its pull and push calls (the push state machine does not take it yet)", () => {
    const routes = REVERSE_ROUTES.filter((r) => r.entity === CUSTOMERS);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining(['POST /push/customers', 'POST /push/customers/finish', 'GET /pull/customers/next']));
    expect(routes.find((r) => r.path === '/push/customers')?.request).toBe(entityOf(CUSTOMERS).pushPageSchema);
  });
});
