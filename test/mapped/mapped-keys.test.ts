/**
 * The sort key of mapped tables the conformance suite's tables do not have: integer ids and ids in
 * a case-insensitive collation (sorted by their bytes), and time columns in seconds, ISO text,
 * microsecond timestamps (sorted by their truncation to ms) and millisecond timestamps. For each, a
 * fast-check property over random catalogs with many ties: walked through the guard in both
 * orders and both modes, every row exactly once in the kit's order (`compareKeys`), and keyset
 * positions that no row has (between two representable times) are strictly after as the kit
 * compares. On MariaDB the integer and case-insensitive ids take the bounded page path.
 */
import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { createMappedAdapter, type MappedAdapter } from '../../adapters/mapped';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import { compareIds, compareKeys, keyOf, type SortKey } from '../../lib/adapter';
import { guardAdapter } from '../../lib/adapter-guard';
import type { Product } from '../../lib/contract/webhook';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from '../adapters/sql-databases';

interface Variant {
  readonly name: string;
  readonly id: string;
  readonly time: string;
  readonly type: 'epoch-ms' | 'epoch-s' | 'timestamp' | 'iso-text';
  /** Ids as the column holds them (integers, or text distinct in the column's collation). */
  readonly ids: fc.Arbitrary<string | number>;
  /** A time as inserted (its order is the kit's order after truncation to ms). */
  time_(ms: number, micro: number): unknown;
}

const BASE = Date.UTC(2024, 2, 1, 12, 0, 0);
const integers = fc.integer({ min: 1, max: 120 });
// Distinct under a case-insensitive collation, ordered differently there than by bytes.
const mixedCase = fc.constantFrom('b', 'B1', 'a2', 'A3', 'c', 'Z', 'y9', 'Ä', 'ß1', '10', '9', 'x y');

const iso = (ms: number) => new Date(ms).toISOString();
const dbTime = (ms: number, micro: number, zone = '') => `${iso(ms).slice(0, 23).replace('T', ' ')}${String(micro).padStart(3, '0')}${zone}`;

const VARIANTS: Record<SqlKind, Variant[]> = {
  sqlite: [
    { name: 'integer id, ISO text with ms and Z', id: 'integer primary key', time: 'text not null', type: 'iso-text', ids: integers, time_: (ms) => iso(ms) },
    { name: 'integer id, epoch seconds', id: 'integer primary key', time: 'integer not null', type: 'epoch-s', ids: integers, time_: (ms) => Math.floor(ms / 1000) },
    { name: 'text id, ISO text in seconds (CURRENT_TIMESTAMP\'s form)', id: 'text primary key', time: 'text not null', type: 'iso-text', ids: mixedCase, time_: (ms) => iso(ms).slice(0, 19).replace('T', ' ') },
  ],
  postgres: [
    { name: 'serial id, timestamp with microseconds', id: 'integer primary key', time: 'timestamp not null', type: 'timestamp', ids: integers, time_: (ms, micro) => dbTime(ms, micro) },
    { name: 'integer id, timestamptz(3)', id: 'bigint primary key', time: 'timestamptz(3) not null', type: 'timestamp', ids: integers, time_: (ms) => dbTime(ms, 0, '+00') },
    { name: 'text id in the database collation, epoch ms', id: 'varchar(20) primary key', time: 'bigint not null', type: 'epoch-ms', ids: mixedCase, time_: (ms) => ms },
  ],
  mysql: [
    { name: 'int id, datetime(6) (sorted by its truncation)', id: 'int primary key', time: 'datetime(6) not null', type: 'timestamp', ids: integers, time_: (ms, micro) => dbTime(ms, micro) },
    { name: 'int id, timestamp(3)', id: 'int primary key', time: 'timestamp(3) not null', type: 'timestamp', ids: integers, time_: (ms) => dbTime(ms, 0) },
    { name: 'utf8mb4_general_ci id, epoch seconds', id: 'varchar(20) character set utf8mb4 collate utf8mb4_general_ci primary key', time: 'bigint not null', type: 'epoch-s', ids: mixedCase, time_: (ms) => Math.floor(ms / 1000) },
  ],
};

/** Rows: distinct ids, times from a few seconds (many ties), sub-ms parts that must not split ties. */
const catalog = (ids: fc.Arbitrary<string | number>) =>
  fc.uniqueArray(fc.record({ id: ids, second: fc.integer({ min: 0, max: 3 }), ms: fc.constantFrom(0, 0, 250, 999), micro: fc.integer({ min: 0, max: 999 }) }), {
    selector: (r) => String(r.id),
    minLength: 1,
    maxLength: 25,
  });

async function walk(adapter: MappedAdapter, sortorder: 'asc' | 'desc', mode: 'offset' | 'keyset', limit: number): Promise<Product[]> {
  const store = guardAdapter(adapter, { validate: 'all' }).products;
  const out: Product[] = [];
  let after: SortKey | undefined;
  for (let round = 0; round < 100; round++) {
    const page = await store.list({ sortorder, limit, signal: AbortSignal.timeout(10_000), ...(mode === 'offset' ? { offset: out.length } : { after }) });
    out.push(...page.map((x) => x.doc as Product));
    if (page.length < limit) return out;
    after = keyOf(out[out.length - 1] as { _id: string; last_updated: number });
  }
  throw new Error('paging did not end');
}

function variantSuite(kind: SqlKind, db: () => Kysely<any>, variant: Variant): void {
  test(variant.name, async () => {
    const table = `${uniquePrefix()}items`;
    await sql`create table ${sql.table(table)} (id ${sql.raw(variant.id)}, sku varchar(40), updated_at ${sql.raw(variant.time)})${sql.raw(kind === 'mysql' ? ' engine=InnoDB' : '')}`.execute(db());
    try {
      await fc.assert(
        fc.asyncProperty(catalog(variant.ids), fc.integer({ min: 1, max: 6 }), async (rows, limit) => {
          await sql`delete from ${sql.table(table)}`.execute(db());
          await db()
            .insertInto(table)
            .values(rows.map((r) => ({ id: r.id, sku: `S-${r.id}`, updated_at: variant.time_(BASE + r.second * 1000 + r.ms, r.micro) })))
            .execute();
          const adapter = await createMappedAdapter({ db: db(), kind, countCacheMs: 0, map: { version: 1, products: { table, id: 'id', lastUpdated: { column: 'updated_at', type: variant.type }, fields: { sku: 'sku' } } } });
          const all = await walk(adapter, 'asc', 'keyset', 1000);
          expect(all.map((p) => p._id).sort()).toEqual(rows.map((r) => String(r.id)).sort());
          // The kit's order, whatever the database's collation or the column's precision.
          const expected = [...all].sort((a, b) => compareKeys(keyOf(a), keyOf(b))).map((p) => p._id);
          expect(all.map((p) => p._id)).toEqual(expected);
          // Rows in one second (or ms, finer) keep their relative time order: no second is split across another.
          const byRow = new Map(rows.map((r) => [String(r.id), r.second * 1000 + (variant.type === 'epoch-s' || variant.name.includes('seconds') ? 0 : r.ms)]));
          const times = all.map((p) => byRow.get(p._id)!);
          expect(times).toEqual([...times].sort((x, y) => x - y));
          for (const sortorder of ['asc', 'desc'] as const) {
            for (const mode of ['offset', 'keyset'] as const) {
              const want = sortorder === 'asc' ? expected : [...expected].reverse();
              expect((await walk(adapter, sortorder, mode, limit)).map((p) => p._id)).toEqual(want);
            }
          }
          // Positions between two representable times, and ids no row has.
          const probes: SortKey[] = all.flatMap((p) => [
            { last_updated: p.last_updated! + 1, _id: '' },
            { last_updated: p.last_updated! - 1, _id: '~' },
            { last_updated: p.last_updated!, _id: `${p._id}0` },
          ]);
          for (const probe of probes.slice(0, 6)) {
            for (const sortorder of ['asc', 'desc'] as const) {
              const sign = sortorder === 'asc' ? 1 : -1;
              const want = (sortorder === 'asc' ? expected : [...expected].reverse()).filter((id) => sign * compareKeys(keyOf(all.find((p) => p._id === id)!), probe) > 0);
              const got = await guardAdapter(adapter).products.list({ sortorder, limit: 1000, after: probe, signal: AbortSignal.timeout(10_000) });
              expect({ probe, sortorder, ids: got.map((x) => x._id) }).toEqual({ probe, sortorder, ids: want });
            }
          }
          // Exact lookups: no case folding, no padding.
          for (const p of all.slice(0, 3)) {
            expect((await adapter.products.get(p._id, { signal: AbortSignal.timeout(10_000) }))?._id).toBe(p._id);
            const other = p._id === p._id.toLowerCase() ? p._id.toUpperCase() : p._id.toLowerCase();
            if (other !== p._id && !all.some((q) => q._id === other)) expect(await adapter.products.get(other, { signal: AbortSignal.timeout(10_000) })).toBeUndefined();
          }
          expect(await adapter.products.get(`${all[0]._id} `, { signal: AbortSignal.timeout(10_000) })).toBeUndefined();
          await adapter.close();
        }),
        { numRuns: 12 },
      );
    } finally {
      await sql`drop table ${sql.table(table)}`.execute(db());
    }
  }, 120_000);
}

// compareIds is what the kit sorts ids by: code points, which the expected orders above use.
test('the expected order is code-point order', () => {
  expect(['a2', 'B1', '10', '9', 'ß1', 'Ä'].sort(compareIds)).toEqual(['10', '9', 'B1', 'a2', 'Ä', 'ß1']);
});

describe('mapped sort keys on SQLite', () => {
  let db: Kysely<any> | undefined;
  const open = () => (db ??= connectKysely('sqlite::memory:').db);
  for (const v of VARIANTS.sqlite) variantSuite('sqlite', open, v);
  afterAll(async () => db?.destroy());
});

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `mapped sort keys on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}`, () => {
    let db: Kysely<any> | undefined;
    const open = () => (db ??= connectKysely(DATABASE_URLS[kind], { poolSize: 2 }).db);
    for (const v of VARIANTS[kind]) variantSuite(kind, open, v);
    afterAll(async () => db?.destroy());
  });
}
