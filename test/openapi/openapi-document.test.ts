/**
 * The OpenAPI document is a valid OpenAPI 3.1 document (swagger-parser against the official 3.1
 * schema, with every $ref resolved), every schema in it compiles in Ajv's strict draft 2020-12 mode,
 * the checks swagger-parser leaves out for 3.x hold (path templates declared, unique operation
 * ids), and its schemas accept and refuse what the contract's zod schemas do.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { z } from 'zod';
import { createOpenApiDocument, type OpenApiDocument } from '../../lib/openapi';
import { BY_IDS_HEADER, CONVERTERS, findForbiddenKey, MAX_BY_IDS, OrderSchema, ProductSchema, ReverseOrderSchema, ReverseProductSchema } from '../../lib/contract';
import { WEBHOOK_ROUTES as OPERATIONS } from '../../lib/contract';
import { InvalidOptionError } from '../../lib/errors';
import { demoCatalog } from '../../lib/demo';
import { DocumentValidator, pointer, templateRegex } from './openapi-helpers';

const full = createOpenApiDocument({ serverUrl: 'https://shop.example.com/sync' });

const variants: [string, OpenApiDocument][] = [
  ['both parts', full],
  ['webhooks only', createOpenApiDocument({ include: ['webhooks'] })],
  ['reverse only', createOpenApiDocument({ include: ['reverse'] })],
  ['custom webhook paths', createOpenApiDocument({ include: ['webhooks'], paths: { listProducts: '/api/catalog', getProduct: '/api/catalog/{id}', writeOrder: '/hooks/order' } })],
];

/** swagger-parser's verdict on each variant, and on a broken document (so the check itself can fail). */
const verdicts = new Map<string, { ok: boolean; openapi?: string; error?: string }>();
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'storebridge-openapi-'));
  try {
    const broken = { ...full, paths: { '/x': { get: { responses: { '200': { description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/Nowhere' } } } } } } } } };
    const files = [...variants, ['broken', broken] as [string, unknown]].map(([name, doc], i) => {
      const file = join(dir, `${i}.json`);
      writeFileSync(file, JSON.stringify(doc));
      return [name, file] as const;
    });
    const out = execFileSync(process.execPath, [join(__dirname, 'validate-openapi.cjs'), ...files.map(([, f]) => f)], { encoding: 'utf8', timeout: 30_000 });
    const lines = out.trim().split('\n').map((l) => JSON.parse(l));
    files.forEach(([name], i) => verdicts.set(name, lines[i]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('swagger-parser refuses a document with a dangling $ref (the validator really validates)', () => {
  expect(verdicts.get('broken')).toMatchObject({ ok: false, error: expect.stringMatching(/Nowhere|resolve|pointer/i) });
});

describe.each(variants)('OpenAPI document (%s)', (name, doc) => {
  it('validates as OpenAPI 3.1 with swagger-parser, every $ref resolving', () => {
    expect(verdicts.get(name)).toEqual(expect.objectContaining({ ok: true, openapi: '3.1.0' }));
  });

  it('has only schemas that compile in Ajv strict mode (draft 2020-12)', () => {
    const v = new DocumentValidator(doc);
    for (const name of Object.keys(doc.components.schemas)) expect(() => v.at(`/components/schemas/${pointer(name)}`)).not.toThrow();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        if (method === 'parameters') continue;
        for (const status of Object.keys(op.responses)) if (op.responses[status].content) v.responsePointer(method, path, Number(status));
        for (const [i, p] of (op.parameters ?? []).entries()) expect(() => v.at(`/paths/${pointer(path)}/${method}/parameters/${i}/schema`)).not.toThrow();
      }
    }
  });

  it('declares every path template parameter, and no other path parameter; operation ids are unique', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths) as [string, Record<string, any>][]) {
      const templated = (path.match(/\{([^}]+)\}/g) ?? []).map((t) => t.slice(1, -1)).sort();
      for (const [method, op] of Object.entries(item)) {
        if (method === 'parameters') continue;
        const declared = [...(item.parameters ?? []), ...(op.parameters ?? [])].filter((p: any) => p.in === 'path').map((p: any) => p.name).sort();
        expect({ path, method, declared }).toEqual({ path, method, declared: templated });
        expect(ids.has(op.operationId)).toBe(false);
        ids.add(op.operationId);
      }
    }
  });

  it('keeps no unreferenced component', () => {
    const text = JSON.stringify({ paths: doc.paths, schemas: doc.components.schemas });
    for (const name of Object.keys(doc.components.schemas)) expect(text).toContain(`"#/components/schemas/${name}"`);
  });
});

describe('store webhooks in the document', () => {
  it('describes the six operations at the router\'s default routes, each behind the SvcKey or the C2SKey header', () => {
    expect(full.components.securitySchemes).toEqual({
      SvcKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'SvcKey' }),
      C2SKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'C2SKey' }),
    });
    for (const [name, op] of Object.entries(OPERATIONS)) {
      const path = op.path.replace(':id', '{id}');
      const operation = (full.paths[path] as Record<string, any>)[op.method.toLowerCase()];
      expect(operation.operationId).toBe(name);
      expect(operation.security).toEqual([{ SvcKey: [] }, { C2SKey: [] }]);
      const statuses = Object.keys(operation.responses);
      expect(statuses).toEqual(expect.arrayContaining(['200', '400', '401', '429', '500']));
      if (op.kind === 'get') expect(statuses).toContain('404');
      if (op.kind === 'write') expect(statuses).toEqual(expect.arrayContaining(['413', '415']));
    }
  });

  it('lists the query parameters of the contract\'s tables on both list operations and writes, with their origin', () => {
    for (const path of ['/products', '/orders']) {
      const params = (full.paths[path] as any).get.parameters as any[];
      // Nothing is required: a missing sortorder means asc, a missing jobid is untracked (deployed callers send neither).
      expect(params.map((p) => [p.name, p.in, p.required, p['x-storebridge-origin']])).toEqual([
        ['sortorder', 'query', false, undefined],
        ['jobid', 'query', false, undefined],
        ['offset', 'query', false, undefined],
        ['next', 'query', false, undefined],
        ['limit', 'query', false, 'storebridge'],
        ['id', 'query', false, 'deployed'],
        ['ids', 'query', false, 'storebridge'],
      ]);
      expect(params[0].schema).toEqual({ type: 'string', enum: ['asc', 'desc'] });
      expect(params[2].schema).toMatchObject({ type: 'integer', minimum: 0 });
      // The batched by-ID read: one comma-separated value of 1 to MAX_BY_IDS ids.
      expect(params[6]).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', minItems: 1, maxItems: MAX_BY_IDS, items: { type: 'string', minLength: 1 } } });
      expect((full.paths[path] as any).get.responses['200'].headers[BY_IDS_HEADER].schema).toEqual({ type: 'integer', minimum: 1 });
    }
    // Without id (and without a body _id) a write creates the item.
    expect(((full.paths['/orders'] as any).post.parameters as any[]).map((p) => [p.name, p.required])).toEqual([['jobid', false], ['id', false]]);
  });

  it('generates each item component from the zod shape (every member, nothing else)', () => {
    for (const [name, schema] of [['Product', ProductSchema], ['Order', OrderSchema], ['ReverseProduct', ReverseProductSchema]] as const) {
      const component = full.components.schemas[name] as { properties: object; required: string[]; additionalProperties: boolean };
      expect(Object.keys(component.properties)).toEqual(Object.keys(schema.shape));
      expect(component.required).toEqual(['_id']);
      expect(component.additionalProperties).toBe(false);
    }
  });
});

describe('reverse connection in the document', () => {
  const reversePaths = Object.keys(full.paths).filter((p) => p.startsWith('/api/adapters/custom/reverse/connection/{connection_key}/'));

  it('has every {P}/… call of the spec with its exact spelling, plus the deployed ones and the kit\'s own', () => {
    const rel = reversePaths.map((p) => p.slice('/api/adapters/custom/reverse/connection/{connection_key}'.length));
    const spec = [
      '/upstreamstatus', '/entity', '/pull/initialize',
      '/pull/products/hasmore', '/pull/products/next', '/pull/products/{id}/succeded', '/pull/products/{id}/failed', '/pull/products/readyfornext',
      '/pull/orders/hasmore', '/pull/orders/next', '/pull/orders/{id}/succeded', '/pull/orders/{id}/failed', '/pull/orders/readyfornext',
      '/pingsample/products/finish', '/push/products/finish', '/pingsample/orders/finish', '/pingsample/finish', '/push/finish',
    ];
    const deployed = ['/ping', '/strategy', '/cursoroffset', '/pingsample/initialize', '/push/initialize', '/push/products', '/push/orders', '/pingsample/products', '/pingsample/orders', '/push/orders/finish', '/pull/products/finish', '/pull/orders/finish', '/pull/finish'];
    const storebridge = ['/mode'];
    expect(rel.sort()).toEqual([...spec, ...deployed, ...storebridge].sort());
  });

  it('needs no SvcKey there (the key is in the path) and documents 404 everywhere, 400 and 413 on every POST', () => {
    for (const path of reversePaths) {
      for (const [method, op] of Object.entries(full.paths[path] as Record<string, any>)) {
        if (method === 'parameters') continue;
        expect(op.security).toEqual([]);
        expect(op.responses['404']).toBeDefined();
        if (method === 'post') expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '413']));
      }
    }
  });
});

describe('options', () => {
  it.each([
    [{ include: [] }, 'include'],
    [{ include: ['graphql'] }, 'include'],
    [{ serverUrl: 'ftp://x' }, 'serverUrl'],
    [{ serverUrl: 'https://user:pw@x' }, 'serverUrl'],
    [{ paths: { listThings: '/x' } }, 'paths.listThings'],
    [{ paths: { getProduct: '/catalog' } }, 'paths.getProduct'],
    [{ paths: { listProducts: 'catalog' } }, 'paths.listProducts'],
    [{ paths: { listOrders: '/products' } }, 'paths.listOrders'],
    [{ paths: { listProducts: '/api/adapters/custom/reverse/connection/x' } }, 'paths.listProducts'],
    [{ titel: 'x' }, 'titel'],
  ])('%j is refused naming %s', (options, option) => {
    let err: unknown;
    try {
      createOpenApiDocument(options as never);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidOptionError);
    expect((err as InvalidOptionError).option).toBe(option);
  });

  it('writes the server URL and moved webhook paths', () => {
    const doc = createOpenApiDocument({ include: ['webhooks'], serverUrl: 'https://shop.example.com/sync/', paths: { listProducts: '/catalog' } });
    expect(doc.servers).toEqual([{ url: 'https://shop.example.com/sync' }]);
    expect(Object.keys(doc.paths)).toEqual(['/catalog', '/products/{id}', '/products', '/orders', '/orders/{id}']);
    expect(doc.components.schemas.PulledProduct).toBeUndefined();
  });
});

describe('the generated JSON Schemas agree with the zod schemas', () => {
  const v = new DocumentValidator(full);
  const catalog = demoCatalog(40);
  const productOut = v.at('/components/schemas/Product');
  const productIn = v.at('/components/schemas/ProductWriteBodyInput');
  const orderIn = v.at('/components/schemas/OrderWriteBodyInput');

  it('accepts every demo item in both directions', () => {
    for (const p of catalog.products) {
      expect(productOut(ProductSchema.parse(p))).toBe(true);
      expect(productIn(p)).toBe(true);
    }
    for (const o of catalog.orders) expect(orderIn(o)).toBe(true);
  });

  /** A demo item with the value at one path replaced by arbitrary JSON. */
  const mutated = (items: readonly object[]) =>
    fc.tuple(fc.constantFrom(...items), fc.nat(), fc.jsonValue({ maxDepth: 2 })).map(([item, pick, value]) => {
      const copy = structuredClone(item) as any;
      const slots: [any, string | number][] = [];
      const walk = (node: any) => {
        if (node && typeof node === 'object') for (const k of Object.keys(node)) (slots.push([node, Array.isArray(node) ? Number(k) : k]), walk(node[k]));
      };
      walk(copy);
      const [parent, key] = slots[pick % slots.length];
      parent[key] = value;
      return copy;
    });

  const agree = (schema: z.ZodType, validate: (x: unknown) => boolean) => (x: unknown) => {
    // The one zod rule JSON Schema does not carry: refusing __proto__/constructor/prototype keys (a refinement).
    fc.pre(findForbiddenKey(x) === undefined);
    expect(validate(x)).toBe(schema.safeParse(x).success);
  };

  it('refuses and accepts exactly what ProductSchema does (property)', () => {
    fc.assert(fc.property(mutated(catalog.products), agree(ProductSchema, productIn)), { numRuns: 400 });
  });

  it('refuses and accepts exactly what OrderSchema does (property)', () => {
    fc.assert(fc.property(mutated(catalog.orders), agree(OrderSchema, orderIn)), { numRuns: 400 });
  });

  it('refuses and accepts exactly what the reverse-form schemas do (property, strings for numbers)', () => {
    const reverseProducts = catalog.products.map((p) => CONVERTERS.products.toReverse(p));
    const reverseOrders = catalog.orders.map((o) => CONVERTERS.orders.toReverse(o));
    fc.assert(fc.property(mutated(reverseProducts), agree(ReverseProductSchema, v.at('/components/schemas/ReverseProductInput'))), { numRuns: 300 });
    fc.assert(fc.property(mutated(reverseOrders), agree(ReverseOrderSchema, v.at('/components/schemas/ReverseOrderInput'))), { numRuns: 300 });
  });

  it('reply schemas are closed: an undocumented member in a reply is caught', () => {
    expect(v.checkResponse('GET', '/products', 200, { paging: { pageSize: 0, itemsTotal: 0 }, products: [] })).toBe('');
    expect(v.checkResponse('GET', '/products', 200, { paging: { pageSize: 0, itemsTotal: 0 }, products: [], extra: 1 })).toMatch(/additional properties/);
    expect(v.checkResponse('GET', '/products', 200, { paging: { pageSize: 0, itemsTotal: 0 }, products: [{ _id: 'p', price: 1 }] })).toMatch(/additional properties/);
    expect(() => v.checkResponse('GET', '/products', 418, {})).toThrow(/does not list/);
  });

  it('path templates match only their own concrete paths', () => {
    expect(templateRegex('/products/{id}').test('/products/p%2F1')).toBe(true);
    expect(templateRegex('/products/{id}').test('/products')).toBe(false);
  });
});
