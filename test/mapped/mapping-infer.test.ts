/**
 * `inferMapping` on tables named and typed the ways shops name them (SQLite in memory): which
 * column becomes which member, the time type from the declared type and the data, every guess
 * with a review note, and the one-line refusals when a table lacks an id or a time column.
 */
import { sql, type Kysely } from 'kysely';
import { MappingMismatchError } from '../../adapters/mapped';
import { inferMapping } from '../../adapters/mapped/mapping-infer';
import { connectKysely } from '../../adapters/sql/sql-connect';

let db: Kysely<any>;

beforeEach(() => {
  db = connectKysely('sqlite::memory:').db;
});
afterEach(async () => db.destroy());

const run = (q: string) => sql.raw(q).execute(db);

test('camelCase and other spellings: productCode, title, qty, unitPrice, updatedAt in epoch seconds', async () => {
  await run('create table items (itemId integer primary key, productCode text, title text, qty integer, unitPrice numeric, currencyCode text, EAN text, updatedAt integer not null, notes text)');
  await run("insert into items values (1, 'A', 'Mug', 2, 9.5, 'EUR', '4006381333931', 1700000000, 'x')");
  const m = (await inferMapping(db, 'sqlite', { productsTable: 'items' })) as any;
  expect(m.products.id).toEqual({ column: 'itemId', review: "the table's primary key (integer)" });
  expect(m.products.lastUpdated).toEqual({ column: 'updatedAt', type: 'epoch-s', review: 'guessed from the column name "updatedAt"; epoch-s because its largest value 1700000000 is seconds since 1970' });
  expect(m.products.fields.sku).toEqual({ column: 'productCode', review: 'guessed from the column name "productCode" (text)' });
  expect(m.products.fields.title.column).toBe('title');
  expect(m.products.fields.variations.fromRow).toEqual({
    prices: { fromRow: { tag: { const: 'default' }, currency: { column: 'currencyCode', review: 'guessed from the column name "currencyCode" (text)' }, number: { column: 'unitPrice', review: 'guessed from the column name "unitPrice" (numeric)' } } },
    availabilities: { fromRow: { tag: { const: 'default' }, quantity: { column: 'qty', review: 'guessed from the column name "qty" (integer)' } } },
    barcode: { column: 'EAN', review: 'guessed from the column name "EAN" (text)' },
  });
  expect(JSON.stringify(m)).not.toContain('"column":"notes"');
  expect(m.products.writes).toBeUndefined();
  expect(m.products.review).toMatch(/^writes are off: /);
});

test('milliseconds, ISO text and an empty table', async () => {
  await run('create table a (id integer primary key, name text, modified integer)');
  await run("insert into a values (1, 'x', 1700000000123)");
  expect(((await inferMapping(db, 'sqlite', { productsTable: 'a' })) as any).products.lastUpdated.type).toBe('epoch-ms');
  await run('create table b (id text primary key, name text, last_modified timestamp)');
  await run("insert into b values ('x', 'y', '2024-01-01 10:00:00')");
  expect(((await inferMapping(db, 'sqlite', { productsTable: 'b' })) as any).products.lastUpdated).toMatchObject({ column: 'last_modified', type: 'iso-text' });
  await run('create table c (id integer primary key, updated_at integer)');
  expect(((await inferMapping(db, 'sqlite', { productsTable: 'c' })) as any).products.lastUpdated).toMatchObject({ type: 'epoch-ms', review: expect.stringContaining('the table is empty') });
});

test('orders: status, total with its currency, dates and a buyer', async () => {
  await run('create table p (id integer primary key, updated_at text)');
  await run('create table o (id integer primary key, order_number text, state text, grand_total real, currency text, customer_email text, first_name text, created_at text, updated_at text)');
  const m = (await inferMapping(db, 'sqlite', { productsTable: 'p', ordersTable: 'o' })) as any;
  const columns = (x: any): unknown => (x && typeof x === 'object' ? ('column' in x ? x.column : Object.fromEntries(Object.entries(x).map(([k, v]) => [k, columns(v)]))) : x);
  expect(columns(m.orders.fields)).toEqual({
    orderid: 'order_number',
    status: 'state',
    total: { amount: 'grand_total', currency: 'currency' },
    dateCreated: 'created_at',
    buyer: { email: 'customer_email', firstName: 'first_name' },
  });
});

test('a table without an id or a time column, or no table: one line naming it', async () => {
  await run('create table nokey (code text, name text, updated_at text)');
  await run('create table notime (id integer primary key, name text, created date)');
  await expect(inferMapping(db, 'sqlite', { productsTable: 'nokey' })).rejects.toThrow(new MappingMismatchError('nokey has no single-column primary key and no "id" column: write "id" by hand (docs/mapping.md)', 'nokey'));
  await expect(inferMapping(db, 'sqlite', { productsTable: 'notime' })).rejects.toThrow(/^notime has no column that looks like an update time \(updatedat, lastupdated, updated, modifiedat, modified, …\): add one, or write "lastUpdated" by hand/);
  await expect(inferMapping(db, 'sqlite', { productsTable: 'nope' })).rejects.toThrow('there is no table "nope" in this database (or this user cannot see it)');
});
