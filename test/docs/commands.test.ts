/**
 * Every command written in README.md, docs/ and the examples' headers runs as written (issue 21):
 * in a fresh copy of this checkout (its files as git sees them, without dist/; node_modules linked,
 * as `npm install` left it), one session per page, in page order, each command to its end (exit
 * status 0) or until it serves (see doc-session.ts). The README goes first: its `npm start` builds
 * the copy, as it does for a newcomer. Commands that cannot run here are listed with the reason
 * (doc-commands.ts, NOT_RUN_HERE), and printed.
 *
 * The pages use fixed ports (8080, 9090, 9000, …) and fixed Redis names (sbdemo), so runs of this
 * test on one machine take turns (a lock directory in the temp dir).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { REDIS_URL } from '../sync/bullmq-helpers';
import { commandsOf, documentedCommands, headerCommands, markdownCommands, runnablePart, type DocPage } from './doc-commands';
import { DocSession } from './doc-session';

const ROOT = resolve(__dirname, '..', '..');
const PAGES: DocPage[] = documentedCommands(ROOT);
const COMMAND_TIMEOUT_MS = 180_000;
const LOCK = join(tmpdir(), 'storebridge-doc-commands.lock');

describe('finding the commands', () => {
  test('continuations are joined, comments dropped, a multi-line loop kept whole', () => {
    const lines = ['# a comment', 'npx storebridge sync URL \\', '  --json | tail -1', '# {"ok":true}', '', 'for i in 1 2; do', '  echo $i', 'done'];
    expect(commandsOf(lines, 10, 'p.md')).toEqual([
      { where: 'p.md:11', text: 'npx storebridge sync URL --json | tail -1' },
      { where: 'p.md:15', text: 'for i in 1 2; do\n  echo $i\ndone' },
    ]);
  });

  test('only sh blocks of a page; header lines indented three spaces in an example', () => {
    const md = ['Text `npm nope`.', '```sh', 'npm start', '```', '```text', 'storebridge serve --port P', '```', '```ts', 'await x;', '```'].join('\n');
    expect(markdownCommands(md, 'p.md')).toEqual([{ where: 'p.md:3', text: 'npm start' }]);
    const ts = ['/**', ' * Prose, not a command.', ' *   npx tsc -p examples --outDir /tmp/x', ' *   node /tmp/x/a.js &', ' */', 'const a = 1;'].join('\n');
    expect(headerCommands(ts, 'e.ts').map((c) => c.text)).toEqual(['npx tsc -p examples --outDir /tmp/x', 'node /tmp/x/a.js &']);
  });

  test('the pages with commands, and the commands not run here with their reasons', () => {
    expect(PAGES.map((p) => p.page)).toEqual(expect.arrayContaining(['README.md', 'docs/dashboard.md', 'examples/mount-in-existing-app.ts', 'examples/sync-workers.ts']));
    expect(PAGES[0].page).toBe('README.md');
    const notRun = PAGES.flatMap((p) => p.commands.flatMap((c) => runnablePart(c.text).skipped.map((s) => `${c.where}: ${s.step.replace(/\s+#.*$/, '')} — ${s.reason}`)));
    process.stderr.write(`Documented commands not run here (${notRun.length}):\n  ${notRun.join('\n  ')}\n`);
    // Most commands run: the list stays short.
    const total = PAGES.reduce((n, p) => n + p.commands.length, 0);
    expect(notRun.length).toBeLessThan(total / 4);
  });
});

describe('a page session', () => {
  test('carries export and cd over, keeps a server running, runs & in the background, reports a failing command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-doc-session-test-'));
    const session = new DocSession(dir, { PATH: process.env.PATH });
    const server = `node -e "require('http').createServer((q, s) => s.end('hi')).listen(0, function () { console.log('listening on http://127.0.0.1:' + this.address().port) })"`;
    try {
      expect(await session.run('export GREETING=hello && mkdir sub && cd sub', 10_000)).toMatchObject({ code: 0, changedShell: true });
      expect(await session.run('true', 10_000)).toMatchObject({ code: 0, changedShell: false });
      expect(await session.run('test "$GREETING" = hello && test "$(basename "$PWD")" = sub', 10_000)).toMatchObject({ how: 'exited', code: 0 });
      const serving = await session.run(server, 10_000);
      expect(serving.how).toBe('serving');
      const url = /listening on (\S+)/.exec(serving.output)![1];
      expect(await (await fetch(url)).text()).toBe('hi');
      expect(await session.run('sleep 30 &', 10_000)).toMatchObject({ how: 'background' });
      expect(await session.run('echo broken >&2; exit 3', 10_000)).toMatchObject({ how: 'exited', code: 3, output: 'broken\n' });
      expect(await session.run('sleep 5', 200)).toMatchObject({ code: null });
    } finally {
      await session.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A fresh copy of the checkout: the files git tracks or would track, node_modules linked, no dist/. */
function freshCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-doc-clone-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(ROOT, f))) continue; // deleted, not yet committed
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Waits for other runs of this test on the machine (same ports, same Redis names), then holds the lock. */
async function takeLock(): Promise<() => void> {
  for (let waited = 0; ; waited += 1_000) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch {
      const pid = Number(readFileSync(join(LOCK, 'pid'), { encoding: 'utf8', flag: 'a+' }) || 0);
      let alive = false;
      try {
        alive = pid > 0 && process.kill(pid, 0);
      } catch {
        alive = false;
      }
      if (!alive) rmSync(LOCK, { recursive: true, force: true });
      else if (waited > 900_000) throw new Error(`another run (pid ${pid}) has held ${LOCK} for 15 minutes`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

/**
 * What a page leaves in the shared Redis, removed before and after it: the namespaces it names
 * (`--prefix sbdemo`, `SB_PREFIX=sbdemo`), and the rate-limit counters of the keys it uses (a rerun
 * within the minute would otherwise start with them spent).
 */
async function purgeRedisOf(page: DocPage): Promise<void> {
  const text = page.commands.map((c) => c.text).join('\n');
  const patterns = [
    ...[...text.matchAll(/(?:--prefix |SB_PREFIX=)([\w-]+)/g)].map((m) => `${m[1]}:*`),
    ...[...text.matchAll(/(?:--key |STOREBRIDGE_KEY=|SvcKey: )([\w-]+)/g)].map((m) => `*key:${createHash('sha256').update(m[1]).digest('hex')}*`),
  ];
  if (patterns.length === 0) return;
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    for (const pattern of new Set(patterns)) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
    }
  } catch {
    // No Redis: the page's commands failed already, and said why.
  } finally {
    redis.disconnect();
  }
}

describe('every documented command runs as written', () => {
  /**
   * Commands that ran to their end with status 0 in this copy, by text: the same command on a later
   * page (the examples' build, the sync-workers demo) is not run again. Servers and background
   * commands always run: later commands of their page need them.
   */
  const passed = new Map<string, string>();
  let clone: string;
  let unlock: (() => void) | undefined;
  beforeAll(async () => {
    unlock = await takeLock();
    clone = freshCopy();
  }, 1_000_000);
  afterAll(() => {
    if (clone) rmSync(clone, { recursive: true, force: true });
    unlock?.();
  });

  test.each(PAGES.map((p) => [p.page, p] as const))('%s', async (_name, page) => {
    // A reader of any other page has run the README's `npm start`, which builds the checkout.
    if (page.page !== 'README.md' && !existsSync(join(clone, 'dist', 'lib', 'cli', 'main.js'))) execFileSync('npm', ['run', 'build'], { cwd: clone, stdio: 'ignore' });
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', STOREBRIDGE_KEY: '', STOREBRIDGE_CONNECTION: '', STOREBRIDGE_SKIP_NOTES: '' };
    await purgeRedisOf(page);
    const session = new DocSession(clone, env);
    const failures: string[] = [];
    const ran: string[] = [];
    try {
      for (const command of page.commands) {
        const { run } = runnablePart(command.text);
        if (!run) continue;
        if (passed.has(run)) {
          ran.push(`as at ${passed.get(run)}`);
          continue;
        }
        const r = await session.run(run, COMMAND_TIMEOUT_MS);
        ran.push(`${r.how === 'exited' ? `exit ${r.code}` : r.how} ${r.ms} ms`);
        if (r.how === 'exited' && r.code === 0 && !r.changedShell) passed.set(run, command.where);
        if (r.how === 'exited' && r.code !== 0) failures.push(`${command.where}: ${run}\n  exit ${r.code} after ${r.ms} ms:\n  ${r.output.trim().split('\n').slice(-15).join('\n  ')}`);
      }
      process.stderr.write(`${page.page}: ${ran.length} commands run (${ran.join(', ')})\n`);
    } finally {
      await session.close();
      await purgeRedisOf(page);
    }
    expect(failures).toEqual([]);
  }, 900_000);
});
