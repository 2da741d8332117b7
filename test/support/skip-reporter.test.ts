/**
 * `npm test` ends with the skipped suites and why (test/support/skip-reporter.js): jest run on
 * fixture files, in worker processes as in a full run, with the project's reporters.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.join(__dirname, '..', '..');
const JEST = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const base = require('../../jest.config.js');

async function jest(files: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stderr: string }> {
  const cache = mkdtempSync(path.join(tmpdir(), 'sb-jest-cache-'));
  // The project's config, over the fixtures; no timings cached, so two files go to two workers.
  const config = { ...base, rootDir: ROOT, roots: ['<rootDir>/test/support/fixtures'], testMatch: [files], cacheDirectory: cache };
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [JEST, '--config', JSON.stringify(config), '--maxWorkers=2'], { cwd: ROOT, env: { ...process.env, STOREBRIDGE_SKIP_NOTES: '', STOREBRIDGE_REQUIRE_DB: '', ...env } });
    return { code: 0, stderr };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

const tail = (stderr: string, n: number) => stderr.trimEnd().split('\n').slice(-n);

it('the last lines name each skipped suite and test, with the reason', async () => {
  const r = await jest('**/*.fixture.ts');
  expect(r.code).toBe(0);
  expect(r.stderr).not.toContain('NOTICE');
  expect(tail(r.stderr, 4)).toEqual([
    'Skipped (3 tests):',
    '  test/support/fixtures/needs-service.fixture.ts › FakeDB suite (2 tests): FakeDB at 127.0.0.1:1 is unreachable (ECONNREFUSED)',
    '  test/support/fixtures/skipped-test.fixture.ts › only on Linux: skipped in the test file (no reason recorded)',
    'STOREBRIDGE_REQUIRE_DB=1 turns a skipped database, Redis or browser suite into a failure.',
  ]);
}, 60_000);

it('nothing skipped: one line says so', async () => {
  const r = await jest('**/all-run.fixture.ts');
  expect([r.code, tail(r.stderr, 1)]).toEqual([0, ['Skipped: nothing.']]);
}, 60_000);

it('under STOREBRIDGE_REQUIRE_DB=1 the suite fails instead, saying what is missing', async () => {
  const r = await jest('**/needs-service.fixture.ts', { STOREBRIDGE_REQUIRE_DB: '1' });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('FakeDB at 127.0.0.1:1 is unreachable (ECONNREFUSED); STOREBRIDGE_REQUIRE_DB=1 turns a skipped database suite into a failure');
  expect(tail(r.stderr, 1)).toEqual(['Skipped: nothing.']);
}, 60_000);
