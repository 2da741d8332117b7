'use strict';
/**
 * Target 5: offset walks against a store that adds 50 ms to every request — concurrency 4 against
 * sequential, alternating, with the same items (digest of the sink's keys) required.
 */
const path = require('node:path');
const { startServer, runJson } = require('../lib/proc');
const { summary, ratios } = require('../lib/stats');

const STORE = path.join(__dirname, '..', 'servers', 'store-server.js');
const CALLER = path.join(__dirname, '..', 'servers', 'sync-caller.js');

async function run({ quick }) {
  const products = 10_000;
  const pageSize = 100;
  const reps = quick ? 2 : 5;
  const delayMs = 50;
  const store = await startServer(STORE, [`memory:${products}`, String(delayMs)]);
  try {
    const url = `http://127.0.0.1:${store.port}`;
    const runs = { sequential: [], parallel4: [] };
    for (let r = 0; r < reps; r++) {
      const order = r % 2 ? ['parallel4', 'sequential'] : ['sequential', 'parallel4'];
      for (const k of order) {
        const { result } = await runJson(CALLER, [url, 'memory', 'offset', k === 'sequential' ? '1' : '4', String(pageSize)]);
        runs[k].push(result);
      }
    }
    const all = [...runs.sequential, ...runs.parallel4];
    const sameItems = all.every((x) => x.digest === all[0].digest && x.items === products);
    const ms = (k) => runs[k].map((x) => x.ms);
    return {
      products,
      pageSize,
      delayMs,
      requests: { sequential: runs.sequential[0].requests, parallel4: runs.parallel4[0].requests },
      ms: { sequential: summary(ms('sequential')), parallel4: summary(ms('parallel4')) },
      speedup: summary(ratios(ms('sequential'), ms('parallel4'))),
      sameItems,
    };
  } finally {
    await store.stop();
  }
}

module.exports = { run };
