/** The cursor codec and the page-budget arithmetic built on it. */
import fc from 'fast-check';
import { InvalidCursorError } from '../../lib/server';
import { CursorCodec } from '../../lib/server/cursor';
import { maxPagingLength } from '../../lib/server/read-core';

const positionArb = fc.record({
  entity: fc.constantFrom('products' as const, 'orders' as const),
  sortorder: fc.constantFrom('asc' as const, 'desc' as const),
  after: fc.record({ last_updated: fc.nat({ max: Number.MAX_SAFE_INTEGER }), _id: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 256 }) }),
});

describe('CursorCodec', () => {
  const codec = new CursorCodec(Buffer.from('0123456789abcdef-secret'));

  it('round-trips every position, with URL-safe characters only', () => {
    fc.assert(
      fc.property(positionArb, (position) => {
        const token = codec.encode(position);
        expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(codec.decode(token, position)).toEqual(position.after);
      }),
    );
  });

  it('encodedLength is the exact length of encode, and maxPagingLength the exact paging length', () => {
    fc.assert(
      fc.property(positionArb, fc.integer({ min: 0, max: 100_000 }), fc.option(fc.nat({ max: Number.MAX_SAFE_INTEGER }), { nil: undefined }), (position, pageSize, offset) => {
        const next = codec.encode(position);
        expect(CursorCodec.encodedLength(position)).toBe(next.length);
        const paging = JSON.stringify({ pageSize, itemsTotal: Number.MAX_SAFE_INTEGER, offset, next });
        expect(maxPagingLength(pageSize, offset, next.length)).toBe(paging.length);
      }),
    );
  });

  it('refuses any single-character change', () => {
    const position = { entity: 'products' as const, sortorder: 'asc' as const, after: { last_updated: 42, _id: 'p-1' } };
    const token = codec.encode(position);
    for (let i = 0; i < token.length; i++) {
      const c = token[i] === 'A' ? 'B' : 'A';
      const changed = token.slice(0, i) + c + token.slice(i + 1);
      expect(() => codec.decode(changed, position)).toThrow(InvalidCursorError);
    }
  });
});
