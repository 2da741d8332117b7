/**
 * Mounting the store's webhooks in an Express app you already have: the five lines between the
 * markers are all it takes. The sync service then calls `/sync/products`, `/sync/orders`,
 * `/sync/products/:id`, `/sync/orders/:id` and POSTs `/sync/orders?jobid=&id=` (and products).
 *
 * Run it from the repository root (NODE_PATH: the build in /tmp finds the checkout's packages):
 *   npx tsc -p examples --outDir /tmp/sb-examples
 *   SVC_KEY=change-me NODE_PATH=$PWD/node_modules node /tmp/sb-examples/examples/mount-in-existing-app.js &
 *   curl -H "SvcKey: change-me" "http://127.0.0.1:8080/sync/products?sortorder=asc&jobid=1"
 * In your own project import from 'storebridge/server' and 'storebridge/adapters/memory' (or your own
 * adapter, see examples/custom-adapter.ts) instead of the relative paths below.
 */
import express from 'express';
import { createStoreRouter } from '../lib/server';
import { createMemoryAdapter } from '../adapters/memory';
import { demoCatalog } from '../lib/demo';

const app = express();
app.get('/', (_req, res) => void res.send('my existing shop'));

// ---- storebridge: the whole integration --------------------------------------------------
const adapter = createMemoryAdapter(demoCatalog(100)); // your data: any StoreAdapter
const svcKey = process.env.SVC_KEY;
if (!svcKey) {
  console.error('set SVC_KEY to the key issued for the connection (the sync service sends it)');
  process.exit(1);
}
app.use('/sync', createStoreRouter({ adapter, svcKeys: [svcKey] }));
// -------------------------------------------------------------------------------------------

const port = Number(process.env.PORT ?? 8080);
app.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));
