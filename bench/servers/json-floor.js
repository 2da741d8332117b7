'use strict';
/**
 * The in-process floor of a catalog sync: JSON.stringify then JSON.parse of the same products, in
 * pages of 1,000 (as they travel). The products are read from the seeded SQLite file page by page;
 * only the stringify + parse is timed.
 *   node bench/servers/json-floor.js FILE
 */
const Database = require('better-sqlite3');

const db = new Database(process.argv[2], { readonly: true });
let ns = 0n;
let items = 0;
let page = [];
const flush = () => {
  const t = process.hrtime.bigint();
  items += JSON.parse(JSON.stringify({ products: page })).products.length;
  ns += process.hrtime.bigint() - t;
  page = [];
};
for (const row of db.prepare('select doc from storebridge_products order by last_updated, _id').iterate()) {
  page.push(JSON.parse(row.doc));
  if (page.length === 1000) flush();
}
if (page.length) flush();
db.close();
process.stdout.write(`\n${JSON.stringify({ ms: Number(ns) / 1e6, items })}\n`);
