/**
 * The mapping file without a database: its parser's messages, the shipped JSON Schema (generated
 * from the zod schema, so it cannot drift), the examples in docs/mapping.md, the ISO text helpers
 * (a round-trip property) and the keyset bound of coarse time columns.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { InvalidMappingError, mappingJsonSchema, parseMapping, readMappingFile } from '../../adapters/mapped';
import { formatIso, isoFormatOf, parseIso, storableMs, timeBound, type TimeKey } from '../../adapters/mapped/mapped-keys';

const ROOT = join(__dirname, '..', '..');

const flat = () => ({
  version: 1,
  products: { table: 'products', id: 'id', lastUpdated: { column: 'updated_at', type: 'iso-text' }, fields: { sku: 'sku', title: 'name' } },
});

function problem(input: unknown): string {
  try {
    parseMapping(input);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidMappingError);
    return (err as Error).message;
  }
  throw new Error('no error');
}

describe('parseMapping', () => {
  test('normalizes shorthand columns, objects, constants, JSON paths and child tables', () => {
    const m = parseMapping({
      version: 1,
      products: {
        table: 'shop.items',
        id: { column: 'code', sortColumn: 'code_bytes' },
        lastUpdated: { column: 'changed', type: 'epoch-s' },
        fields: {
          title: 'name',
          brand: { column: 'attrs', path: 'maker.name' },
          variations: { table: 'variants', key: 'item_code', orderBy: 'pos', fields: { size: 'size', prices: { fromRow: { tag: { const: 'default' }, currency: { const: 'EUR' }, number: 'price' } } }, writes: { update: ['size'] } },
        },
        writes: { update: ['name'] },
      },
    });
    expect(m.products).toEqual({
      entity: 'products',
      table: 'shop.items',
      id: { column: 'code', sortColumn: 'code_bytes' },
      lastUpdated: { column: 'changed', type: 'epoch-s' },
      fields: {
        title: { kind: 'column', column: 'name', path: [], leaf: 'string' },
        brand: { kind: 'column', column: 'attrs', path: ['maker', 'name'], leaf: 'string' },
        variations: {
          kind: 'table',
          table: 'variants',
          key: 'item_code',
          parentKey: 'code',
          orderBy: 'pos',
          fields: {
            size: { kind: 'column', column: 'size', path: [], leaf: 'string' },
            prices: { kind: 'row', element: { tag: { kind: 'const', value: 'default' }, currency: { kind: 'const', value: 'EUR' }, number: { kind: 'column', column: 'price', path: [], leaf: 'number' } } },
          },
          writes: { update: ['size'], create: undefined, delete: false },
        },
      },
      writes: { update: ['name'], create: undefined, delete: false },
    });
    expect(m.orders).toBeUndefined();
  });

  test.each([
    [{ ...flat(), version: 2 }, 'the mapping: version: Invalid input: expected 1'],
    [{ version: 1 }, 'the mapping: map products, orders or both'],
    [{ ...flat(), products: { ...flat().products, fields: { titel: 'name' } } }, 'the mapping: products.fields: Unrecognized key: "titel"'],
    [{ ...flat(), products: { ...flat().products, lastUpdated: { column: 'u', type: 'epoch' } } }, 'the mapping: products.lastUpdated.type: Invalid option: expected one of "epoch-ms"|"epoch-s"|"timestamp"|"iso-text"'],
    [{ ...flat(), products: { ...flat().products, fields: { variations: { fromRow: { prices: { fromRow: { number: { const: 'x' } } } } } } } }, 'the mapping: products.fields.variations.fromRow.prices.fromRow.number.const: Invalid input: expected number, received string'],
    [{ ...flat(), products: { ...flat().products, fields: { title: 'a.b' } } }, 'the mapping: products.fields.title: must be a column name: 1 to 128 characters, no dot or control character'],
    [{ ...flat(), products: { ...flat().products, writes: { update: ['price'] } } }, 'the mapping: products.writes.update: column "price" is not mapped by any field, so no value would be written to it'],
    [{ ...flat(), products: { ...flat().products, writes: { create: ['updated_at'] } } }, 'the mapping: products.writes.create: "updated_at" is set by the adapter itself (the id or the time column); leave it out'],
    [
      { ...flat(), products: { ...flat().products, fields: { variations: { table: 'v', key: 'p', orderBy: 'n', fields: { images: { table: 'i', key: 'v', orderBy: 'n', fields: { url: 'u' } } } } } } },
      'the mapping: products.fields.variations.fields.images.parentKey: required for a child table under a child table (the parent table\'s column that key refers to)',
    ],
  ])('%# refuses with a message naming the member', (input, message) => {
    expect(problem(input)).toBe(message);
  });

  test('readMappingFile names the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-map-'));
    try {
      writeFileSync(join(dir, 'bad.json'), '{ "version": 1, ');
      expect(() => readMappingFile(join(dir, 'bad.json'))).toThrow(new RegExp(`^the mapping file ".*bad\\.json" is not JSON: `));
      expect(() => readMappingFile(join(dir, 'none.json'))).toThrow(/^cannot read the mapping file ".*none\.json" \(ENOENT\)$/);
      writeFileSync(join(dir, 'typo.json'), JSON.stringify({ ...flat(), products: { ...flat().products, tabel: 'x' } }));
      expect(() => readMappingFile(join(dir, 'typo.json'))).toThrow(/typo\.json: products: Unrecognized key: "tabel"$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the JSON Schema', () => {
  test('docs/mapping.schema.json is the one generated from the zod schema (regenerate: storebridge map schema > docs/mapping.schema.json)', () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'docs', 'mapping.schema.json'), 'utf8'))).toEqual(mappingJsonSchema());
  });

  test('it accepts what the parser accepts and refuses a typo, and each example in docs/mapping.md passes both', () => {
    const validate = new Ajv2020({ strict: false }).compile(mappingJsonSchema());
    expect(validate(flat())).toBe(true);
    expect(validate({ ...flat(), products: { ...flat().products, fields: { titel: 'x' } } })).toBe(false);
    const examples = [...readFileSync(join(ROOT, 'docs', 'mapping.md'), 'utf8').matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]));
    const files = examples.filter((e) => e.version === 1);
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const example of files) {
      expect({ example, valid: validate(example), errors: validate.errors }).toEqual({ example, valid: true, errors: null });
      expect(() => parseMapping(example)).not.toThrow();
    }
  });
});

describe('ISO text time', () => {
  test('a time in a layout reads back as the same time (property)', () => {
    const layouts = fc.record({
      separator: fc.constantFrom<'T' | ' '>('T', ' '),
      fraction: fc.integer({ min: 0, max: 3 }),
      zone: fc.constantFrom('', 'Z', '+02:00', '-0530', '+01'),
    });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_214_399_999 }), layouts, (ms, layout) => {
        const format = isoFormatOf(`2024-01-01${layout.separator}00:00:00${layout.fraction ? `.${'0'.repeat(layout.fraction)}` : ''}${layout.zone}`);
        if (typeof format === 'string') throw new Error(format);
        const res = 10 ** (3 - format.fraction);
        const text = formatIso(Math.floor(ms / res) * res, format);
        expect(parseIso(text)?.ms).toBe(Math.floor(ms / res) * res);
        expect(isoFormatOf(text)).toEqual(format);
      }),
    );
  });

  test('more than millisecond precision, or no ISO text, is refused with the value', () => {
    expect(isoFormatOf('2024-01-01 10:00:00.123456')).toBe('"2024-01-01 10:00:00.123456" has more than millisecond precision; store milliseconds or use a timestamp column');
    expect(isoFormatOf('01/02/2024')).toBe('"01/02/2024" is not ISO 8601 text (YYYY-MM-DD HH:MM:SS[.fff][Z|±HH:MM])');
  });
});

describe('keyset bounds of a coarse time column', () => {
  const seconds: TimeKey = { type: 'epoch-s', column: 't', resolutionMs: 1000, sort: undefined as never, select: undefined as never, toMs: () => 0, value: (ms) => ms / 1000, write: (ms) => ms / 1000 };
  test('a representable time is exact; between two, the next one is the bound', () => {
    expect(timeBound(seconds, 5000)).toEqual({ value: 5, exact: true });
    expect(timeBound(seconds, 5001)).toEqual({ value: 6, exact: false });
    expect(timeBound(seconds, 4999)).toEqual({ value: 5, exact: false });
    expect(storableMs(seconds, 5999)).toBe(5000);
  });
  test('a date past 9999-12-30 has no bound', () => {
    expect(timeBound({ ...seconds, type: 'iso-text', resolutionMs: 1 }, 253_402_214_400_000)).toBeUndefined();
  });
});
