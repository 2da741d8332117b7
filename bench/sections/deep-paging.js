'use strict';
/**
 * Target 3: the SQL adapter behind the store core on a large catalog — the first page, a cursor
 * page at depth N-20 (itemsTotal included) and an OFFSET page at the same depth — on SQLite and
 * PostgreSQL. In-process (the core's `handle`, no HTTP), alternating every round. The same rows
 * for the mapped adapter over a shop's own table (integer ids; ISO text / microsecond timestamp
 * times; the paging index its start-up check advises): `sqlite-mapped`, `postgres-mapped`.
 */
const kit = require('../lib/kit');
const seed = require('../lib/seed');
const { alternate, summary, ratios, nowMs } = require('../lib/stats');

async function onDatabase(name, open, n, reps) {
  const adapter = await open();
  try {
    const core = kit.server().createStoreCore({ adapter, svcKeys: [kit.BENCH_KEY], rateLimit: false, pageSize: 20 });
    const depth = n - 20;
    const [before] = await adapter.products.list({ sortorder: 'asc', limit: 1, offset: depth - 1, signal: AbortSignal.timeout(600_000) });
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

/** The mapped adapter, refusing to measure without the paging index (its warning would say so). */
async function openMapped(spec, map) {
  const adapter = await kit.mapped().createMappedAdapter({ connection: spec, map });
  if (adapter.warnings.length > 0) {
    await adapter.close();
    throw new Error(`the mapped table is not ready: ${adapter.warnings.join('; ')}`);
  }
  return adapter;
}

async function run({ quick }) {
  const n = quick ? 50_000 : 1_000_000;
  const reps = quick ? 15 : 31;
  const t0 = nowMs();
  const sqliteFile = await seed.sqliteCatalog(n);
  const out = { rows: n, seedMs: {}, databases: {} };
  out.seedMs.sqlite = nowMs() - t0;
  out.databases.sqlite = await onDatabase('sqlite', () => kit.sql().openSqlAdapter(`sqlite:${sqliteFile}`), n, reps);
  const mapped = async (name, seedShop) => {
    const t = nowMs();
    const { spec, map } = await seedShop(n);
    out.seedMs[name] = nowMs() - t;
    out.databases[name] = await onDatabase(name, () => openMapped(spec, map), n, reps);
  };
  await mapped('sqlite-mapped', seed.sqliteShop);
  if (await seed.postgresAvailable()) {
    const t1 = nowMs();
    const spec = await seed.postgresCatalog(n);
    out.seedMs.postgres = nowMs() - t1;
    out.databases.postgres = await onDatabase('postgres', () => kit.sql().openSqlAdapter(spec), n, reps);
    await mapped('postgres-mapped', seed.postgresShop);
  } else {
    const skipped = `PostgreSQL not reachable at ${seed.PG_URL.replace(/\/\/[^@]*@/, '//***@')}`;
    out.databases.postgres = { skipped };
    out.databases['postgres-mapped'] = { skipped };
  }
  return out;
}

module.exports = { run };
