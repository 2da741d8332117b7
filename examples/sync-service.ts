/**
 * A small sync service: one connection to a store, synced on a schedule into the service's own
 * adapter, with checkpoints in a JSON file, an incremental run after a change, and order pushes
 * whose refusals come back as results.
 *
 * For a self-contained demo it starts a store of its own (this kit's router over 500 demo
 * products); point `baseUrl` and `svcKey` at a real store instead.
 *
 * Run from the repository root:
 *   npx tsc -p examples --outDir /tmp/sb-examples
 *   NODE_PATH=$PWD/node_modules node /tmp/sb-examples/examples/sync-service.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createMemoryAdapter } from '../adapters/memory';
import { startStoreServer } from '../lib/host';
import { createSyncConnection, JsonFileCheckpointStore, type SyncReport } from '../lib/sync';
import { demoOrder, demoProduct, seedDemo } from '../lib/demo';

const summary = (r: SyncReport) =>
  `job ${r.jobid} (${r.mode}${r.resumed ? ', resumed' : ''}): products ${r.products.count} in sink, ${r.products.written} written; ` +
  `orders ${r.orders.count} in sink, ${r.orders.written} written; ${r.requests} requests, ${r.retries} retries — ${r.ok ? 'ok' : 'NOT OK'}`;

async function main(): Promise<void> {
  const key = 'example-svc-key-8d2f41';
  const storeData = createMemoryAdapter();
  const store = await startStoreServer({ adapter: storeData, key, port: 0, seed: (adapter, signal) => seedDemo(adapter, 500, signal) });
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-sync-example-'));

  // The service's own copy: any adapter (SQLite, PostgreSQL, …) works the same way.
  const sink = createMemoryAdapter();
  const reports: SyncReport[] = [];
  const connection = createSyncConnection({
    id: 'demo-shop',
    client: { baseUrl: store.url, svcKey: key, pageSize: 100, retry: { limit: 5 } },
    sink,
    checkpoints: new JsonFileCheckpointStore(path.join(dir, 'sync-state.json')),
    intervalMs: 60_000,
    onEvent: (e) => {
      if (e.type === 'page') process.stdout.write(`\r  ${e.entity}: ${e.seen}/${e.itemsTotal}   `);
      if (e.type === 'invalid') console.warn(`\n  quarantined ${e.entity} ${e.item._id ?? '#' + e.item.index}: ${e.item.error}`);
    },
    onReport: (r) => reports.push(r),
  });

  try {
    // The schedule's first run starts at once; later ones every intervalMs, never overlapping.
    connection.start();
    const first = await connection.run(); // joins the run the schedule started
    console.log(`\n${summary(first)}`);

    // A product changes in the store; an incremental run picks up just that.
    const opts = { lastUpdated: 'touch' as const, now: Date.now(), signal: new AbortController().signal };
    await storeData.products.upsert({ ...demoProduct(42), title: 'Renamed in the store' }, opts);
    await connection.stop();
    const second = await connection.run({ mode: 'incremental' });
    console.log(`\n${summary(second)}`);
    console.log(`  the sink now has: "${(await sink.products.get(demoProduct(42)._id))?.title}"`);

    // Pushing order changes back: accepted, or refused with the store's reasons — never thrown.
    const order = { ...demoOrder(0, 500), status: 'shipped' };
    const accepted = await connection.pushOrder(order);
    console.log(`push ${order._id}: ${accepted.status}`);
    const refused = await connection.pushOrder({ ...order, _id: 'bad-order', orderItems: [{ id: '', quantity: 0 }] });
    if (refused.status === 'rejected') console.log(`push bad-order: rejected — ${refused.error}: ${refused.reasons.map((r) => r.msg).join('; ')}`);
  } finally {
    await connection.stop({ abort: true });
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
