import fc from 'fast-check';
import {
  ConversionError,
  canonicalDecimal,
  decimalStringToNumber,
  integerStringToNumber,
  numberToDecimalString,
  orderToReverse,
  orderToWebhook,
  productToReverse,
  productToWebhook,
  OrderSchema,
  ProductSchema,
  ReverseOrderSchema,
  ReverseProductSchema,
} from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';

describe('decimal money', () => {
  it('keeps the value of everyday prices in both directions', () => {
    for (const s of ['19.99', '0.1', '0.3', '1234567.89', '-5.5', '0', '7', '100']) {
      const n = decimalStringToNumber(s);
      expect(n).toBe(Number(s));
      expect(numberToDecimalString(n)).toBe(s);
    }
  });

  it('writes non-canonical spellings canonically, same value', () => {
    expect(numberToDecimalString(decimalStringToNumber('19.90'))).toBe('19.9');
    expect(numberToDecimalString(decimalStringToNumber('007'))).toBe('7');
    expect(numberToDecimalString(decimalStringToNumber('-0.00'))).toBe('0');
    expect(canonicalDecimal('-000.500')).toBe('-0.5');
  });

  it('never writes exponent notation', () => {
    expect(numberToDecimalString(1e21)).toBe('1000000000000000000000');
    expect(numberToDecimalString(1.5e-7)).toBe('0.00000015');
    expect(numberToDecimalString(-2.5e-10)).toBe('-0.00000000025');
    expect(numberToDecimalString(1.2345e25)).toBe('12345000000000000000000000');
  });

  it('refuses a decimal a JSON number cannot carry exactly instead of changing it', () => {
    expect(() => decimalStringToNumber('0.10000000000000000001', 'prices.0.number')).toThrow(ConversionError);
    expect(() => decimalStringToNumber('12345678901234567890.5')).toThrow(/without changing its value/);
    expect(() => decimalStringToNumber('1e5')).toThrow(/not a decimal/);
    expect(() => decimalStringToNumber('')).toThrow(ConversionError);
  });

  it('round-trips every finite double: number → string → same number (property)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const s = numberToDecimalString(n);
        expect(s).toMatch(/^-?\d+(\.\d+)?$/);
        expect(decimalStringToNumber(s)).toBe(Object.is(n, -0) ? 0 : n);
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips every price with up to 13 integer and 2 decimal digits: string → number → same string (property)', () => {
    const price = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 13n - 1n }), fc.integer({ min: 0, max: 99 }), fc.boolean())
      .map(([i, c, neg]) => canonicalDecimal(`${neg ? '-' : ''}${i}.${String(c).padStart(2, '0')}`));
    fc.assert(
      fc.property(price, (s) => {
        expect(numberToDecimalString(decimalStringToNumber(s))).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });

  it('integers: strings of safe integers only', () => {
    expect(integerStringToNumber('-12')).toBe(-12);
    expect(() => integerStringToNumber('1.5')).toThrow(/not an integer/);
    expect(() => integerStringToNumber('9007199254740993')).toThrow(/safe integer/);
  });
});

describe('resource converters', () => {
  const { products, orders } = demoCatalog(60);

  it('webhook → reverse gives the reverse form the spec defines (strings, no webhook-only members)', () => {
    const r = productToReverse(products[0]);
    expect(ReverseProductSchema.strict().safeParse({ ...r, variations: undefined }).success).toBe(true);
    expect(typeof r.variations![0].prices![0].number).toBe('string');
    expect(typeof r.variations![0].availabilities![0].quantity).toBe('string');
    expect(r).not.toHaveProperty('properties');
    expect(r.variations![0]).not.toHaveProperty('variationid');
    const o = orderToReverse(orders[0]);
    expect(typeof o.orderItems![0].quantity).toBe('string');
    expect(typeof o.orderItems![0].unitPrice).toBe('string');
    for (const k of ['shipments', 'rating', 'feedback', 'messages']) expect(o).not.toHaveProperty(k);
    expect(o.buyer).not.toHaveProperty('billingaddress');
    expect(ReverseOrderSchema.safeParse(o).success).toBe(true);
  });

  it('reverse → webhook → reverse is the identity on canonical data', () => {
    for (const p of products) {
      const r = productToReverse(p);
      expect(productToReverse(productToWebhook(r))).toEqual(r);
      expect(ProductSchema.safeParse(productToWebhook(r)).success).toBe(true);
    }
    for (const o of orders) {
      const r = orderToReverse(o);
      expect(orderToReverse(orderToWebhook(r))).toEqual(r);
      expect(OrderSchema.safeParse(orderToWebhook(r)).success).toBe(true);
    }
  });

  it('webhook → reverse → webhook keeps every member both forms share (property over random prices)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ tag: fc.string(), currency: fc.constantFrom('USD', 'EUR'), number: fc.double({ noNaN: true, noDefaultInfinity: true }) }), { maxLength: 4 }),
        fc.array(fc.record({ tag: fc.string(), quantity: fc.integer() }), { maxLength: 4 }),
        (prices, availabilities) => {
          const p = { _id: 'x', last_updated: 5, title: 't', variations: [{ size: 'M', prices, availabilities }] };
          const back = productToWebhook(productToReverse(p));
          expect(back).toEqual({ ...p, variations: [{ size: 'M', prices: prices.map((x) => ({ ...x, number: Object.is(x.number, -0) ? 0 : x.number })), availabilities }] });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('names the offending field when a value cannot convert', () => {
    const bad = { _id: 'o', orderItems: [{ id: 'a', quantity: '1' }, { id: 'b', quantity: '2', unitPrice: '0.100000000000000000001' }] };
    expect(() => orderToWebhook(bad)).toThrow(/orderItems\.1\.unitPrice/);
  });

  it('keeps absent members absent', () => {
    expect(productToReverse({ _id: 'bare' })).toEqual({ _id: 'bare' });
    expect(orderToWebhook({ _id: 'bare' })).toEqual({ _id: 'bare' });
  });
});
