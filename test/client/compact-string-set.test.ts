import fc from 'fast-check';
import { CompactStringSet } from '../../lib/client/compact-string-set';

describe('CompactStringSet', () => {
  it('behaves as a Set<string> for any sequence of adds and lookups (fast-check)', () => {
    // Short ids that collide in prefixes, any Unicode (multi-byte UTF-8), the empty string, and long
    // strings (multi-byte varint lengths, scratch buffer growth).
    const str = fc.oneof(
      fc.constantFrom('', 'a', 'prod-000001', 'prod-000010', 'é', '😀', '\u0000'),
      fc.string({ maxLength: 12 }),
      fc.string({ unit: 'grapheme', maxLength: 8 }),
      fc.string({ minLength: 100, maxLength: 400 }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), str), { maxLength: 300 }), (ops) => {
        const model = new Set<string>();
        const set = new CompactStringSet();
        for (const [isAdd, s] of ops) {
          if (isAdd) expect(set.add(s)).toBe(!model.has(s));
          else expect(set.has(s)).toBe(model.has(s));
          if (isAdd) model.add(s);
          expect(set.size).toBe(model.size);
        }
        for (const s of model) expect(set.has(s)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps 200,000 ids exactly through many table growths, in about 21 bytes each', () => {
    const set = new CompactStringSet();
    const id = (i: number) => `prod-${String(i).padStart(6, '0')}`;
    let added = 0;
    for (let i = 0; i < 200_000; i++) if (set.add(id(i))) added++;
    expect(added).toBe(200_000);
    let again = 0;
    for (let i = 0; i < 200_000; i += 7) if (set.add(id(i))) again++;
    expect(again).toBe(0);
    expect(set.size).toBe(200_000);
    expect(set.has('prod-200000')).toBe(false);
    expect(set.has(id(199_999))).toBe(true);
    // 11 bytes + 1 length byte per id (plus at most one chunk of slack), 4 bytes per slot at
    // a load between 3/8 and 3/4.
    expect(set.byteSize).toBeLessThan(200_000 * (12 + 4 / 0.375) + 2 ** 20);
  });

  it('holds a string longer than a chunk, and the strings around it', () => {
    const set = new CompactStringSet();
    const huge = 'x'.repeat(1_500_000);
    expect(set.add('before')).toBe(true);
    expect(set.add(huge)).toBe(true);
    expect(set.add('after')).toBe(true);
    expect(set.has(huge)).toBe(true);
    expect(set.has(huge.slice(1))).toBe(false);
    expect([set.add(huge), set.add('before'), set.add('after'), set.size]).toEqual([false, false, false, 3]);
  });
});
