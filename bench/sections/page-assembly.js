'use strict';
/**
 * Target 2: building a list page capped by the 10 MB byte budget, against a plain JSON.stringify of
 * the same page (same items, same paging object). In-process, alternating A B A B; a naive
 * per-item stringify-and-join is measured too, for reference.
 */
const kit = require('../lib/kit');
const { alternate, summary, ratios, nowMs } = require('../lib/stats');

async function run({ quick }) {
  const reps = quick ? 9 : 31;
  const { demoCatalog } = kit.demo();
  const { createMemoryAdapter } = kit.memory();
  const { createStoreCore } = kit.server();
  const { products } = demoCatalog(9000);
  const adapter = createMemoryAdapter({ products });
  const maxPageBytes = 10_000_000;
  const core = createStoreCore({ adapter, svcKeys: [kit.BENCH_KEY], rateLimit: false, pageSize: 100_000, maxPageSize: 100_000, maxPageBytes });
  const request = { headers: { svckey: kit.BENCH_KEY }, rawQuery: 'sortorder=asc&jobid=1&offset=0' };

  const first = await core.handle('listProducts', request);
  const page = JSON.parse(first.body);
  const n = page.products.length;
  if (first.status !== 200 || !page.paging.next) throw new Error('the 10 MB page was not capped');
  // The competitors get the same page as objects (the documents the adapter was seeded with).
  const byId = new Map(products.map((p) => [p._id, p]));
  const objects = { paging: page.paging, products: page.products.map((p) => byId.get(p._id)) };
  const plain = JSON.stringify(objects);
  if (plain.length !== first.body.length) throw new Error(`page text differs: ${plain.length} vs ${first.body.length}`);

  let sink = 0;
  const time = (fn) => async () => {
    const t = nowMs();
    const out = await fn();
    sink += out.length;
    return nowMs() - t;
  };
  const fns = {
    kit: time(async () => (await core.handle('listProducts', request)).body),
    stringify: time(() => JSON.stringify(objects)),
    naive: time(() => `{"paging":${JSON.stringify(objects.paging)},"products":[${objects.products.map((p) => JSON.stringify(p)).join(',')}]}`),
  };
  await alternate(fns, 3); // warm-up
  const t = await alternate(fns, reps);
  return {
    items: n,
    bytes: Buffer.byteLength(first.body),
    maxPageBytes,
    ms: { kit: summary(t.kit), stringify: summary(t.stringify), naive: summary(t.naive) },
    kitVsStringify: summary(ratios(t.kit, t.stringify)),
    naiveVsStringify: summary(ratios(t.naive, t.stringify)),
    sink,
  };
}

module.exports = { run };
