'use strict';
/**
 * Target 1: requests/s serving one list page (20 demo products) — the kit's router vs Fastify 5
 * with a response schema and vs a plain Express handler — and server CPU µs per request against a
 * raw node:http server sending a pre-built buffer. Servers run one at a time in their own process;
 * autocannon runs in its own process; the order of servers rotates every round (A B A B).
 */
const path = require('node:path');
const kit = require('../lib/kit');
const { startServer, autocannon } = require('../lib/proc');
const { summary, ratios } = require('../lib/stats');

const SERVER = path.join(__dirname, '..', 'servers', 'page-server.js');

async function measure(kind, { catalog, warmupS, durationS, connections }) {
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

async function run({ quick }) {
  const opts = quick
    ? { reps: 3, warmupS: 0.5, durationS: 1.5, connections: 10, catalog: 1000 }
    : { reps: 5, warmupS: 2, durationS: 5, connections: 10, catalog: 1000 };
  const kinds = quick ? ['kit', 'fastify', 'express', 'raw'] : ['kit', 'kit-http', 'fastify', 'express', 'raw'];
  const runs = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let r = 0; r < opts.reps; r++) {
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[(i + r) % kinds.length];
      runs[kind].push(await measure(kind, opts));
    }
  }
  const rps = (k) => runs[k].map((x) => x.rps);
  const cpu = (k) => runs[k].map((x) => x.cpuUsPerReq);
  const servers = Object.fromEntries(
    kinds.map((k) => [k, { rps: summary(rps(k)), cpuUsPerReq: summary(cpu(k)), p99Ms: summary(runs[k].map((x) => x.p99Ms)), bytes: runs[k][0].bytes }]),
  );
  return {
    options: { ...opts, rateLimit: 'off', keyCheck: 'on' },
    servers,
    kitVsFastify: summary(ratios(rps('kit'), rps('fastify'))),
    kitVsExpress: summary(ratios(rps('kit'), rps('express'))),
    cpuKitVsRaw: summary(ratios(cpu('kit'), cpu('raw'))),
    cpuExpressVsRaw: summary(ratios(cpu('express'), cpu('raw'))),
    cpuFastifyVsRaw: summary(ratios(cpu('fastify'), cpu('raw'))),
    ...(runs['kit-http'] ? { cpuKitHttpVsRaw: summary(ratios(cpu('kit-http'), cpu('raw'))) } : {}),
  };
}

module.exports = { run };
