'use strict';
/**
 * One list-page server measured under load: started in its own process (bench/servers/page-server.js
 * KIND), warmed up, then autocannon (in its own process) for the duration; requests/s, the server's
 * CPU µs per request, p99 latency, the page's bytes. Used by the serve-page and bindings sections.
 */
const path = require('node:path');
const kit = require('./kit');
const { startServer, autocannon } = require('./proc');

const SERVER = path.join(__dirname, '..', 'servers', 'page-server.js');

async function measurePage(kind, { catalog, warmupS, durationS, connections }) {
  const s = await startServer(SERVER, [kind, String(catalog)]);
  try {
    const url = `http://127.0.0.1:${s.port}/products?sortorder=asc&jobid=1&offset=0`;
    const headers = { svckey: kit.BENCH_KEY };
    await autocannon(url, { connections, durationS: warmupS, headers });
    const cpu0 = await s.cpuMicros();
    const r = await autocannon(url, { connections, durationS, headers });
    const cpu1 = await s.cpuMicros();
    const done = r.requests.total;
    if (r.non2xx || r.errors || done === 0) throw new Error(`${kind}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { rps: done / durationS, cpuUsPerReq: (cpu1 - cpu0) / done, p99Ms: r.latency.p99, bytes: s.bytes };
  } finally {
    await s.stop();
  }
}

/** Runs every kind `reps` times, the order rotating each round (A B C, B C A, …). */
async function rotate(kinds, opts) {
  const runs = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let r = 0; r < opts.reps; r++) {
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[(i + r) % kinds.length];
      runs[kind].push(await measurePage(kind, opts));
    }
  }
  return runs;
}

module.exports = { measurePage, rotate };
