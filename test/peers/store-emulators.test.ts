/**
 * The sync engine against three real-world stores (clean-room emulators of the deployed cs-cart,
 * magento and cursor-by-brand examples): each is copied completely and exactly, every deviation
 * the store put on the wire is counted as a normalisation, and nothing is reported as a failure
 * that the deployed system treats as normal.
 */
import { createStoreClient } from '../../lib/client';
import { StoreAuthError } from '../../lib/client/client-errors';
import type { NormalisationCounts } from '../../lib/client/store-reply';
import { createMemoryAdapter } from '../../adapters/memory';
import { MemoryCheckpointStore, runSync } from '../../lib/sync';
import { ENTITIES, type Entity } from '../../lib/contract/entities';
import { byId, sinkContents, type StoreEmulator } from './store-emulator';
import { startCsCartStore } from './store-cscart';
import { startMagentoStore } from './store-magento';
import { startCursorByBrandStore } from './store-cursor-by-brand';

/** What the walk itself notes at the end of each entity, beyond what the store's pages carried. */
const WALK_NOTES: Record<string, Record<Entity, NormalisationCounts>> = {
  'cs-cart': { products: { 'items-total-placeholder': 1 }, orders: { 'items-total-placeholder': 1 } },
  magento: { products: {}, orders: { 'items-total-placeholder': 1 } },
  'cursor-by-brand': { products: { 'items-total-placeholder': 1 }, orders: { 'items-total-placeholder': 1 } },
};

const STARTERS: Array<[string, () => Promise<StoreEmulator>]> = [
  ['cs-cart', () => startCsCartStore()],
  ['magento', () => startMagentoStore()],
  ['cursor-by-brand', () => startCursorByBrandStore()],
];

const sum = (a: NormalisationCounts, b: NormalisationCounts): NormalisationCounts => {
  const out: Record<string, number> = { ...a };
  for (const [k, n] of Object.entries(b)) out[k] = (out[k] ?? 0) + (n ?? 0);
  return out;
};

describe.each(STARTERS)('%s', (name, start) => {
  let store: StoreEmulator;
  beforeAll(async () => {
    store = await start();
  });
  afterAll(() => store.close());
  beforeEach(() => store.tally.reset());

  const clientFor = (key = store.key) => createStoreClient({ urls: { listProducts: store.urls.products, listOrders: store.urls.orders }, svcKey: key, pageSize: 100, retry: 0 });

  test('a sync copies the store completely and exactly, counting every normalisation', async () => {
    const sink = createMemoryAdapter();
    const report = await runSync({ connectionId: name, client: clientFor(), sink, checkpoints: new MemoryCheckpointStore() });
    expect(report.error).toBeUndefined();
    expect({ ok: report.ok, invalid: report.invalidItems, anomalies: report.anomalies }).toEqual({ ok: true, invalid: [], anomalies: [] });
    for (const entity of ENTITIES) {
      expect(await sinkContents(sink, entity)).toEqual(byId(store.truth[entity]));
      expect(report[entity]).toMatchObject({ count: store.truth[entity].length, duplicates: 0, invalid: 0, anomalies: 0, complete: true });
      expect(report[entity].normalisations).toEqual(sum(store.tally.counts[entity], WALK_NOTES[name][entity]));
    }
    // Every request named its entity through the configured URL's own query.
    expect(store.server.requests.every((u) => ['products', 'orders'].includes(u.searchParams.get('entity') ?? ''))).toBe(true);
  });

  test('a wrong key, refused with HTTP 200 and a text body, is an auth failure that says so', async () => {
    const report = await runSync({ connectionId: name, client: clientFor('not-the-key'), sink: createMemoryAdapter(), checkpoints: new MemoryCheckpointStore() });
    expect(report.ok).toBe(false);
    expect(report.error).toMatchObject({ name: StoreAuthError.name, code: 'STORE_AUTH' });
    expect(report.error!.message).toMatch(/refused the key: it answered with the text "401 Unauthorized" instead of JSON.*HTTP 200/);
  });

  test('a second sync changes nothing and (ids-only lists) fetches nothing by ID', async () => {
    const sink = createMemoryAdapter();
    const checkpoints = new MemoryCheckpointStore();
    const first = await runSync({ connectionId: name, client: clientFor(), sink, checkpoints });
    const second = await runSync({ connectionId: name, client: clientFor(), sink, checkpoints });
    expect(second.ok).toBe(true);
    for (const entity of ENTITIES) {
      expect(second[entity]).toMatchObject({ written: 0, fetchedById: 0, count: store.truth[entity].length });
      expect(second[entity].unchanged).toBe(first[entity].seen);
    }
    if (name === 'cs-cart') expect(first.orders).toMatchObject({ stubs: store.truth.orders.length, fetchedById: store.truth.orders.length });
  });
});
