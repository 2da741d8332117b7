'use strict';
/**
 * The store core's three bindings side by side with Fastify 5 (response schema), serving the same
 * list page (20 demo products from a 1,000-product memory adapter, key check on, rate limit off
 * in every server, as in serve-page): Express 5 + createStoreRouter, the node:http listener
 * (createStoreListener), and the Fetch handler (createStoreFetchHandler) behind a minimal
 * node:http-to-Request adapter. Also the node:http listener with its rate limiter on (at a limit
 * never reached), to show what the default costs. Servers one at a time in their own process, the
 * order rotating every round (A B C D, B C D A, …); autocannon in its own process.
 * Targets (issue 13): node:http binding ≥ 1.3× Fastify, Express binding ≥ 1.1× Fastify.
 */
const { rotate } = require('../lib/page-bench');
const { summary, ratios } = require('../lib/stats');

const KINDS = ['kit', 'kit-listener', 'kit-fetch', 'fastify', 'kit-listener-rl'];

async function run({ quick }) {
  const opts = quick
    ? { reps: 3, warmupS: 0.5, durationS: 1.5, connections: 10, catalog: 1000 }
    : { reps: 5, warmupS: 2, durationS: 5, connections: 10, catalog: 1000 };
  const runs = await rotate(KINDS, opts);
  const rps = (k) => runs[k].map((x) => x.rps);
  const servers = Object.fromEntries(
    KINDS.map((k) => [k, { rps: summary(rps(k)), cpuUsPerReq: summary(runs[k].map((x) => x.cpuUsPerReq)), p99Ms: summary(runs[k].map((x) => x.p99Ms)), bytes: runs[k][0].bytes }]),
  );
  return {
    options: { ...opts, rateLimit: 'off (but kit-listener-rl)', keyCheck: 'on' },
    servers,
    httpVsFastify: summary(ratios(rps('kit-listener'), rps('fastify'))),
    expressVsFastify: summary(ratios(rps('kit'), rps('fastify'))),
    fetchVsFastify: summary(ratios(rps('kit-fetch'), rps('fastify'))),
    limiterCost: summary(ratios(rps('kit-listener-rl'), rps('kit-listener'))),
  };
}

module.exports = { run };
