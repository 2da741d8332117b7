/**
 * Fuzzes the store webhooks over real HTTP on memory, SQLite and PostgreSQL: random and mutated
 * queries, cursors, key headers, path ids and write bodies across all of Unicode (NULs, astral
 * characters, lone surrogates, depth bombs, bytes that are not UTF-8). Every answer must keep the
 * rules of `fuzz-kit.ts` (no 5xx, JSON `{error}`, no leaks, true to the OpenAPI document), and a
 * refused write must leave the store exactly as it was.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import fc from 'fast-check';
import { createMemoryAdapter } from '../../adapters/memory';
import { createSqlAdapter, openSqlAdapter } from '../../adapters/sql';
import type { StoreAdapter } from '../../lib/adapter';
import { demoCatalog, demoOrder, demoProduct } from '../../lib/demo';
import { createOpenApiDocument } from '../../lib/openapi';
import { createStoreRouter } from '../../lib/server';
import { describeDatabase, sharedDatabase, uniquePrefix } from '../adapters/sql-databases';
import { DocumentValidator } from '../openapi/openapi-helpers';
import { contentType, encodeText, FUZZ_RUNS, fuzz, hostileBody, hostileId, hostileString, judge, mutateText, sendRaw, type RawRequest } from './fuzz-kit';

const KEY = 'fuzz-store-key-0123456789';
const ENTITIES = ['products', 'orders'] as const;
const validator = new DocumentValidator(createOpenApiDocument({ include: ['webhooks'] }));
const TEMPLATES = Object.keys(validator.doc.paths);

/** Key headers a peer may send: right, wrong, missing, doubled, in the wrong header, odd bytes. */
const keyHeaders = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<Array<[string, string | Buffer]>>([['SvcKey', KEY]], [['C2SKey', KEY]], [['SvcKey', KEY], ['C2SKey', KEY]]) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constant<Array<[string, string | Buffer]>>([]),
      fc.constant<Array<[string, string | Buffer]>>([['Authorization', `Bearer ${KEY}`]]),
      fc.constant<Array<[string, string | Buffer]>>([['SvcKey', KEY], ['C2SKey', `${KEY}x`]]),
      fc.constant<Array<[string, string | Buffer]>>([['SvcKey', KEY], ['SvcKey', KEY]]),
      fc.constant<Array<[string, string | Buffer]>>([['SvcKey', 'k'.repeat(9000)]]),
      hostileString(30).map((s): Array<[string, string | Buffer]> => [['SvcKey', Buffer.from(s.replace(/[\u0000-\u001f\u007f]/g, ''), 'utf8')]]),
      mutateText(KEY).map((k): Array<[string, string | Buffer]> => [['SvcKey', k.replace(/[\u0000-\u001f\u007f-\uffff]/g, '')]]),
    ),
  },
);

function queryOf(pairs: ReadonlyArray<readonly [string, string]>): string {
  return pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${encodeText(k)}=${encodeText(v)}`).join('&')}`;
}

function listRequest(cursors: readonly string[]): fc.Arbitrary<RawRequest> {
  const param = fc.oneof(
    fc.tuple(fc.constant('sortorder'), fc.oneof(fc.constantFrom('asc', 'desc'), mutateText('asc'))),
    fc.tuple(fc.constant('jobid'), fc.oneof(fc.integer().map(String), mutateText('123'), fc.constantFrom('-1', '1e3', '9'.repeat(30), '0x10', ' 7', '١٢'))),
    fc.tuple(fc.constant('offset'), fc.oneof(fc.nat({ max: 300 }).map(String), mutateText('20'), fc.constantFrom('-1', '1.5', '99999999999999999999'))),
    fc.tuple(fc.constant('next'), fc.oneof(fc.constantFrom(...cursors), fc.constantFrom(...cursors).chain(mutateText), fc.base64String({ maxLength: 120 }))),
    fc.tuple(fc.constant('limit'), fc.oneof(fc.nat({ max: 2000 }).map(String), mutateText('5'))),
    fc.tuple(fc.constant('id'), hostileId),
    fc.tuple(hostileString(6), hostileString(6)),
  );
  // Mostly a valid request with one or two parameters mutated or added, so the walk reaches the adapter.
  const base = fc.tuple(fc.constantFrom('asc', 'desc'), fc.nat({ max: 1e6 })).map(([s, j]): Array<[string, string]> => [['sortorder', s], ['jobid', String(j)]]);
  const pairs = fc.oneof({ weight: 3, arbitrary: fc.tuple(base, fc.array(param, { maxLength: 2 })).map(([b, extra]) => [...b.filter(([k]) => !extra.some(([e]) => e === k)), ...extra]) }, { weight: 1, arbitrary: fc.array(param, { maxLength: 5 }) });
  return fc.tuple(fc.constantFrom(...ENTITIES), pairs, keyHeaders).map(([entity, pairs, headers]) => ({
    method: 'GET',
    target: `/${entity}${queryOf(pairs)}`,
    headers,
    label: 'list',
  }));
}

const byIdRequest: fc.Arbitrary<RawRequest> = fc.tuple(fc.constantFrom(...ENTITIES), hostileId, keyHeaders).map(([entity, id, headers]) => ({
  method: 'GET',
  target: `/${entity}/${encodeText(id) || '%20'}`,
  headers,
  label: 'by-id',
}));

function writeRequest(validIds: Record<(typeof ENTITIES)[number], string[]>): fc.Arbitrary<RawRequest> {
  const items = { products: [demoProduct(1), demoProduct(2), { _id: 'fuzz-new' }], orders: [demoOrder(1, 10), demoOrder(2, 10)] };
  return fc.constantFrom(...ENTITIES).chain((entity) =>
    fc
      .tuple(
        fc.array(
          fc.oneof(
            fc.tuple(fc.constant('id'), fc.oneof(fc.constantFrom(...validIds[entity]), hostileId)),
            fc.tuple(fc.constant('jobid'), fc.oneof(fc.nat().map(String), mutateText('7'))),
          ),
          { maxLength: 3 },
        ),
        hostileBody(items[entity]),
        contentType,
        keyHeaders,
      )
      .map(([pairs, body, type, headers]) => ({
        method: 'POST',
        target: `/${entity}${queryOf(pairs)}`,
        headers: [...headers, ...(type ? [['Content-Type', type] as [string, string]] : [])],
        body,
        label: 'write',
      })),
  );
}

const oddRequest: fc.Arbitrary<RawRequest> = fc
  .tuple(fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'GET', 'POST'), fc.constantFrom('/products', '/orders', '/products/x/y', '/', '/%', '/orders/%E0%A4%A', '/products/..%2f..%2fetc', '/openapi.json'), hostileBody([{}]), keyHeaders)
  .map(([method, target, body, headers]) => ({ method, target, headers: [...headers, ['Content-Type', 'application/json']], body: method === 'GET' || method === 'HEAD' ? (body.length % 2 ? body : undefined) : body, label: 'odd' }));

/** The targeted item's stored JSON (or absence), and the entity's count: what a refused write must not change. */
async function snapshot(adapter: StoreAdapter, entity: (typeof ENTITIES)[number], id: string | undefined): Promise<string> {
  const signal = AbortSignal.timeout(10_000);
  const store = adapter[entity];
  const item = id === undefined ? undefined : await store.get(id, { signal }).catch(() => 'unreadable');
  return JSON.stringify([item ?? null, await store.count({ signal })]);
}

/** The id a write request targets: its query `id`, else its body `_id`. */
function targetOf(req: RawRequest): string | undefined {
  const query = new URLSearchParams(req.target.split('?')[1] ?? '');
  const fromQuery = query.getAll('id');
  if (fromQuery.length === 1) return fromQuery[0];
  try {
    const id = (JSON.parse(req.body?.toString('utf8') ?? '') as { _id?: unknown })._id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

async function fuzzStore(name: string, adapter: StoreAdapter): Promise<void> {
  const app = express();
  app.use(createStoreRouter({ adapter, svcKeys: [KEY], rateLimit: { limit: 1_000_000, failedAuth: { limit: 1_000_000 } }, pageSize: 5 }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  try {
    // Real cursors to mutate: the first pages of each entity, both ways.
    const cursors: string[] = [];
    for (const entity of ENTITIES) {
      for (const sortorder of ['asc', 'desc']) {
        const res = await sendRaw(port, { method: 'GET', target: `/${entity}?sortorder=${sortorder}&jobid=1&limit=3`, headers: [['SvcKey', KEY]], label: 'seed' });
        const next = (JSON.parse(res.body.toString()) as { paging: { next?: string } }).paging.next;
        if (next) cursors.push(next);
      }
    }
    const signal = AbortSignal.timeout(10_000);
    const validIds = {
      products: (await adapter.products.list({ sortorder: 'asc', limit: 3, signal })).map((x) => x._id),
      orders: (await adapter.orders.list({ sortorder: 'asc', limit: 3, signal })).map((x) => x._id),
    };
    const requests = fc.oneof({ weight: 4, arbitrary: listRequest(cursors) }, { weight: 2, arbitrary: byIdRequest }, { weight: 4, arbitrary: writeRequest(validIds) }, { weight: 1, arbitrary: oddRequest });
    const result = await fuzz(name, requests, async (req) => {
      const entity = ENTITIES.find((e) => req.target.startsWith(`/${e}`)) ?? 'products';
      const isWrite = req.method === 'POST' && (req.target.startsWith('/products') || req.target.startsWith('/orders'));
      const target = isWrite ? targetOf(req) : undefined;
      const before = isWrite ? await snapshot(adapter, entity, target) : '';
      const res = await sendRaw(port, req);
      const verdict = judge(req, res, validator, TEMPLATES);
      const problems = [...verdict.problems];
      const succeeded = res.status === 200 && (verdict.json as { success?: unknown } | undefined)?.success === true;
      if (isWrite && !succeeded) {
        const after = await snapshot(adapter, entity, target);
        if (after !== before) problems.push(`a refused write (${res.status}) changed the store: ${before.slice(0, 120)} -> ${after.slice(0, 120)}`);
      }
      return { status: res.status, problems };
    });
    console.log(`${name}: ${result.sent} requests, statuses ${JSON.stringify(result.statuses)}`);
    expect(result.failures).toEqual([]);
    expect(result.sent).toBe(FUZZ_RUNS);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

const TIMEOUT = 60_000 + FUZZ_RUNS * 60;

describe('store webhooks fuzz', () => {
  it(`memory: ${FUZZ_RUNS} requests`, async () => fuzzStore('memory', createMemoryAdapter(demoCatalog(40))), TIMEOUT);

  it(`SQLite: ${FUZZ_RUNS} requests`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-fuzz-'));
    const adapter = await openSqlAdapter(`sqlite:${path.join(dir, 'fuzz.db')}`);
    try {
      const { products, orders } = demoCatalog(40);
      for (const p of products) await adapter.products.upsert(p, { lastUpdated: 'keep', now: Date.now(), signal: AbortSignal.timeout(5000) });
      for (const o of orders) await adapter.orders.upsert(o, { lastUpdated: 'keep', now: Date.now(), signal: AbortSignal.timeout(5000) });
      await fuzzStore('sqlite', adapter);
    } finally {
      await adapter.close?.();
      rmSync(dir, { recursive: true, force: true });
    }
  }, TIMEOUT);
});

describeDatabase('postgres', 'store webhooks fuzz on PostgreSQL', () => {
  const db = sharedDatabase('postgres');
  afterAll(() => db.close());
  it(`PostgreSQL: ${FUZZ_RUNS} requests`, async () => {
    const adapter = await createSqlAdapter({ db: db.db(), tablePrefix: uniquePrefix() });
    const { products, orders } = demoCatalog(40);
    for (const p of products) await adapter.products.upsert(p, { lastUpdated: 'keep', now: Date.now(), signal: AbortSignal.timeout(5000) });
    for (const o of orders) await adapter.orders.upsert(o, { lastUpdated: 'keep', now: Date.now(), signal: AbortSignal.timeout(5000) });
    await fuzzStore('postgres', adapter);
  }, TIMEOUT);
});
