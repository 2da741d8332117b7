/**
 * Smoke test of the reverse-fleet bench section (bench/sections/reverse-fleet.js): a small fleet
 * against the real `reverse-service` CLI (needs the build: `npm run build`). It checks the section
 * runs end to end on both stores and yields its four figures for each, and the floor's; the figures themselves are measured by `npm run
 * bench`, never judged here (a timed test would fail on a loaded machine).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

test('the reverse-fleet section prints its four figures as finite numbers', () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'section.js'), 'reverse-fleet', '--quick', '--reverse-connections=20', '--reverse-seconds=3'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 230_000,
  });
  // No failure and no stack (a stray runtime warning on stderr is not the section's fault).
  expect(r.stderr).not.toMatch(/failed|error|\n\s+at .+:\d+:\d+/i);
  expect(r.status).toBe(0);
  const lines = r.stdout.trim().split('\n');
  const result = JSON.parse(lines[lines.length - 1]);
  expect(result.connections).toBe(20);
  // One run per store (SQLite, then PostgreSQL), and the bare node:http floor.
  for (const store of ['sqlite', 'postgres']) {
    const run = result[store];
    for (const figure of ['cpuUsPerIdlePoll', 'idlePollP99Ms', 'rssBytesPerConnection', 'pushItemsPerS']) {
      expect({ store, figure, finite: Number.isFinite(run[figure]) }).toEqual({ store, figure, finite: true });
    }
    // Every idle poll was answered 200, and the pushes stored what they sent.
    expect({ store, failed: run.idle.failed }).toEqual({ store, failed: 0 });
    expect(run.idle.polls).toBeGreaterThan(0);
    expect(run.push.transactions).toBeGreaterThan(0);
    expect(run.push.items).toBeGreaterThan(0);
  }
  expect(Number.isFinite(result.floor.cpuUsPerPoll)).toBe(true);
  expect(result.floor.polls).toBeGreaterThan(0);
}, 240_000);
