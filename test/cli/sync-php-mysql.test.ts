/**
 * The real CLI (run `npm run build` first) against the php-mysql store emulator (310 products, 172
 * with a NULL video column; products only; an `itemsTotal` that is the count row), as issue 25's
 * user ran it: `sync --products-url U --into sqlite:F --json` lands every product, exit 0; with
 * `--state`, an orders URL that always fails and a price changed between runs (100 → 77.77), the
 * next run brings the new price, says it resumed, and after 3 failed resumes starts a fresh job;
 * `--incremental` on that checkpoint starts a fresh incremental job with a note; the dashboard's
 * data say the connection covers products only; `check` fails `paging-asc` on the count row.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlAdapter } from '../../adapters/sql';
import { demoCatalog } from '../../lib/demo';
import type { Product } from '../../lib/contract/webhook';
import { runCli } from './cli-process';
import { startCliServer } from '../dashboard/dashboard-fixture';
import { startFakeStore } from '../client/fake-store';
import { byId, sinkContents } from '../peers/store-emulator';
import { startPhpMysqlStore, type PhpMysqlStore } from '../peers/store-php-mysql';

const lastLine = (s: string) => s.trim().split('\n').pop()!;

let dir: string;
let store: PhpMysqlStore;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-php-mysql-'));
  store = await startPhpMysqlStore();
});
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function priceInSink(file: string, id: string): Promise<number | undefined> {
  const sink = await openSqlAdapter(`sqlite:${file}`);
  try {
    return (await sink.products.get(id, { signal: new AbortController().signal }))?.variations?.[0]?.prices?.[0]?.number;
  } finally {
    await sink.close?.();
  }
}

test('sync --products-url U alone --into sqlite: all 310 products land, exit 0, the products-only connection is ok', async () => {
  const file = path.join(dir, 'alone.db');
  const r = await runCli(['sync', '--products-url', store.url, '--key', 'any-key-123456', '--into', `sqlite:${file}`, '--json']);
  expect(r.stderr).not.toMatch(/invalid|anomaly|stopped/);
  expect(r.code).toBe(0);
  const report = JSON.parse(lastLine(r.stdout));
  expect(report).toMatchObject({ ok: true, entities: ['products'], jobid: 1, resumed: false, products: { count: 310, duplicates: 0, invalid: 0 }, orders: { count: 0 } });
  // The DESIGN.md contract's members first and in their order; the added ones after them.
  expect(Object.keys(report).slice(0, 7)).toEqual(['ok', 'products', 'orders', 'requests', 'retries', 'durationMs', 'normalisations']);
  expect(report.normalisations).toMatchObject({ 'incomplete-member-dropped': 172, 'items-total-unusable': 8 });
  expect(r.stderr).toMatch(/^warning: products: \d+ normalised \(.*incomplete-member-dropped 172/m);
  const sink = await openSqlAdapter(`sqlite:${file}`);
  try {
    expect(await sinkContents(sink, 'products')).toEqual(byId(store.truth.products));
  } finally {
    await sink.close?.();
  }
  expect(store.warnings()).toBe(0); // every request carried an offset: no PHP warning before the JSON
  const text = await runCli(['sync', '--products-url', store.url, '--key', 'any-key-123456']);
  expect(text.stdout).toContain('orders   not covered by this connection (no orders URL)');
}, 60_000);

test('--state, orders that always fail, a price changed between runs: the next run brings it; 3 failed resumes, then a fresh job; --incremental is honoured', async () => {
  const file = path.join(dir, 'resume.db');
  const state = path.join(dir, 'resume.json');
  const sync = (...extra: string[]) => runCli(['sync', '--products-url', store.url, '--orders-url', store.url, '--key', 'any-key-123456', '--into', `sqlite:${file}`, '--state', state, '--json', ...extra]);
  try {
    const first = await sync();
    expect(first.code).toBe(1);
    expect(JSON.parse(lastLine(first.stdout))).toMatchObject({ ok: false, jobid: 1, resumed: false, products: { count: 310 }, error: { code: 'STORE_CONTRACT', message: expect.stringContaining('"orders" is not an array') } });
    expect(await priceInSink(file, '1')).toBe(100);

    store.setPrice(1, '77.77');
    const second = await sync();
    const report = JSON.parse(lastLine(second.stdout));
    expect(report).toMatchObject({ ok: false, jobid: 1, resumed: true, resume: { jobid: 1, since: expect.any(String), resumes: 1 }, products: { count: 310 } });
    expect(await priceInSink(file, '1')).toBe(77.77);

    for (const resumes of [2, 3]) expect(JSON.parse(lastLine((await sync()).stdout)).resume.resumes).toBe(resumes);
    const fifth = await sync();
    expect(JSON.parse(lastLine(fifth.stdout))).toMatchObject({ jobid: 2, resumed: false, abandoned: { jobid: 1, reason: '3 resumed runs did not complete it (maxResumes 3)' } });
    expect(fifth.stderr).toMatch(/^storebridge sync: note: job 1 \(since .+\) was set aside: 3 resumed runs did not complete it \(maxResumes 3\); this run is job 2$/m);

    const incremental = await runCli(['sync', '--products-url', store.url, '--orders-url', store.url, '--key', 'any-key-123456', '--into', `sqlite:${file}`, '--state', state, '--incremental']);
    expect(incremental.stderr).toMatch(/note: job 2 \(since .+\) was set aside: mode incremental was asked for, the checkpoint's mode is full; this run is job 3/);
    expect(incremental.stdout).toMatch(/^job 3: \d+ requests/m);
    // Resumed in text mode too: the summary line says so.
    const resumed = await runCli(['sync', '--products-url', store.url, '--orders-url', store.url, '--key', 'any-key-123456', '--into', `sqlite:${file}`, '--state', state, '--incremental']);
    expect(resumed.stdout).toMatch(/^job 3 \(resumed, since \S+; resume 1\): /m);
  } finally {
    store.setPrice(1, '100.00');
  }
}, 120_000);

test("the dashboard's data say the connection covers products only", async () => {
  const state = path.join(dir, 'dash.json');
  const r = await runCli(['sync', '--products-url', store.url, '--key', 'any-key-123456', '--state', state, '--connection', 'php', '--json']);
  expect(r.code).toBe(0);
  const d = await startCliServer(['dashboard', '--port', '0', '--state', state], /dashboard on/);
  try {
    const body = (await (await fetch(`${d.url}/api/overview`)).json()) as { sync: { connections: Array<Record<string, unknown>> } };
    expect(body.sync.connections[0]).toMatchObject({ name: 'php', lastRun: { outcome: 'ok', entities: ['products'], products: { count: 310 } } });
    expect(await (await fetch(`${d.url}/`)).text()).toContain('not covered');
  } finally {
    await d.stop();
  }
}, 60_000);

test('check --products-url U fails paging-asc and paging-desc on the count row, and counts each item once', async () => {
  const r = await runCli(['check', '--products-url', store.url, '--key', 'any-key-123456', '--json']);
  expect(r.code).toBe(1);
  const { checks } = JSON.parse(lastLine(r.stdout)) as { checks: Array<{ name: string; ok: boolean; detail: string; level: string }> };
  const check = (name: string) => checks.find((c) => c.name === name)!;
  expect(checks.every((c) => c.name.startsWith('products.'))).toBe(true); // a products-only connection
  for (const name of ['products.paging-asc', 'products.paging-desc']) {
    expect(check(name)).toMatchObject({ ok: false, level: 'must', detail: 'itemsTotal is not a count on 8 pages (sent {"0":"310","count(*)":"310"}): the total is unknown' });
  }
  expect(check('products.sort-order').detail).toBe('310 items without last_updated: no sort key to follow');
  expect(check('products.types').detail).toBe('values the caller had to convert: null-dropped 234, incomplete-member-dropped 172');
  // The probes carry offset=0 as the caller does, so the key checks judge the key check (there is none).
  expect(check('products.auth-missing-key')).toMatchObject({ ok: false, detail: 'expected HTTP 401 with a JSON {error} body, got HTTP 200 without {error}' });
  expect(check('products.auth-svckey').ok).toBe(true);
}, 60_000);

test('a store quarantining more than 10 items: the first 10 are printed, then how many more', async () => {
  const products = demoCatalog(40).products;
  const broken = await startFakeStore({
    products,
    key: 'any-key-123456',
    transform: (body, ctx) => (ctx.entity === 'products' ? { ...body, products: (body.products as Product[]).map((p, i) => (i % 2 === 0 ? { ...p, title: { lost: true } } : p)) } : body),
  });
  try {
    const r = await runCli(['sync', broken.url, '--key', 'any-key-123456']);
    expect(r.code).toBe(1);
    expect(r.stderr.match(/^invalid products /gm)).toHaveLength(10);
    expect(r.stderr).toMatch(/^… and 10 more invalid items$/m);
  } finally {
    await broken.close();
  }
}, 30_000);
