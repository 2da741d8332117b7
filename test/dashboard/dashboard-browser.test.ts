/**
 * The dashboard in a real browser (playwright-core driving Debian's Chromium), served by the real
 * CLI (`storebridge dashboard`) over a real sync fleet (10 loopback stores, BullMQ on Redis, a
 * worker) and a real reverse service (`storebridge reverse-service`), with the real daemon
 * (`storebridge daemon`) running what the dashboard queued. The operator token is on, so the
 * browser logs in first. Every body served and every line the processes print is scanned for the
 * store keys, the reverse connection key and the token. Screenshots: test-artifacts/dashboard-*.png.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { openSqlAdapter } from '../../adapters/sql';
import { seedDemo } from '../../lib/demo';
import { describeRedis, REDIS_URL } from '../sync/bullmq-helpers';
import { ROOT, runCli } from '../cli/cli-process';
import { CHROMIUM, CHROMIUM_ARGS, describeBrowser, startCliServer, startFleet, type Fleet } from './dashboard-fixture';

/** The page's DOM, as far as the functions evaluated in the browser use it (the project has no DOM types). */
interface Box {
  textContent: string | null;
  scrollWidth: number;
  clientWidth: number;
  getBoundingClientRect(): { right: number };
}
declare const document: { querySelector(selector: string): Box | null; querySelectorAll(selector: string): ArrayLike<Box>; documentElement: Box };
declare const window: { innerWidth: number };

const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const TOKEN = `op-token-${randomBytes(12).toString('hex')}`;
const REVERSE_KEY = `reverse-key-${randomBytes(12).toString('hex')}`;

describeRedis('dashboard in a browser', () => {
  describeBrowser('dashboard in Chromium', () => {
    let fleet: Fleet;
    let reverse: Awaited<ReturnType<typeof startCliServer>>;
    let dashboard: Awaited<ReturnType<typeof startCliServer>>;
    let browser: Browser;
    let page: Page;
    let dir: string;
    const served: Array<{ url: string; body: string }> = [];
    /** Requests the server answered 404: the pages ask for nothing they do not serve (a favicon, say). */
    const notFound: string[] = [];
    /** Requests to any other origin (bull-board's page linked Google Fonts): none. */
    const foreign: string[] = [];
    const shot = (name: string, fullPage = true) => page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${name}.png`), fullPage });
    const row = (name: string) => page.locator(`tr[data-connection="${name}"]`);

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      dir = mkdtempSync(path.join(tmpdir(), 'sb-dash-'));
      fleet = await startFleet({ connections: 10 });
      reverse = await startCliServer(['reverse-service', '--port', '0'], /listening on/, { STOREBRIDGE_CONNECTION: REVERSE_KEY });
      await fleet.waitForRuns(1);
      dashboard = await startCliServer(
        ['dashboard', '--port', '0', '--redis', REDIS_URL, '--prefix', fleet.prefix, '--reverse', reverse.url, '--token-env', 'SB_DASH_TOKEN', '--refresh-ms', '500'],
        /dashboard on/,
        { SB_DASH_TOKEN: TOKEN },
      );
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
      page.on('request', (req) => {
        if (!/^(data|blob):/.test(req.url()) && new URL(req.url()).origin !== new URL(dashboard.url).origin) foreign.push(req.url());
      });
      page.on('response', (res) => {
        if (res.status() === 404) notFound.push(res.url());
        // Redirects have no body to read.
        if (res.status() >= 300 && res.status() < 400) return;
        void res.text().then((body) => served.push({ url: res.url(), body }), () => undefined);
      });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await dashboard?.stop();
      await reverse?.stop();
      await fleet?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    test('the operator logs in with the token; the table lists the 10 connections with their last-run figures', async () => {
      await page.goto(dashboard.url);
      expect(new URL(page.url()).pathname).toBe('/login');
      await page.fill('#token', 'not-the-token-0000000');
      await page.click('button[type=submit]');
      await expect(page.locator('.notice.bad').textContent()).resolves.toContain('not the operator token');
      await page.fill('#token', TOKEN);
      await page.click('button[type=submit]');
      await page.waitForSelector('table.connections');
      expect(await page.locator('table.connections tbody tr').count()).toBe(10);
      for (const id of fleet.ids) await expect(row(id).count()).resolves.toBe(1);
      // A healthy connection: ok, its products and orders in the sink, when and how long.
      const ok = row(fleet.ids[2]);
      const sink = fleet.sinks.get(fleet.ids[2])!;
      const counts = { products: (await sink.products.list({ sortorder: 'asc', limit: 10_000, signal: AbortSignal.timeout(5000) })).length, orders: (await sink.orders.list({ sortorder: 'asc', limit: 10_000, signal: AbortSignal.timeout(5000) })).length };
      expect(counts.products).toBe(60);
      await expect(ok.locator('.badge').textContent()).resolves.toBe('ok');
      const cells = await ok.locator('td').allTextContents();
      expect(cells[2]).toMatch(/ago|just now/);
      expect(cells[2]).toMatch(/took \d/);
      expect(cells[3]).toContain(String(counts.products));
      expect(cells[4]).toContain(String(counts.orders));
      expect(cells[5]).toMatch(/0 dup · 0 invalid/);
      expect(cells[7]).toMatch(/in \d|due/); // the next scheduled run
      await expect(page.locator('.cards').textContent()).resolves.toMatch(/10\s*connections/);
      expect(notFound).toEqual([]);
      await shot('overview');
    });

    test('a connection whose store answers 401 shows its error in words', async () => {
      const bad = row(fleet.failing);
      await expect(bad.locator('.badge').textContent()).resolves.toBe('failed');
      await expect(bad.locator('.error').first().textContent()).resolves.toContain('The store refused the key (HTTP 401)');
      await page.click(`a[href="/connections/${fleet.failing}"]`);
      await page.waitForSelector('svg.chart:not(.spark)');
      expect(await page.locator('svg.chart:not(.spark) .fail-mark').count()).toBeGreaterThanOrEqual(1);
      await expect(page.locator('main').textContent()).resolves.toContain('The store refused the key (HTTP 401)');
      await shot('failing-connection');
    });

    test('"Run now" on one connection produces a new run that appears', async () => {
      const id = fleet.ids[3];
      await page.goto(dashboard.url);
      const before = (await fleet.health.lastRun(id))!.jobid;
      await row(id).locator('button', { hasText: 'Run now' }).click();
      await expect(page.locator('.notice').textContent()).resolves.toContain(`Queued a run of ${id}`);
      // The page refreshes itself (the small script): the new job appears without a reload.
      await page.waitForFunction(([name, job]) => document.querySelector(`tr[data-connection="${name}"]`)?.textContent?.includes(`job ${job}`), [id, before + 1] as const, { timeout: 15_000 });
      expect(await row(id).locator('svg.spark .run').count()).toBe(2);
      expect((await fleet.health.history(id)).map((r) => r.jobid)).toEqual([before + 1, before]);
      await shot('run-now');
    });

    test('"Pause" removes the schedule of one connection and "Resume" restores it', async () => {
      const id = fleet.ids[5];
      await row(id).locator('button', { hasText: 'Pause' }).click();
      await expect(row(id).locator('.badge').textContent()).resolves.toBe('paused');
      expect((await fleet.queue.connections()).map((c) => c.id)).not.toContain(id);
      expect((await fleet.queue.connections()).length).toBe(9);
      await row(id).locator('button', { hasText: 'Resume' }).click();
      await expect(row(id).locator('.badge').textContent()).resolves.toBe('ok');
      expect((await fleet.queue.connections()).find((c) => c.id === id)).toMatchObject({ intervalMs: 600_000 });
    });

    test('reverse: "Ask the daemon to send its changes (push)" queues a push that the daemon (real CLI) then runs', async () => {
      const storeFile = path.join(dir, 'daemon-store.db');
      const store = await openSqlAdapter(`sqlite:${storeFile}`);
      const seeded = await seedDemo(store, 24);
      await store.close?.();
      await page.goto(dashboard.url);
      const rev = page.locator('tr[data-reverse="default"]');
      await expect(rev.count()).resolves.toBe(1);
      await rev.locator('button', { hasText: 'Ask the daemon to send its changes (push)' }).click();
      await expect(page.locator('.notice').textContent()).resolves.toBe("Queued a push for default: the daemon sends the store's changes on its next poll.");
      await expect(page.locator('tr[data-reverse="default"] td').nth(3).textContent()).resolves.toBe('push');
      await shot('reverse-queued');
      const daemon = await runCli(['daemon', '--service', reverse.url, '--adapter', `sqlite:${storeFile}`, '--once', '--json', '--poll-ms', '50'], { STOREBRIDGE_CONNECTION: REVERSE_KEY });
      expect(daemon.code).toBe(0);
      expect(JSON.parse(daemon.stdout.trim().split('\n').pop()!)).toMatchObject({ ok: true, pushed: { products: seeded.products, orders: seeded.orders } });
      // The page (refreshing itself) shows the finished push and the items the service received.
      await page.waitForFunction((n) => document.querySelector('table.transactions')?.textContent?.includes(`${n} products`), seeded.products, { timeout: 10_000 });
      await expect(page.locator('tr[data-reverse="default"] td').nth(3).textContent()).resolves.toBe('empty');
      await expect(page.locator('tr[data-reverse="default"] td').nth(4).textContent()).resolves.toContain(`/ ${seeded.products}`);
      await shot('reverse-pushed');
      served.push({ url: 'daemon output', body: daemon.stdout + daemon.stderr });
    });

    test('the jobs view (bull-board) is mounted behind the same login', async () => {
      await page.goto(`${dashboard.url}/jobs/queue/sync?status=completed`);
      await page.waitForLoadState('networkidle');
      // bull-board's own API, read with the browser's session: the queue and its completed jobs.
      const queues = await page.evaluate(() => fetch('/jobs/api/queues?activeQueue=sync&status=completed').then((r) => r.json()));
      const sync = (queues as { queues: Array<{ name: string; counts: Record<string, number>; readOnlyMode: boolean }> }).queues.find((q) => q.name === 'sync')!;
      expect(sync.readOnlyMode).toBe(true);
      expect(sync.counts.completed).toBeGreaterThanOrEqual(fleet.ids.length - 1);
      await shot('jobs', false);
      expect(foreign).toEqual([]);
      const anonymous = await fetch(`${dashboard.url}/jobs/api/queues`);
      expect(anonymous.status).toBe(401);
    });

    test('without JavaScript: the operator logs in, reads the table and acts through plain forms', async () => {
      const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1500, height: 900 } });
      try {
        const plain = await context.newPage();
        await plain.goto(dashboard.url);
        await plain.fill('#token', TOKEN);
        await plain.click('button[type=submit]');
        await plain.waitForSelector('table.connections');
        expect(await plain.locator('table.connections tbody tr').count()).toBe(10);
        const id = fleet.ids[1];
        const before = (await fleet.health.lastRun(id))!.jobid;
        await plain.locator(`tr[data-connection="${id}"] button`, { hasText: 'Run now' }).click();
        await expect(plain.locator('.notice').textContent()).resolves.toContain(`Queued a run of ${id}`);
        for (let i = 0; i < 100 && (await fleet.health.lastRun(id))!.jobid === before; i++) await new Promise((r) => setTimeout(r, 100));
        await plain.reload();
        await expect(plain.locator(`tr[data-connection="${id}"]`).textContent()).resolves.toContain(`job ${before + 1}`);
        await plain.screenshot({ path: path.join(ARTIFACTS, 'dashboard-no-javascript.png') });
      } finally {
        await context.close();
      }
    });

    test.each([1280, 768])('at %i px wide no page scrolls sideways (wide tables scroll in their own box), with the reverse section shown', async (width) => {
      await page.setViewportSize({ width, height: 900 });
      try {
        const pages = [dashboard.url, `${dashboard.url}/connections/${fleet.failing}`, `${dashboard.url}/reverse/0/default`];
        for (const url of pages) {
          await page.goto(url);
          await page.waitForSelector('main h2');
          const m = await page.evaluate(() => ({
            page: document.documentElement.scrollWidth,
            window: window.innerWidth,
            header: document.querySelector('header')!.scrollWidth,
            // Each table's box: how much of it is hidden to the right (0: the table fits).
            hidden: Array.from(document.querySelectorAll('.scroll')).map((b) => b.scrollWidth - b.clientWidth),
          }));
          expect({ url, width, page: m.page <= m.window, header: m.header <= m.window }).toEqual({ url, width, page: true, header: true });
          // At 1280 px the overview's tables fit whole: every action button is in sight.
          if (width === 1280 && url === dashboard.url) expect({ url, hidden: m.hidden.filter((h) => h > 0) }).toEqual({ url, hidden: [] });
          await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${width}-${['overview', 'connection', 'reverse'][pages.indexOf(url)]}.png`), fullPage: true });
        }
        // The nav links only to what is shown; both sections are here.
        await page.goto(dashboard.url);
        expect(await page.locator('header nav a').allTextContents()).toEqual(['Sync', 'Reverse', 'Jobs (BullMQ)']);
      } finally {
        await page.setViewportSize({ width: 1500, height: 900 });
      }
    });

    test('no key or token appears in any served body or in the processes\' output', async () => {
      // The JSON views too, as a script reads them.
      for (const p of ['/api/overview', `/api/connections/${fleet.failing}`, `/api/connections/${fleet.ids[0]}`]) {
        const res = await fetch(dashboard.url + p, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(res.status).toBe(200);
        served.push({ url: p, body: await res.text() });
      }
      expect(served.length).toBeGreaterThan(10);
      // The scan reads real bodies: names are there (so a key would be seen too).
      expect(served.filter((s) => s.body.includes(fleet.ids[0])).length).toBeGreaterThan(3);
      expect(served.some((s) => s.url.includes('/jobs/api/'))).toBe(true);
      const outputs = [dashboard.cli.stdout(), dashboard.cli.stderr(), reverse.cli.stdout(), reverse.cli.stderr()];
      for (const secret of [...fleet.secrets, REVERSE_KEY, TOKEN]) {
        for (const s of served) expect({ url: s.url, leaked: s.body.includes(secret) }).toEqual({ url: s.url, leaked: false });
        for (const out of outputs) expect(out.includes(secret)).toBe(false);
      }
      const cookies = await page.context().cookies();
      expect(cookies.map((c) => c.value).join(' ')).not.toContain(TOKEN);
    });
  });
});
