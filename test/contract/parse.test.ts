import {
  OrderSchema,
  PagingSchema,
  ProductSchema,
  findForbiddenKey,
  findUnknownFields,
  parseWire,
} from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';

describe('parseWire', () => {
  it('accepts every demo item unchanged', () => {
    const { products, orders } = demoCatalog(40);
    for (const p of products) expect(parseWire(ProductSchema, p)).toEqual({ ok: true, value: p, unknownFields: [] });
    for (const o of orders) expect(parseWire(OrderSchema, o)).toEqual({ ok: true, value: o, unknownFields: [] });
  });

  it('strips unknown members and reports each with its path, at any depth', () => {
    const r = parseWire(ProductSchema, {
      _id: 'p',
      colour: 'red',
      variations: [{ size: 'M', stock: 4, prices: [{ tag: 'default', currency: 'EUR', number: 1, tax: 0.2 }] }],
      properties: [{ extraattributes: { anything: 'goes' } }],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.unknownFields).toEqual(['colour', 'variations.0.stock', 'variations.0.prices.0.tax']);
    expect(r.value).toEqual({
      _id: 'p',
      variations: [{ size: 'M', prices: [{ tag: 'default', currency: 'EUR', number: 1 }] }],
      properties: [{ extraattributes: { anything: 'goes' } }],
    });
    expect(r.value).not.toHaveProperty('colour');
  });

  it('says which field has the wrong type', () => {
    const r = parseWire(OrderSchema, { _id: 'o', orderItems: [{ id: 'a', quantity: '3' }] }, 'order');
    expect(r).toMatchObject({ ok: false });
    expect(!r.ok && r.error).toMatch(/^order\.orderItems\.0\.quantity: /);
  });

  it('requires _id and nothing else', () => {
    expect(parseWire(ProductSchema, {}).ok).toBe(false);
    expect(parseWire(ProductSchema, { _id: '' }).ok).toBe(false);
    expect(parseWire(OrderSchema, { _id: 'x' }).ok).toBe(true);
  });

  it('refuses prototype-polluting keys anywhere, even inside free-form extraattributes', () => {
    const body = JSON.parse('{"_id":"p","properties":[{"extraattributes":{"__proto__":{"polluted":"yes"}}}]}');
    const r = parseWire(ProductSchema, body, 'product');
    expect(r).toEqual({ ok: false, error: 'product.properties.0.extraattributes.__proto__: this key name is not allowed', unknownFields: [] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(findForbiddenKey(JSON.parse('[{"a":{"constructor":{}}}]'))).toBe('.0.a.constructor');
    expect(ProductSchema.safeParse({ _id: 'p', properties: [{ extraattributes: { prototype: 'x' } }] }).success).toBe(false);
  });

  it('rating stays within 0.0 to 5.0', () => {
    expect(OrderSchema.safeParse({ _id: 'o', rating: 5 }).success).toBe(true);
    expect(OrderSchema.safeParse({ _id: 'o', rating: 5.5 }).success).toBe(false);
    expect(OrderSchema.safeParse({ _id: 'o', rating: -0.1 }).success).toBe(false);
  });

  it('paging: offset and next are each optional, counts are non-negative integers', () => {
    expect(PagingSchema.safeParse({ pageSize: 20, itemsTotal: 537, offset: 40, next: 'abc' }).success).toBe(true);
    expect(PagingSchema.safeParse({ pageSize: 20, itemsTotal: 537 }).success).toBe(true);
    expect(PagingSchema.safeParse({ pageSize: -1, itemsTotal: 0 }).success).toBe(false);
    expect(PagingSchema.safeParse({ pageSize: 1.5, itemsTotal: 0 }).success).toBe(false);
  });

  it('findUnknownFields does not descend into records', () => {
    expect(findUnknownFields(ProductSchema, { _id: 'p', properties: [{ extraattributes: { x: '1' }, extra: 1 }] })).toEqual(['properties.0.extra']);
  });
});

describe('the key walks, on random JSON (fast-check)', () => {
  const fc = require('fast-check') as typeof import('fast-check');
  const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', '_id', 'sku', 'variations', 'prices', 'extra'), fc.string({ maxLength: 4 }));
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 0 }), tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    // Built from text, as a request body is: JSON.parse makes "__proto__" an own member.
    object: fc.array(fc.tuple(key, tie('value')), { maxLength: 5 }).map((entries) => JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`)),
  })).value;

  /** Every forbidden key's path, in document order: the plainest possible walk. */
  function allForbidden(value: unknown, path: string, out: string[]): string[] {
    if (Array.isArray(value)) value.forEach((v, i) => allForbidden(v, `${path}.${i}`, out));
    else if (value && typeof value === 'object') {
      for (const k of Object.keys(value)) {
        const child = path ? `${path}.${k}` : k;
        if (['__proto__', 'constructor', 'prototype'].includes(k)) out.push(child);
        allForbidden((value as Record<string, unknown>)[k], child, out);
      }
    }
    return out;
  }

  it('findForbiddenKey names the first forbidden key in document order, or none', () => {
    fc.assert(
      fc.property(json, fc.constantFrom('', 'order'), (value, label) => {
        const first = allForbidden(value, label, [])[0];
        expect(findForbiddenKey(value, label)).toBe(first);
      }),
      { numRuns: 500 },
    );
  });

  it('findUnknownFields lists exactly the top-level members ProductSchema lacks, with nested paths below declared ones', () => {
    fc.assert(
      fc.property(fc.dictionary(key.filter((k) => !k.includes('.')), json, { maxKeys: 6 }), (members) => {
        const product = { _id: 'p', ...members };
        const found = findUnknownFields(ProductSchema, product);
        const declared = Object.keys(ProductSchema.shape);
        for (const k of Object.keys(product)) {
          if (!declared.includes(k)) expect(found).toContain(k);
        }
        for (const p of found) {
          const [top] = p.split('.');
          expect(Object.keys(product)).toContain(top);
          if (p === top) expect(declared).not.toContain(top);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('parseWire refuses exactly the values with a forbidden key (naming it), else reports the same unknown fields as findUnknownFields', () => {
    fc.assert(
      fc.property(fc.dictionary(key, json, { maxKeys: 6 }), (members) => {
        const product = { _id: 'p', ...members };
        const forbidden = allForbidden(product, 'product', [])[0];
        const r = parseWire(ProductSchema, product, 'product');
        if (forbidden) expect(r).toEqual({ ok: false, error: `${forbidden}: this key name is not allowed`, unknownFields: [] });
        else expect(r.unknownFields).toEqual(findUnknownFields(ProductSchema, product, 'product'));
      }),
      { numRuns: 300 },
    );
  });
});
