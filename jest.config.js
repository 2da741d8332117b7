/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testTimeout: 30000,
  // The last lines of every run name each skipped suite and why (a missing database, Redis, Chromium).
  reporters: ['default', '<rootDir>/test/support/skip-reporter.js'],
};
