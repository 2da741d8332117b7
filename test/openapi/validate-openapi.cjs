'use strict';
/**
 * Validates OpenAPI documents with @apidevtools/swagger-parser (the official 3.1 schema, every $ref
 * resolved). Run by the jest tests in a child process: swagger-parser needs an ES module that jest's
 * CommonJS runtime cannot load, while Node 20 itself can (require(esm)).
 * Usage: node validate-openapi.cjs FILE...  → one JSON line per file: {"file","ok","openapi"?,"error"?}
 */
const SwaggerParser = require('@apidevtools/swagger-parser');
const { readFileSync } = require('node:fs');

(async () => {
  for (const file of process.argv.slice(2)) {
    try {
      const api = await SwaggerParser.validate(JSON.parse(readFileSync(file, 'utf8')));
      process.stdout.write(JSON.stringify({ file, ok: true, openapi: api.openapi }) + '\n');
    } catch (err) {
      process.stdout.write(JSON.stringify({ file, ok: false, error: String(err && err.message) }) + '\n');
    }
  }
})();
