'use strict';
/**
 * Target 1: requests/s serving one list page (20 demo products) — the kit's router vs Fastify 5
 * with a response schema and vs a plain Express handler — and server CPU µs per request against a
 * raw node:http server sending a pre-built buffer. Servers run one at a time in their own process;
 * autocannon runs in its own process; the order of servers rotates every round (A B A B).
 */
const { rotate } = require('../lib/page-bench');
const { summary, ratios } = require('../lib/stats');

async function run({ quick }) {
  const opts = quick
    ? { reps: 3, warmupS: 0.5, durationS: 1.5, connections: 10, catalog: 1000 }
    : { reps: 5, warmupS: 2, durationS: 5, connections: 10, catalog: 1000 };
  const kinds = quick ? ['kit', 'fastify', 'express', 'raw'] : ['kit', 'kit-http', 'fastify', 'express', 'raw'];
  const runs = await rotate(kinds, opts);
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
