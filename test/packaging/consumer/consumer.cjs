'use strict';
// CommonJS JavaScript consumer: `require` of the main entry and every subpath.
const { scenario } = require('./scenario.cjs');

scenario({
  main: require('storebridge'),
  memory: require('storebridge/adapters/memory'),
  client: require('storebridge/client'),
  conformance: require('storebridge/conformance'),
  contract: require('storebridge/contract'),
  adapter: require('storebridge/adapter'),
  openapi: require('storebridge/openapi'),
  host: require('storebridge/host'),
  dashboard: require('storebridge/dashboard'),
  demo: require('storebridge/demo'),
  reverse: require('storebridge/reverse'),
  server: require('storebridge/server'),
  sync: require('storebridge/sync'),
  sql: require('storebridge/adapters/sql'),
  mapped: require('storebridge/adapters/mapped'),
  expressApps: { express: require('express'), express4: require('express4') },
}).then((result) => console.log(JSON.stringify({ flavor: 'cjs', ...result })));
