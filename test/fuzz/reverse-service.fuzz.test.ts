/**
 * Fuzzes the reverse-connection service over real HTTP: every `{P}/…` call with valid, unknown,
 * malformed and hostile keys and path ids, valid, mutated and hostile bodies (depth bombs, NULs,
 * Latin-1 bytes, numbers where strings belong), the operator routes with malformed references, in
 * random order while transactions are queued and run. Every reply must be a JSON object (deployed
 * daemons parse every body whatever the status), never a 5xx, never a leak, true to the OpenAPI
 * document; a refused call (4xx) must leave the service's store as it was.
 */
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express from 'express';
import fc from 'fast-check';
import { createMemoryAdapter } from '../../adapters/memory';
import { isRawJson, type StoreAdapter } from '../../lib/adapter';
import { REVERSE_BASE_PATH, REVERSE_ROUTES } from '../../lib/contract';
import { productToReverse, orderToReverse } from '../../lib/contract/converters';
import { demoCatalog, demoOrder, demoProduct } from '../../lib/demo';
import { createOpenApiDocument } from '../../lib/openapi';
import { createReverseNodeHandler, createReverseServiceRouter } from '../../lib/reverse';
import { DocumentValidator } from '../openapi/openapi-helpers';
import { contentType, encodeText, FUZZ_RUNS, fuzz, hostileBody, hostileId, hostileString, judge, sendRaw, type RawRequest } from './fuzz-kit';

const KEY = 'FUZZREVERSEKEY0123456789';
const NAME = 'fuzz-shop';
const validator = new DocumentValidator(createOpenApiDocument({ include: ['reverse'] }));
const TEMPLATES = Object.keys(validator.doc.paths);

const reverseItems = [
  { product: productToReverse(demoProduct(1)) },
  { order: orderToReverse(demoOrder(1, 10)) },
  { products: [productToReverse(demoProduct(2)), productToReverse(demoProduct(3))] },
  { orders: [orderToReverse(demoOrder(2, 10))] },
  // What deployed daemons send: numbers, epoch-ms dates, no _id, data: images.
  { order: { orderid: 'tmp-5f2b', dateCreated: 1517360038797, total: { amount: 450, currency: 'MXN' }, orderItems: [{ id: 'SKU-000001', quantity: 1, unitPrice: 450 }], buyer: { id: 223369408 } } },
  { products: [{ _id: 'A1', sku: 'A1', last_updated: '1517360038797 - 3', variations: [{ images: [{ url: 'data:image/png;base64,iVBORw0KGgo=' }], availabilities: [{ tag: 'default', quantity: 5 }] }] }] },
  { error: 'could not pull product', reasons: [{ message: 'protected', code: 400 }] },
  {},
];

/** A key segment: right (mostly), unknown, malformed percent-encoding, hostile. */
const keySegment = fc.oneof(
  { weight: 8, arbitrary: fc.constant(KEY) },
  { weight: 2, arbitrary: fc.oneof(fc.constantFrom('%', '%zz', '%E0%A4%A', 'unknown-key', '', '..'), hostileString(10).map(encodeText)) },
);

/** An id in a path segment, raw as deployed daemons send it (no encoding) when it is URL-safe, else encoded. */
const idSegment = fc.oneof(
  fc.constantFrom('prod-000001', 'SKU-000001', 'ord-000001', '100001', 'tmp-5f2b'),
  hostileId.map((id) => encodeText(id) || 'x'),
  fc.constantFrom('%', '%00', 'a%00b', '%F0%9F%98%80', '%ED%A0%80'),
);

const daemonCall: fc.Arbitrary<RawRequest> = fc
  .tuple(fc.constantFrom(...REVERSE_ROUTES), keySegment, idSegment, hostileBody(reverseItems), contentType, fc.boolean(), fc.integer({ min: 0, max: 9 }))
  .map(([route, key, id, body, type, latin1, odd]) => {
    const method = odd === 0 ? 'PUT' : route.method;
    const path = route.path.replace(':id', id);
    const sendBody = method === 'POST' || odd === 1;
    // Some deployed daemons send Latin-1 bytes labelled application/json.
    const bytes = latin1 && sendBody ? Buffer.from(body.toString('utf8'), 'latin1') : body;
    return {
      method,
      target: `${REVERSE_BASE_PATH}/${key}${path}`,
      headers: sendBody && type ? [['Content-Type', type] as [string, string]] : [],
      body: sendBody ? bytes : undefined,
      label: `daemon ${route.name}`,
    };
  });

const operatorCall: fc.Arbitrary<RawRequest> = fc
  .tuple(
    fc.constantFrom('status', 'queue', ''),
    fc.oneof(fc.constantFrom(NAME, KEY, '%', '%zz', '%E0%A4%A', 'nobody'), hostileString(8).map(encodeText)),
    fc.oneof(
      fc.constantFrom({ kind: 'push' }, { kind: 'pull' }, { kind: 'pull', entity: 'orders' }, { kind: 'pingsample' }, { kind: 'cancel' }, { kind: 'x' }).map((b) => Buffer.from(JSON.stringify(b))),
      hostileBody([{ kind: 'push' }]),
    ),
  )
  .map(([what, ref, body]) =>
    what === ''
      ? { method: 'GET', target: '/connections', headers: [], label: 'operator list' }
      : what === 'status'
        ? { method: 'GET', target: `/connections/${ref}/status`, headers: [], label: 'operator status' }
        : { method: 'POST', target: `/connections/${ref}/queue`, headers: [['Content-Type', 'application/json'] as [string, string]], body, label: 'operator queue' },
  );

const rootCall: fc.Arbitrary<RawRequest> = fc.constantFrom<RawRequest>(
  { method: 'GET', target: '/', headers: [], label: 'reachability' },
  { method: 'GET', target: '/nowhere', headers: [], label: 'unknown path' },
  { method: 'POST', target: `${REVERSE_BASE_PATH}/${KEY}`, headers: [], body: Buffer.from('{}'), label: 'bare key' },
);

async function contentHash(store: StoreAdapter): Promise<string> {
  const signal = AbortSignal.timeout(5000);
  const all = [...(await store.products.list({ sortorder: 'asc', limit: 1e6, signal })), ...(await store.orders.list({ sortorder: 'asc', limit: 1e6, signal }))];
  return createHash('sha256').update(all.map((x) => (isRawJson(x) ? x.json : JSON.stringify(x))).join('\n')).digest('hex');
}

/** The service over one binding: the Express router, or the plain node:http handler. */
function serve(binding: 'express' | 'node', store: StoreAdapter): Server {
  const options = { adapter: store, connections: [{ key: KEY, name: NAME }], answerRoot: true };
  if (binding === 'node') return createServer(createReverseNodeHandler(options));
  // A host app mounting the router owns its other paths; this one answers them in JSON, as docs/reverse-connection.md advises.
  const app = express();
  app.use(createReverseServiceRouter(options));
  app.use((_req, res) => void res.status(404).json({ error: 'not found' }));
  return createServer(app);
}

describe('reverse service fuzz', () => {
  it.each(['express', 'node'] as const)(`%s binding: ${FUZZ_RUNS} requests`, async (binding) => {
    const store = createMemoryAdapter(demoCatalog(12));
    const server = serve(binding, store);
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const requests = fc.oneof({ weight: 12, arbitrary: daemonCall }, { weight: 3, arbitrary: operatorCall }, { weight: 1, arbitrary: rootCall });
      const result = await fuzz(`reverse/${binding}`, requests, async (req) => {
        const before = await contentHash(store);
        const res = await sendRaw(port, req);
        const verdict = judge(req, res, validator, TEMPLATES);
        const problems = [...verdict.problems];
        if (res.status >= 400 && res.status < 500 && (await contentHash(store)) !== before) problems.push(`a refused call (${res.status}) changed the store`);
        return { status: res.status, problems };
      });
      console.log(`reverse/${binding}: ${result.sent} requests, statuses ${JSON.stringify(result.statuses)}`);
      expect(result.failures).toEqual([]);
      expect(result.sent).toBe(FUZZ_RUNS);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }, 60_000 + FUZZ_RUNS * 60);
});
