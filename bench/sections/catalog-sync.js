'use strict';
/**
 * Target 4: a whole-catalog sync of N products from a SQLite-backed store, over HTTP, through the
 * caller (createStoreClient + runSync) into a SQLite sink. Store and caller each in their own
 * process; peak RSS of each from /proc (VmHWM). The in-process floor — JSON.stringify then
 * JSON.parse of the same products — is measured in its own process next to every sync run.
 * The figures of record use page size 100, the default of `storebridge sync`; full mode adds one
 * sync in pages of 1,000 for contrast (faster per request, more memory: see docs/benchmarks.md).
 */
const fs = require('node:fs');
const path = require('node:path');
const kit = require('../lib/kit');
const seed = require('../lib/seed');
const { startServer, runJson } = require('../lib/proc');
const { summary, ratios } = require('../lib/stats');

const STORE = path.join(__dirname, '..', 'servers', 'store-server.js');
const CALLER = path.join(__dirname, '..', 'servers', 'sync-caller.js');
const FLOOR = path.join(__dirname, '..', 'servers', 'json-floor.js');

/** The page size `storebridge sync` asks for by default (`--page-size`). */
const CLI_PAGE_SIZE = 100;

async function syncOnce(file, pageSize) {
  const store = await startServer(STORE, [`sqlite:${file}`]);
  try {
    const sink = path.join(seed.CACHE_DIR, `sink-${process.pid}.db`);
    const { result } = await runJson(CALLER, [`http://127.0.0.1:${store.port}`, `sqlite:${sink}`, 'auto', '1', String(pageSize)]);
    const storePeakRss = store.peakRss();
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(sink + suffix, { force: true });
    return { ...result, storePeakRss };
  } finally {
    await store.stop();
  }
}

async function atSize(n, reps, pageSize) {
  const file = await seed.sqliteCatalog(n);
  const syncs = [];
  const floors = [];
  for (let r = 0; r < reps; r++) {
    // A B A B: the floor and the sync alternate, the floor first on odd rounds.
    const floor = () => runJson(FLOOR, [file]).then((x) => floors.push(x.result.ms));
    const sync = () => syncOnce(file, pageSize).then((x) => syncs.push(x));
    if (r % 2) {
      await floor();
      await sync();
    } else {
      await sync();
      await floor();
    }
  }
  const ms = syncs.map((s) => s.ms);
  return {
    products: n,
    pageSize,
    ms: summary(ms),
    itemsPerS: summary(syncs.map((s) => (s.items / s.ms) * 1000)),
    mbPerS: summary(syncs.map((s) => s.bytes / 1e6 / (s.ms / 1000))),
    bytes: syncs[0].bytes,
    requests: syncs[0].requests,
    floorMs: summary(floors),
    vsFloor: summary(ratios(ms, floors)),
    storePeakRssMb: summary(syncs.map((s) => s.storePeakRss / 2 ** 20)),
    callerPeakRssMb: summary(syncs.map((s) => s.peakRss / 2 ** 20)),
    itemsOk: syncs.every((s) => s.items === n && s.digest === syncs[0].digest),
  };
}

async function run({ quick }) {
  // Quick mode syncs 50,000 products (a smoke test of the same path; the target is for 100,000).
  const out = { small: await atSize(quick ? 50_000 : 100_000, quick ? 1 : 3, CLI_PAGE_SIZE) };
  if (!quick) {
    out.bigPages = await atSize(100_000, 1, 1000);
    out.large = await atSize(1_000_000, 1, CLI_PAGE_SIZE);
    out.storeRssGrowth = out.large.storePeakRssMb.median / out.small.storePeakRssMb.median;
    out.callerRssGrowth = out.large.callerPeakRssMb.median / out.small.callerPeakRssMb.median;
  }
  return out;
}

module.exports = { run };
