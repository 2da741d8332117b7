#!/usr/bin/env node
'use strict';
let cli;
try {
  cli = require('../dist/lib/cli/main.js');
} catch (err) {
  // Never built: a checkout (npm install does not build: the package has no install-time script;
  // npm start, npm test and npm pack do), or a git dependency (npm does not build those either).
  // A published package or a tarball always has dist/.
  if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes('dist/lib/cli/main.js')) {
    process.stderr.write('storebridge: not built (no dist/): in a checkout, run "npm run build" first; a git dependency is never built by npm (docs/packaging.md)\n');
    process.exit(1);
  }
  throw err;
}
cli.main(process.argv.slice(2));
