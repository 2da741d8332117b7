/**
 * `check` against the real-world store emulators: the caller reads them (the sync copies them), but
 * the checks name each way they depart from the interface's text, as `must` failures.
 */
import { checkEndpoints, type CheckReport } from '../../lib/conformance/endpoint-checker';
import type { StoreEmulator } from '../peers/store-emulator';
import { startCsCartStore } from '../peers/store-cscart';
import { startMagentoStore } from '../peers/store-magento';
import { startCursorByBrandStore } from '../peers/store-cursor-by-brand';

const failedMusts = (r: CheckReport) => r.checks.filter((c) => !c.ok && c.level === 'must').map((c) => c.name);
const detail = (r: CheckReport, name: string) => r.checks.find((c) => c.name === name)!.detail;

async function checkStore(start: () => Promise<StoreEmulator>): Promise<CheckReport> {
  const store = await start();
  try {
    return await checkEndpoints({ urls: { listProducts: store.urls.products, listOrders: store.urls.orders }, svcKey: store.key });
  } finally {
    await store.close();
  }
}

test('cs-cart: a text refusal at HTTP 200, a placeholder total, numeric ids, an ids-only order list', async () => {
  const r = await checkStore(() => startCsCartStore());
  expect(r.ok).toBe(false);
  expect(failedMusts(r)).toEqual(expect.arrayContaining(['products.auth-missing-key', 'products.auth-wrong-key', 'products.paging-asc', 'products.types', 'orders.types']));
  expect(detail(r, 'products.auth-missing-key')).toMatch(/expected HTTP 401 with a JSON \{error\} body, got HTTP 200 with the text "401 Unauthorized"/);
  expect(detail(r, 'products.paging-asc')).toMatch(/itemsTotal is a placeholder \(999\)/);
  expect(detail(r, 'products.types')).toMatch(/values the caller had to convert: string-from-number \d+/);
  expect(detail(r, 'orders.whole-items')).toMatch(/an ids-only list: 61 stubs/);
  // Each stub is read whole through ?id=, the only way cs-cart serves an order.
  expect(r.checks.find((c) => c.name === 'orders.by-id-query')).toMatchObject({ level: 'must' });
  // The deployed forms it does serve pass.
  expect(r.checks.find((c) => c.name === 'products.auth-c2skey')!.ok).toBe(true);
});

test('magento: offsets rounded to its own pages are fine; string numbers in orders are not the webhook form', async () => {
  const r = await checkStore(() => startMagentoStore());
  expect(failedMusts(r)).toEqual(expect.arrayContaining(['orders.types', 'orders.paging-asc']));
  expect(failedMusts(r)).not.toContain('products.paging-asc');
  expect(detail(r, 'orders.types')).toMatch(/number-from-string 99/);
});

test('cursor-by-brand: no last_updated, so no sort order to follow', async () => {
  const r = await checkStore(() => startCursorByBrandStore());
  expect(failedMusts(r)).toEqual(expect.arrayContaining(['products.sort-order', 'products.paging-asc', 'orders.sort-order']));
  expect(detail(r, 'products.sort-order')).toMatch(/64 items without last_updated/);
});
