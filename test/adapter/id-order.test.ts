import fc from 'fast-check';
import { compareIds, compareKeys } from '../../lib/adapter-kit';

/** The databases' order: UTF-8 bytes (SQLite BINARY, PostgreSQL COLLATE "C", MariaDB binary). */
const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const sign = (n: number) => Math.sign(n);

/** Strings that mix ASCII, U+E000–U+FFFF and astral characters: where UTF-16 and code-point orders part. */
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom('a', 'z', '0', '~'),
    fc.integer({ min: 0xe000, max: 0xfffd }).map((c) => String.fromCodePoint(c)),
    fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
    fc.integer({ min: 0x80, max: 0xd7ff }).map((c) => String.fromCodePoint(c)),
  ),
  maxLength: 6,
});

describe('compareIds: code-point (UTF-8 byte) order', () => {
  it('agrees with UTF-8 byte order on any well-formed strings', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => sign(compareIds(a, b)) === sign(byUtf8(a, b))), { numRuns: 2000 });
    fc.assert(fc.property(tricky, tricky, (a, b) => sign(compareIds(a, b)) === sign(byUtf8(a, b))), { numRuns: 5000 });
  });

  it('orders an astral character after U+FF61, unlike JS <', () => {
    const emoji = '\u{1F600}';
    const halfwidth = '\uFF61';
    expect(emoji < halfwidth).toBe(true); // UTF-16 code units: the bug this function exists for
    expect(compareIds(emoji, halfwidth)).toBeGreaterThan(0);
    expect(compareIds('𠮷', '\uE000')).toBeGreaterThan(0);
    expect(compareIds('a', 'ab')).toBeLessThan(0);
    expect(compareIds('same', 'same')).toBe(0);
  });

  it('compareKeys breaks last_updated ties with it, and sorts like the databases', () => {
    fc.assert(
      fc.property(fc.array(tricky, { minLength: 2, maxLength: 30 }), (ids) => {
        const keys = ids.map((_id) => ({ last_updated: 7, _id }));
        const ours = [...keys].sort(compareKeys).map((k) => k._id);
        const dbs = [...ids].sort(byUtf8);
        expect(ours).toEqual(dbs);
      }),
    );
  });
});
