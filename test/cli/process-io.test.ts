/**
 * The CLI's last line of defence (lib/cli/io.ts): a failure nothing handled — an 'error' event
 * without a listener, a rejection nobody awaited — ends the process with one line on stderr and
 * exit 1, never Node's stack trace with file paths (issue 20, D: "Unhandled 'error' event" and a
 * stack, exit 1, no --json line).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const IO = join(__dirname, '..', '..', 'lib', 'cli', 'io.ts');
const REGISTER = join(__dirname, '..', 'sync', 'bullmq-fixture-register.js');

function runWith(failure: string): { status: number | null; stderr: string } {
  const script = `require(${JSON.stringify(IO)}).processIO(); setTimeout(() => { ${failure} }, 10); setTimeout(() => {}, 5000);`;
  const r = spawnSync(process.execPath, ['-r', REGISTER, '-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stderr: r.stderr };
}

test.each([
  ['an error event without a listener', "new (require('node:events'))().emit('error', new Error('Connection terminated unexpectedly'))", /^storebridge: unexpected failure: Connection terminated unexpectedly$/],
  ['a rejection nobody awaited', "Promise.reject(new Error('read ECONNRESET'))", /^storebridge: unexpected failure: read ECONNRESET$/],
])('%s: one line, exit 1, no stack', (_, failure, line) => {
  const r = runWith(failure);
  expect(r.status).toBe(1);
  expect(r.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(line)]);
  expect(r.stderr).not.toMatch(/\n\s+at |node:internal|\.js:\d+/);
});
