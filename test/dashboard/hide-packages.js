/**
 * Preloaded with `node --require` (NODE_OPTIONS) by the CLI tests: makes the packages named in
 * SB_HIDE_PACKAGES (comma-separated) unresolvable, as on a machine where they are not installed.
 */
const Module = require('node:module');

const hidden = (process.env.SB_HIDE_PACKAGES || '').split(',').filter(Boolean);
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (hidden.some((name) => request === name || request.startsWith(`${name}/`))) {
    const err = new Error(`Cannot find module '${request}'`);
    err.code = 'MODULE_NOT_FOUND';
    throw err;
  }
  return resolve.call(this, request, ...rest);
};
