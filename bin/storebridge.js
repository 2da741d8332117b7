#!/usr/bin/env node
'use strict';
let cli;
try {
  cli = require('../dist/lib/cli/main.js');
} catch (err) {
  // A checkout that was never built (npm install no longer builds: the package has no install-time
  // script). npm start, npm test and npm pack build first; a published package always has dist/.
  if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes('dist/lib/cli/main.js')) {
    process.stderr.write('storebridge: this checkout is not built yet: run "npm run build" first\n');
    process.exit(1);
  }
  throw err;
}
cli.main(process.argv.slice(2));
