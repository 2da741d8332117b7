/**
 * The suite runs under node:test too (the compiled package, as a user would load it): every test
 * passes on the memory adapter, and a broken adapter fails.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADAPTER_CONFORMANCE_TESTS } from '../../lib/conformance';

const DIST = resolve(__dirname, '../../dist');

function runNodeTest(factory: string): { status: number | null; stdout: string } {
  const dir = mkdtempSync(join(tmpdir(), 'storebridge-node-test-'));
  try {
    const file = join(dir, 'conformance.test.js');
    writeFileSync(
      file,
      `const { describe, test } = require('node:test');
const { runAdapterConformance } = require(${JSON.stringify(join(DIST, 'lib/conformance'))});
const { createMemoryAdapter } = require(${JSON.stringify(join(DIST, 'adapters/memory'))});
runAdapterConformance({ describe, test, propertyRuns: 10, factory: ${factory} });
`,
    );
    const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', file], { encoding: 'utf8', cwd: resolve(__dirname, '../..'), env: { ...process.env, NODE_PATH: resolve(__dirname, '../../node_modules') } });
    return { status: r.status, stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('runAdapterConformance under node:test: all pass on the memory adapter, a broken count fails', () => {
  if (!existsSync(join(DIST, 'lib/conformance/index.js'))) throw new Error('build first (npm run build)');
  const ok = runNodeTest('() => createMemoryAdapter()');
  expect(ok.stdout).toContain(`# pass ${ADAPTER_CONFORMANCE_TESTS.length}`);
  expect(ok.stdout).toContain('# fail 0');
  expect(ok.status).toBe(0);
  const broken = runNodeTest(`() => { const a = createMemoryAdapter(); const c = a.orders.count.bind(a.orders); a.orders.count = async (o) => (await c(o)) * 2; return a; }`);
  expect(broken.status).not.toBe(0);
  expect(broken.stdout).toMatch(/not ok \d+ - count is exact after creates and updates/);
});
