'use strict';
/**
 * Stub re-sync: after 1% of a catalog changes, a re-sync against a store listing ids only
 * (`{_id, last_updated}` stubs, items by `?id=`: the kit's router with `listing: 'stubs'`, as
 * `serve --listing stubs`) fetches only the changed 1% by ID; measured against a full re-sync of
 * the same change (the same router listing whole items), both into a
 * copy of the same SQLite sink (the state after a first full sync), in pages of 100 (the CLI's).
 * Store and caller each in their own process; the two runs alternate; both must end with the same
 * (key, last_updated) pairs in the sink.
 */
const fs = require('node:fs');
const path = require('node:path');
const kit = require('../lib/kit');
const seed = require('../lib/seed');
const { startServer, runJson } = require('../lib/proc');
const { summary, ratios } = require('../lib/stats');

const STORE = path.join(__dirname, '..', 'servers', 'store-server.js');
const CALLER = path.join(__dirname, '..', 'servers', 'resync-caller.js');
const PAGE_SIZE = 100;

const SQLITE_FILES = ['', '-wal', '-shm'];
const copyDb = (from, to) => {
  for (const s of SQLITE_FILES) fs.rmSync(to + s, { force: true });
  for (const s of SQLITE_FILES) if (fs.existsSync(from + s)) fs.copyFileSync(from + s, to + s);
};
const removeDb = (file) => SQLITE_FILES.forEach((s) => fs.rmSync(file + s, { force: true }));

async function syncWith(listing, storeDb, sinkDb) {
  const store = await startServer(STORE, [`sqlite:${storeDb}`, '0', listing]);
  try {
    const { result } = await runJson(CALLER, [`http://127.0.0.1:${store.port}/products`, sinkDb, String(PAGE_SIZE)]);
    return result;
  } finally {
    await store.stop();
  }
}

/** Changes every 100th product (title, so `last_updated` becomes now): 1% of the catalog. */
async function changeOnePercent(storeDb, n) {
  const adapter = await kit.sql().openSqlAdapter(`sqlite:${storeDb}`);
  const signal = new AbortController().signal;
  const { demoProductId } = kit.demo();
  let changed = 0;
  try {
    for (let i = 0; i < n; i += 100) {
      const p = await adapter.products.get(demoProductId(i), { signal });
      if (!p) throw new Error(`demo product ${demoProductId(i)} is missing from the seed`);
      const r = await adapter.products.upsert({ ...p, title: `${p.title} (changed)` }, { lastUpdated: 'touch', now: Date.now(), signal });
      if (r.changed) changed++;
    }
  } finally {
    await adapter.close();
  }
  return changed;
}

async function run({ quick }) {
  const n = quick ? 20_000 : 100_000;
  const reps = quick ? 1 : 3;
  const dir = path.join(seed.CACHE_DIR, `stub-resync-${process.pid}`);
  fs.mkdirSync(dir, { recursive: true });
  const storeDb = path.join(dir, 'store.db');
  const baseSink = path.join(dir, 'sink-base.db');
  try {
    copyDb(await seed.sqliteCatalog(n), storeDb);
    const first = await syncWith('full', storeDb, baseSink);
    const changed = await changeOnePercent(storeDb, n);
    const full = [];
    const stubs = [];
    for (let r = 0; r < reps; r++) {
      const runs = [
        async () => full.push(await syncWith('full', storeDb, (copyDb(baseSink, path.join(dir, 'sink-full.db')), path.join(dir, 'sink-full.db')))),
        async () => stubs.push(await syncWith('stubs', storeDb, (copyDb(baseSink, path.join(dir, 'sink-stubs.db')), path.join(dir, 'sink-stubs.db')))),
      ];
      if (r % 2) runs.reverse();
      for (const x of runs) await x();
    }
    return {
      products: n,
      changed,
      pageSize: PAGE_SIZE,
      firstSyncMs: first.ms,
      ms: { full: summary(full.map((x) => x.ms)), stubs: summary(stubs.map((x) => x.ms)) },
      speedup: summary(ratios(full.map((x) => x.ms), stubs.map((x) => x.ms))),
      requests: { full: full[0].requests, stubs: stubs[0].requests },
      fetchedById: stubs[0].fetchedById,
      written: { full: full[0].written, stubs: stubs[0].written },
      sameItems: [...full, ...stubs].every((x) => x.digest === full[0].digest && x.count === n),
      onlyChangedFetched: stubs.every((x) => x.fetchedById === changed && x.written === changed),
    };
  } finally {
    for (const f of ['store.db', 'sink-base.db', 'sink-full.db', 'sink-stubs.db']) removeDb(path.join(dir, f));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { run };
