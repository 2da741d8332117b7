'use strict';
/**
 * Target 3: the SQL adapter behind the store core on a large catalog — the first page, a cursor
 * page at depth N-20 (itemsTotal included) and an OFFSET page at the same depth — on SQLite and
 * PostgreSQL. In-process (the core's `handle`, no HTTP), alternating every round.
 */
const kit = require('../lib/kit');
const seed = require('../lib/seed');
const { alternate, summary, ratios, nowMs } = require('../lib/stats');

async function onDatabase(name, spec, n, reps) {
  const adapter = await kit.sql().openSqlAdapter(spec);
  try {
    const core = kit.server().createStoreCore({ adapter, svcKeys: [kit.BENCH_KEY], rateLimit: false, pageSize: 20 });
    const depth = n - 20;
    const [before] = await adapter.products.list({ sortorder: 'asc', limit: 1, offset: depth - 1 });
    const next = core.config.cursors.encode({ entity: 'products', sortorder: 'asc', after: { last_updated: before.last_updated, _id: before._id } });
    const queries = { first: 'sortorder=asc&jobid=1&offset=0', cursor: `sortorder=asc&jobid=1&next=${next}`, offset: `sortorder=asc&jobid=1&offset=${depth}` };
    const pages = {};
    const fns = {};
    for (const [k, rawQuery] of Object.entries(queries)) {
      fns[k] = async () => {
        const t = nowMs();
        const out = await core.handle('listProducts', { headers: { svckey: kit.BENCH_KEY }, rawQuery });
        const ms = nowMs() - t;
        if (out.status !== 200) throw new Error(`${name} ${k}: ${out.status} ${out.body}`);
        pages[k] = out.body;
        return ms;
      };
    }
    await alternate(fns, 1); // warm-up
    const ids = (body) => JSON.parse(body).products.map((p) => p._id).join();
    const deep = JSON.parse(pages.cursor);
    if (deep.products.length !== 20 || deep.paging.itemsTotal !== n || ids(pages.cursor) !== ids(pages.offset)) {
      throw new Error(`${name}: the cursor and offset pages at depth ${depth} differ`);
    }
    const t = await alternate(fns, reps);
    return {
      rows: n,
      depth,
      ms: { first: summary(t.first), cursor: summary(t.cursor), offset: summary(t.offset) },
      cursorVsFirst: summary(ratios(t.cursor, t.first)),
      offsetVsFirst: summary(ratios(t.offset, t.first)),
    };
  } finally {
    await adapter.close();
  }
}

async function run({ quick }) {
  const n = quick ? 50_000 : 1_000_000;
  const reps = quick ? 15 : 31;
  const t0 = nowMs();
  const sqliteFile = await seed.sqliteCatalog(n);
  const out = { rows: n, seedMs: {}, databases: {} };
  out.seedMs.sqlite = nowMs() - t0;
  out.databases.sqlite = await onDatabase('sqlite', `sqlite:${sqliteFile}`, n, reps);
  if (await seed.postgresAvailable()) {
    const t1 = nowMs();
    const spec = await seed.postgresCatalog(n);
    out.seedMs.postgres = nowMs() - t1;
    out.databases.postgres = await onDatabase('postgres', spec, n, reps);
  } else {
    out.databases.postgres = { skipped: `PostgreSQL not reachable at ${seed.PG_URL.replace(/\/\/[^@]*@/, '//***@')}` };
  }
  return out;
}

module.exports = { run };
