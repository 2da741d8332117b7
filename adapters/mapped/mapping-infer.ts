/**
 * `storebridge map infer`: a mapping file guessed from a products table (and an orders table) by
 * their column names and types. Every guess carries a `review` note saying what it was guessed
 * from, so a person can check it; served as printed, a plain table passes `storebridge check`.
 * Writes stay off: accepting writes into a shop's tables is a decision, not a guess.
 */
import type { Kysely } from 'kysely';
import { loadKysely, SQL_DIALECTS, type SqlKind } from '../sql/sql-dialects';
import { columnText } from '../sql/sql-run';
import { describeTable } from './mapped-inspect';
import { isIntegerType, parseIso, type ColumnInfo } from './mapped-keys';
import { MAPPING_VERSION, parseMapping, type TimeType } from './mapping';
import { MappingMismatchError } from './mapping-errors';

export interface InferOptions {
  readonly productsTable: string;
  readonly ordersTable?: string;
}

type Json = Record<string, unknown>;

/** A name as compared: lower case, letters and digits only (`updatedAt`, `updated_at` → `updatedat`). */
const reduced = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Column names tried for each member, best first. */
const NAMES = {
  lastUpdated: ['updatedat', 'lastupdated', 'updated', 'modifiedat', 'modified', 'lastmodified', 'datemodified', 'modifiedon', 'updatedon', 'lastupdate', 'mtime', 'changedat', 'updatetime', 'modificationdate'],
  sku: ['sku', 'code', 'productcode', 'itemcode', 'articlenumber', 'partnumber', 'partno', 'itemnumber', 'reference', 'ref'],
  title: ['name', 'title', 'productname', 'itemname', 'label'],
  description: ['description', 'desc', 'longdescription', 'details', 'body'],
  brand: ['brand', 'manufacturer', 'make', 'vendor'],
  url: ['url', 'link', 'permalink', 'producturl'],
  mpn: ['mpn', 'manufacturerpartnumber'],
  model: ['model'],
  price: ['price', 'unitprice', 'saleprice', 'regularprice', 'listprice', 'retailprice'],
  stock: ['stock', 'quantity', 'qty', 'inventory', 'stockquantity', 'stockqty', 'onhand', 'quantityonhand', 'stocklevel', 'available'],
  currency: ['currency', 'currencycode', 'currencyid'],
  barcode: ['barcode', 'ean', 'upc', 'gtin', 'ean13'],
  size: ['size'],
  color: ['color', 'colour'],
  image: ['image', 'imageurl', 'picture', 'photo', 'thumbnail', 'img'],
  orderid: ['ordernumber', 'orderno', 'number', 'orderid', 'reference', 'externalid'],
  status: ['status', 'orderstatus', 'state'],
  total: ['total', 'totalamount', 'grandtotal', 'ordertotal', 'totalprice', 'amount'],
  dateCreated: ['createdat', 'created', 'orderdate', 'datecreated', 'placedat', 'createdon', 'orderedat'],
  dateClosed: ['closedat', 'completedat', 'dateclosed', 'fulfilledat'],
  buyerId: ['customerid', 'buyerid', 'userid', 'clientid'],
  email: ['email', 'customeremail', 'buyeremail'],
  phone: ['phone', 'customerphone', 'telephone'],
  firstName: ['firstname', 'customerfirstname', 'givenname'],
  lastName: ['lastname', 'customerlastname', 'surname', 'familyname'],
  feedback: ['feedback'],
} as const;

const NUMERIC = /int|real|numeric|decimal|double|float|money|number/;
const TEMPORAL = /^(timestamp|datetime|date)/;

/** Picks the columns of one table, each at most once. */
class Columns {
  private readonly taken = new Set<string>();
  constructor(readonly table: string, readonly all: ReadonlyMap<string, ColumnInfo>) {}

  take(candidates: readonly string[], fits: (c: ColumnInfo) => boolean = () => true): ColumnInfo | undefined {
    for (const want of candidates) {
      for (const column of this.all.values()) {
        if (this.taken.has(column.name) || reduced(column.name) !== want || !fits(column)) continue;
        this.taken.add(column.name);
        return column;
      }
    }
    return undefined;
  }

  claim(name: string): void {
    this.taken.add(name);
  }
}

const guessed = (column: ColumnInfo) => `guessed from the column name "${column.name}" (${column.type || 'no declared type'})`;
const source = (column: ColumnInfo) => ({ column: column.name, review: guessed(column) });

/** Sets `out[member]` to the first column named like it that fits. */
function member(out: Json, name: string, columns: Columns, candidates: readonly string[], fits?: (c: ColumnInfo) => boolean): ColumnInfo | undefined {
  const found = columns.take(candidates, fits);
  if (found) out[name] = source(found);
  return found;
}

async function sampleMax(db: Kysely<any>, table: string, column: string): Promise<unknown> {
  const { sql } = loadKysely();
  const { rows } = await sql<{ v: unknown }>`select max(${sql.ref(column)}) as v from ${sql.table(table)}`.execute(db);
  return rows[0]?.v;
}

/** The time type of a column, from its declared type and its largest value. */
async function timeTypeOf(db: Kysely<any>, kind: SqlKind, table: string, column: ColumnInfo): Promise<{ type: TimeType; why: string }> {
  if (SQL_DIALECTS[kind].timestampColumn && /^(timestamp|datetime)/.test(column.type)) return { type: 'timestamp', why: `declared ${column.type}` };
  const max = await sampleMax(db, table, column.name);
  const epoch = (n: number, from: string) =>
    n > 1e11 ? { type: 'epoch-ms' as const, why: `${from} ${n} is milliseconds since 1970` } : { type: 'epoch-s' as const, why: `${from} ${n} is seconds since 1970` };
  if (max === null || max === undefined) {
    const integer = isIntegerType(kind, column.type) || NUMERIC.test(column.type);
    return integer ? { type: 'epoch-ms', why: 'the table is empty: milliseconds assumed, check' } : { type: 'iso-text', why: 'the table is empty: ISO text assumed, check' };
  }
  if (typeof max === 'number' || typeof max === 'bigint' || (typeof max === 'string' && /^\d+$/.test(max))) return epoch(Number(max), 'its largest value');
  const text = columnText(max);
  if (parseIso(text)) return { type: 'iso-text', why: `its largest value ${JSON.stringify(text)} is ISO 8601 text` };
  return { type: 'iso-text', why: `its largest value ${JSON.stringify(text.slice(0, 40))} is not ISO 8601 text: map the time column by hand` };
}

function idOf(columns: Columns): { column: string; review: string } {
  const keys = [...columns.all.values()].filter((c) => c.primaryKey);
  if (keys.length === 1) {
    columns.claim(keys[0].name);
    return { column: keys[0].name, review: `the table's primary key (${keys[0].type || 'no declared type'})` };
  }
  const named = columns.take(['id']);
  if (named) return { column: named.name, review: `guessed from the column name "${named.name}": ${keys.length > 1 ? 'the primary key has several columns' : 'the table has no primary key'}; ids must be unique` };
  throw new MappingMismatchError(`${columns.table} has no single-column primary key and no "id" column: write "id" by hand (docs/mapping.md)`, columns.table);
}

async function entityBase(db: Kysely<any>, kind: SqlKind, table: string): Promise<{ columns: Columns; base: Json }> {
  const info = await describeTable(db, kind, table);
  if (!info) throw new MappingMismatchError(`there is no table "${table}" in this database (or this user cannot see it)`, table);
  const columns = new Columns(table, info);
  const id = idOf(columns);
  const time = columns.take(NAMES.lastUpdated, (c) => !/^date$/.test(c.type));
  if (!time) {
    throw new MappingMismatchError(
      `${table} has no column that looks like an update time (${NAMES.lastUpdated.slice(0, 5).join(', ')}, …): add one, or write "lastUpdated" by hand (docs/mapping.md)`,
      table,
    );
  }
  const { type, why } = await timeTypeOf(db, kind, table, time);
  return { columns, base: { table, id, lastUpdated: { column: time.name, type, review: `guessed from the column name "${time.name}"; ${type} because ${why}` } } };
}

const WRITES_OFF =
  'writes are off: to let the sync service update or create rows here, add "writes": {"update": [columns], "create": [columns]} (docs/mapping.md "Writes")';

const numeric = (c: ColumnInfo) => NUMERIC.test(c.type);
const readable = (c: ColumnInfo) => !/blob|binary|bytea/.test(c.type);

function currencyOf(columns: Columns): Json {
  const column = columns.take(NAMES.currency, readable);
  return column ? source(column) : { const: 'USD', review: 'no currency column was found: USD assumed' };
}

async function inferProducts(db: Kysely<any>, kind: SqlKind, table: string): Promise<Json> {
  const { columns, base } = await entityBase(db, kind, table);
  const fields: Json = {};
  for (const name of ['sku', 'title', 'description', 'brand', 'url', 'mpn', 'model'] as const) member(fields, name, columns, NAMES[name], readable);
  const variation: Json = {};
  const price = columns.take(NAMES.price, numeric);
  if (price) variation.prices = { fromRow: { tag: { const: 'default' }, currency: currencyOf(columns), number: source(price) } };
  const stock = columns.take(NAMES.stock, numeric);
  if (stock) variation.availabilities = { fromRow: { tag: { const: 'default' }, quantity: source(stock) } };
  for (const name of ['barcode', 'size', 'color'] as const) member(variation, name, columns, NAMES[name], readable);
  const image = columns.take(NAMES.image, readable);
  if (image) variation.images = { fromRow: { url: source(image) } };
  if (Object.keys(variation).length > 0) fields.variations = { fromRow: variation, review: 'one variation made of the row\'s own columns' };
  return { ...base, fields, review: WRITES_OFF };
}

async function inferOrders(db: Kysely<any>, kind: SqlKind, table: string): Promise<Json> {
  const { columns, base } = await entityBase(db, kind, table);
  const fields: Json = {};
  member(fields, 'orderid', columns, NAMES.orderid, readable);
  member(fields, 'status', columns, NAMES.status, readable);
  const total = columns.take(NAMES.total, numeric);
  if (total) fields.total = { amount: source(total), currency: currencyOf(columns) };
  const temporal = (c: ColumnInfo) => TEMPORAL.test(c.type) || /text|char/.test(c.type);
  member(fields, 'dateCreated', columns, NAMES.dateCreated, temporal);
  member(fields, 'dateClosed', columns, NAMES.dateClosed, temporal);
  const buyer: Json = {};
  member(buyer, 'id', columns, NAMES.buyerId, readable);
  for (const name of ['email', 'phone', 'firstName', 'lastName'] as const) member(buyer, name, columns, NAMES[name], readable);
  if (Object.keys(buyer).length > 0) fields.buyer = buyer;
  member(fields, 'feedback', columns, NAMES.feedback, readable);
  return { ...base, fields, review: WRITES_OFF };
}

/**
 * The mapping file for a products table (and an orders table), as a JSON object ready to print.
 * Throws `MappingMismatchError` for a missing table, or one without an id or a time column.
 */
export async function inferMapping(db: Kysely<any>, kind: SqlKind, options: InferOptions): Promise<Json> {
  const out: Json = {
    $schema: './node_modules/storebridge/docs/mapping.schema.json',
    version: MAPPING_VERSION,
    review: 'inferred by storebridge map infer from column names: check every member with a "review" note (then delete the notes, or keep them: the adapter ignores them)',
    products: await inferProducts(db, kind, options.productsTable),
  };
  if (options.ordersTable !== undefined) out.orders = await inferOrders(db, kind, options.ordersTable);
  parseMapping(out, 'the inferred mapping'); // what is printed always parses
  return out;
}
