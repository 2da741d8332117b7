/**
 * The real CLI (run `npm run build` first) against the real-world store emulators, as a new user
 * would run it: `storebridge sync --products-url U1 --orders-url U2 --key K --into sqlite:F --json`
 * copies each store completely and exactly into SQLite, with every normalisation counted and
 * printed as a warning; a wrong key (refused with HTTP 200 and a text body) is an auth failure.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlAdapter } from '../../adapters/sql';
import { runCli } from './cli-process';
import { byId, sinkContents, type StoreEmulator } from '../peers/store-emulator';
import { startCsCartStore } from '../peers/store-cscart';
import { startMagentoStore } from '../peers/store-magento';
import { startCursorByBrandStore } from '../peers/store-cursor-by-brand';

const lastLine = (s: string) => s.trim().split('\n').pop()!;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-real-world-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['cs-cart', () => startCsCartStore()],
  ['magento', () => startMagentoStore()],
  ['cursor-by-brand', () => startCursorByBrandStore()],
] as Array<[string, () => Promise<StoreEmulator>]>)('%s', (name, start) => {
  let store: StoreEmulator;
  beforeAll(async () => {
    store = await start();
  });
  afterAll(() => store.close());

  test('sync --products-url --orders-url --into sqlite copies it exactly, warnings counted', async () => {
    const file = path.join(dir, `${name}.db`);
    const r = await runCli(['sync', '--products-url', store.urls.products, '--orders-url', store.urls.orders, '--key', store.key, '--into', `sqlite:${file}`, '--json']);
    expect(r.stderr).not.toMatch(/invalid|anomaly|stopped/);
    expect(r.code).toBe(0);
    const report = JSON.parse(lastLine(r.stdout));
    const total = (e: 'products' | 'orders') => Object.values(store.tally.counts[e]).reduce((a, n) => a + (n ?? 0), 0);
    expect(report).toMatchObject({
      ok: true,
      products: { count: store.truth.products.length, duplicates: 0, invalid: 0 },
      orders: { count: store.truth.orders.length, duplicates: 0, invalid: 0 },
      retries: 0,
    });
    // The store's own deviations, plus the walk's note of a placeholder total where the store sent one.
    expect(report.products.normalised - total('products')).toBe(name === 'magento' ? 0 : 1);
    expect(report.orders.normalised - total('orders')).toBe(1);
    if (name === 'cs-cart') expect(report.orders.fetchedById).toBe(store.truth.orders.length);
    expect(r.stderr).toMatch(/^warning: products: \d+ normalised \(/m);
    const sink = await openSqlAdapter(`sqlite:${file}`);
    try {
      expect(await sinkContents(sink, 'products')).toEqual(byId(store.truth.products));
      expect(await sinkContents(sink, 'orders')).toEqual(byId(store.truth.orders));
    } finally {
      await sink.close?.();
    }
    expect(r.stdout + r.stderr).not.toContain(store.key);
  }, 60_000);

  test('a wrong key, answered HTTP 200 "401 Unauthorized": exit 1, and the message says what happened', async () => {
    const r = await runCli(['sync', '--products-url', store.urls.products, '--orders-url', store.urls.orders, '--key', 'wrong-key-98765', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(lastLine(r.stdout)).ok).toBe(false);
    expect(r.stderr).toMatch(/the store refused the key: it answered with the text "401 Unauthorized" instead of JSON.*HTTP 200/);
  }, 30_000);
});

test('usage: both per-entity URLs, or a base URL; URLs must be http(s) without credentials', async () => {
  const usage = async (...args: string[]) => {
    const r = await runCli(['sync', ...args, '--key', 'k']);
    return [r.code, r.stderr.split('\n')[0]];
  };
  expect(await usage()).toEqual([2, 'storebridge sync: a store URL is required, or --products-url and/or --orders-url']);
  expect(await usage('--products-url', 'ftp://a.example/p', '--orders-url', 'http://a.example/o')).toEqual([2, 'storebridge sync: --products-url must be an http(s) URL']);
  expect(await usage('http://u:p@a.example')).toEqual([2, 'storebridge sync: the URL must not carry credentials (they would end up in logs; the key has its own option)']);
  expect(await usage('a.example/p')).toEqual([2, 'storebridge sync: the URL must be an absolute http(s) URL']);
  expect(await usage('http://a.example/k')).toEqual([2, 'storebridge sync: the URL must not contain the key (it is sent in the key headers)']);
  expect(await usage('http://a.example', '--key-headers', 'Svc Key')).toEqual([2, 'storebridge sync: --key-headers must be a comma-separated list of header names']);
});

test('the key from --key-file (preferred: not in ps), unknown flags refused with the help', async () => {
  const store = await startMagentoStore();
  try {
    const keyFile = path.join(dir, 'key');
    fs.writeFileSync(keyFile, `${store.key}\n`);
    const r = await runCli(['sync', '--products-url', store.urls.products, '--orders-url', store.urls.orders, '--key-file', keyFile, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(lastLine(r.stdout)).products.count).toBe(store.truth.products.length);
    const unknown = await runCli(['sync', 'http://a.example', '--key', 'k', '--pagesize', '5']);
    expect([unknown.code, unknown.stderr]).toEqual([2, "storebridge sync: Unknown option '--pagesize'\nRun \"storebridge help sync\" for its options.\n"]);
  } finally {
    await store.close();
  }
}, 30_000);
