'use strict';
/** Loads the built package (dist/) and holds what every bench section shares. */
const path = require('node:path');
const { ROOT } = require('./proc');

const dist = (p) => require(path.join(ROOT, 'dist', p));

/** A throwaway key for loopback benchmarks only. */
const BENCH_KEY = 'bench-key-0123456789abcdef';

module.exports = {
  ROOT,
  BENCH_KEY,
  server: () => dist('lib/server'),
  client: () => dist('lib/client'),
  sync: () => dist('lib/sync'),
  demo: () => dist('lib/demo'),
  contract: () => dist('lib/contract/webhook'),
  memory: () => dist('adapters/memory'),
  sql: () => dist('adapters/sql'),
  mapped: () => dist('adapters/mapped'),
};
