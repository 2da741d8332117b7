/**
 * `storebridge dashboard`, the real CLI: the ready line, a `--state` file written by the real
 * `storebridge sync --state`, usage errors in one message (a token is never echoed), missing
 * optional packages in one line (never a stack), a clean SIGTERM.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { demoCatalog } from '../../lib/demo';
import { runCli } from '../cli/cli-process';
import { startFakeStore, type FakeStore } from '../client/fake-store';
import { REDIS_URL } from '../sync/bullmq-helpers';
import { startCliServer } from './dashboard-fixture';

const KEY = 'cli-test-store-key-4d2e91';
const HIDE = { NODE_OPTIONS: `--require ${path.join(__dirname, 'hide-packages.js')}` };
let store: FakeStore;
let dir: string;
beforeAll(async () => {
  const { products, orders } = demoCatalog(30);
  store = await startFakeStore({ products, orders, key: KEY, pageSize: 10 });
  dir = mkdtempSync(path.join(tmpdir(), 'sb-dash-cli-'));
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('--state FILE: the connections of a "storebridge sync --state" file, their job and high water, last runs and history; the exact ready line; SIGTERM exits 0', async () => {
  const state = path.join(dir, 'state.json');
  for (let i = 0; i < 2; i++) {
    const sync = await runCli(['sync', store.url, '--state', state, '--connection', 'shop-file', '--json'], { STOREBRIDGE_KEY: KEY });
    expect(sync.code).toBe(0);
  }
  const d = await startCliServer(['dashboard', '--port', '0', '--state', state], /dashboard on/);
  try {
    expect(d.cli.stdout()).toMatch(/^dashboard on http:\/\/127\.0\.0\.1:\d+\n$/);
    const body = (await (await fetch(`${d.url}/api/overview`)).json()) as { sync: { connections: unknown[] } };
    expect(body.sync).toMatchObject({ label: `state file ${state}`, capabilities: { runNow: false, pause: false }, total: 1 });
    expect(body.sync.connections[0]).toMatchObject({ name: 'shop-file', checkpoint: { jobid: 2 } });
    // The run reports sync keeps beside the state file: last run, figures and history, as from Redis.
    expect(body.sync.connections[0]).toMatchObject({ lastRun: { outcome: 'ok', jobid: 2, products: { count: 30 }, orders: { count: expect.any(Number) } } });
    const one = (await (await fetch(`${d.url}/api/connections/shop-file`)).json()) as { history: Array<{ jobid: number; outcome: string }> };
    expect(one.history.map((r) => [r.jobid, r.outcome])).toEqual([[2, 'ok'], [1, 'ok']]);
    const page = await (await fetch(`${d.url}/`)).text();
    expect(page).toContain('data-connection="shop-file"');
    expect(page).toContain('job 2');
    expect(page).toMatch(/took \d/);
    expect(page).not.toContain('Run now');
    // Read-only: a note says why there are no actions (no empty Actions column); no link to a missing section.
    expect(page).toContain('Read-only: this source cannot start, pause or resume runs.');
    expect(page).not.toContain('<th>Actions</th>');
    expect(page).toContain('<nav><a href="/#sync">Sync</a></nav>');
    expect(page).not.toContain(KEY);
    // The server limits of `serve` (docs/deployment.md "Server limits"): a request Node cannot
    // parse is answered in JSON, not with Node's bare-text 400.
    const { hostname, port } = new URL(d.url);
    const raw = await new Promise<string>((resolve) => {
      let text = '';
      const socket = connect(Number(port), hostname, () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n'));
      socket.on('data', (chunk) => (text += chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(text));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('content-type: application/json');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({ error: expect.stringContaining('not valid HTTP') });
  } finally {
    await d.stop();
  }
  expect(await d.cli.exit).toBe(0);
  expect(d.cli.stderr()).toBe('storebridge dashboard: SIGTERM, shutting down\n');
});

test('usage errors say what is wrong, exit 2, and never echo a token', async () => {
  const cases: Array<[string[], RegExp, NodeJS.ProcessEnv?]> = [
    [['dashboard'], /nothing to show: give --redis URL, --state FILE or --reverse URL/],
    [['dashboard', '--state', 'x.json', '--host', '0.0.0.0'], /listening on 0\.0\.0\.0 \(not loopback\) needs an operator token: --token-env ENV/],
    [['dashboard', '--state', 'x.json', '--token-env', 'SB_UNSET_TOKEN_VAR'], /environment variable SB_UNSET_TOKEN_VAR is not set or empty/],
    [['dashboard', '--state', 'x.json', '--token-env', 'SB_SHORT'], /the token in SB_SHORT must be at least 16 visible ASCII characters/, { SB_SHORT: 'short-tok3n' }],
    [['dashboard', '--state', 'x.json', '--token-env', 'an-actual-secret-token-value'], /--token-env must name an environment variable/],
    [['dashboard', '--redis', 'http://x', '--port', '0'], /--redis must be a redis:\/\//],
    // Checked once, by the factory the value goes to: its option error names the flag.
    [['dashboard', '--redis', REDIS_URL, '--prefix', 'no spaces'], /^storebridge dashboard: --prefix must be 1-100 letters, digits, or \. _ - \{ \}$/],
    [['dashboard', '--redis', REDIS_URL, '--state', 'x.json'], /give --redis or --state, not both/],
    [['dashboard', '--state', 'x.json', '--port', '70000'], /--port must be an integer from 0 to 65535/],
  ];
  for (const [args, message, env] of cases) {
    const r = await runCli(args, env);
    expect({ args, code: r.code, first: r.stderr.split('\n')[0] }).toEqual({ args, code: 2, first: expect.stringMatching(message) });
    expect(r.stderr).not.toContain('short-tok3n');
    expect(r.stderr).not.toContain('an-actual-secret-token-value');
  }
});

test('a missing optional package is one line, never a stack: bull-board (served without the jobs view), bullmq/ioredis (exit 1)', async () => {
  const d = await startCliServer(['dashboard', '--port', '0', '--redis', REDIS_URL, '--prefix', 'sbtest-nojobs'], /dashboard on/, { ...HIDE, SB_HIDE_PACKAGES: '@bull-board/api,@bull-board/express' });
  try {
    expect(d.cli.stderr()).toBe('storebridge dashboard: note: no jobs view: the jobs view (bull-board) needs @bull-board/api and @bull-board/express: npm install @bull-board/api @bull-board/express\n');
    expect((await fetch(`${d.url}/jobs/`, { headers: { accept: 'application/json' } })).status).toBe(404);
    expect(await (await fetch(`${d.url}/`)).text()).not.toContain('Jobs (BullMQ)');
  } finally {
    await d.stop();
  }
  const r = await runCli(['dashboard', '--port', '0', '--redis', REDIS_URL], { ...HIDE, SB_HIDE_PACKAGES: 'ioredis,bullmq' });
  expect(r.code).toBe(1);
  expect(r.stderr).toBe('storebridge dashboard: the Redis-backed sync needs the ioredis package: npm install ioredis bullmq\n');
});
