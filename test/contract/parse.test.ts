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
