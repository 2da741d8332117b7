/**
 * Issue 25, against the php-mysql store emulator (a products-only PHP script whose NULL video
 * columns come out as `videos:[{"url":null}]`): every product lands; a connection may cover
 * products only; an entity that keeps failing holds no other back, and resumes never freeze data:
 * a resumed run walks the finished entities again, says it is a resume, and after `maxResumes`
 * failed resumes the next run starts a fresh job; a run of another mode than the checkpoint's
 * starts a fresh job in the mode asked for.
 */
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { createStoreClient } from '../../lib/client';
import { InvalidOptionError } from '../../lib/errors';
import { MemoryCheckpointStore, runSync, type SyncReport } from '../../lib/sync';
import { byId, sinkContents } from '../peers/store-emulator';
import { startPhpMysqlStore, type PhpMysqlStore } from '../peers/store-php-mysql';

let store: PhpMysqlStore;
beforeAll(async () => {
  store = await startPhpMysqlStore();
});
afterAll(() => store.close());
beforeEach(() => store.tally.reset());

const productsOnly = () => createStoreClient({ urls: { listProducts: store.url }, svcKey: 'any', retry: 0, pageSize: 100 });
/** The owner points the orders URL at the same script (it has no orders): every orders read fails. */
const withFailingOrders = () => createStoreClient({ urls: { listProducts: store.url, listOrders: store.url }, svcKey: 'any', retry: 0, pageSize: 100 });
const priceIn = async (sink: MemoryAdapter, id: string) => (await sink.products.get(id))?.variations?.[0]?.prices?.[0]?.number;

test('products only: all 310 products land (172 with a NULL video), the run is ok and says it covers products', async () => {
  const sink = createMemoryAdapter();
  const report = await runSync({ connectionId: 'php', client: productsOnly(), sink, checkpoints: new MemoryCheckpointStore() });
  expect(report).toMatchObject({ ok: true, entities: ['products'], products: { count: 310, seen: 310, invalid: 0, complete: true }, orders: { count: 0, seen: 0, complete: false } });
  expect(report.error).toBeUndefined();
  expect(report.products.itemsTotal).toBeUndefined(); // the count row is no count: unknown, not 0
  expect(await sinkContents(sink, 'products')).toEqual(byId(store.truth.products));
  expect(report.products.normalisations).toEqual(store.tally.counts.products);
  expect(report.products.normalisations).toMatchObject({ 'incomplete-member-dropped': 172, 'items-total-unusable': 8 });
  // The first request carried offset=0: the store printed no PHP warning before its JSON. The total
  // being unknown, the walk ends on the empty page at 310.
  expect(store.warnings()).toBe(0);
  expect(store.server.requests.slice(-8).map((u) => u.searchParams.get('offset'))).toEqual(['0', '50', '100', '150', '200', '250', '300', '310']);
});

test('entities asked for must be covered by the client', async () => {
  const run = runSync({ connectionId: 'php', client: productsOnly(), sink: createMemoryAdapter(), checkpoints: new MemoryCheckpointStore(), entities: ['orders'] });
  await expect(run).rejects.toThrow(InvalidOptionError);
  await expect(run).rejects.toThrow(/"orders" is not covered by the client/);
  expect(() => createStoreClient({ svcKey: 'k', urls: {} })).toThrow(/urls.listProducts/);
  await expect(productsOnly().listOrders({ sortorder: 'asc', jobid: 1 })).rejects.toThrow(/urls.listOrders.*covers products only/);
});

test('orders always fail, a price changes between runs, the state is kept: the next run brings the new price', async () => {
  const sink = createMemoryAdapter();
  const checkpoints = new MemoryCheckpointStore();
  const reports: SyncReport[] = [];
  const run = async (o: { mode?: 'full' | 'incremental' } = {}) => {
    const r = await runSync({ connectionId: 'php', client: withFailingOrders(), sink, checkpoints, now: () => 1_800_000_000_000 + reports.length, ...o });
    reports.push(r);
    return r;
  };
  try {
    const first = await run();
    expect(first).toMatchObject({ ok: false, resumed: false, jobid: 1, products: { count: 310, complete: true }, orders: { complete: false, error: { code: 'STORE_CONTRACT' } } });
    expect(first.error?.message).toMatch(/"orders" is not an array/);
    expect(await priceIn(sink, '1')).toBe(100);

    store.setPrice(1, '77.77');
    const second = await run();
    // A resume of job 1, and it says so; products are walked again, so the new price is there.
    expect(second).toMatchObject({ ok: false, resumed: true, resume: { jobid: 1, since: new Date(1_800_000_000_000).toISOString(), resumes: 1 }, jobid: 1, products: { count: 310, seen: 310, written: 1, complete: true } });
    expect(await priceIn(sink, '1')).toBe(77.77);

    store.setPrice(1, '55.55');
    await run(); // resume 2
    await run(); // resume 3
    expect(await priceIn(sink, '1')).toBe(55.55);
    // Three resumes failed: the next run sets job 1 aside and starts job 2.
    const fifth = await run();
    expect(fifth).toMatchObject({ resumed: false, jobid: 2, abandoned: { jobid: 1, since: new Date(1_800_000_000_000).toISOString(), reason: '3 resumed runs did not complete it (maxResumes 3)' } });
    expect(fifth.resume).toBeUndefined();
    expect(reports.map((r) => [r.jobid, r.resume?.resumes ?? 0])).toEqual([[1, 0], [1, 1], [1, 2], [1, 3], [2, 0]]);

    // --incremental on that checkpoint (of a full run) is honoured: a fresh incremental job, saying why.
    const incremental = await run({ mode: 'incremental' });
    expect(incremental).toMatchObject({ mode: 'incremental', resumed: false, jobid: 3, abandoned: { jobid: 2, reason: "mode incremental was asked for, the checkpoint's mode is full" }, products: { count: 310, complete: true } });
  } finally {
    store.setPrice(1, '100.00');
  }
});

test('a checkpoint written by an earlier version (entity and position) resumes from that position', async () => {
  const sink = createMemoryAdapter();
  const checkpoints = new MemoryCheckpointStore();
  const progress = { seen: 100, written: 100, unchanged: 0, duplicates: 0, invalid: 0, anomalies: 0 };
  await checkpoints.save('php', {
    jobid: 4,
    run: { jobid: 4, mode: 'full', startedAt: 1, done: [], entity: 'products', position: { offset: 100 }, progress: { products: progress, orders: { ...progress, seen: 0, written: 0 } }, highWater: {}, stopBelow: {}, requests: 2, retries: 0 },
  });
  const before = store.server.requests.length;
  const report = await runSync({ connectionId: 'php', client: productsOnly(), sink, checkpoints });
  expect(report).toMatchObject({ ok: true, resumed: true, jobid: 4, products: { seen: 310, count: 210 } });
  expect(store.server.requests.slice(before).map((u) => u.searchParams.get('offset'))).toEqual(['100', '150', '200', '250', '300', '310']);
  expect((await checkpoints.load('php'))?.run).toBeUndefined();
});

test('maxResumes 0: a checkpoint is never resumed', async () => {
  const checkpoints = new MemoryCheckpointStore();
  const sink = createMemoryAdapter();
  await runSync({ connectionId: 'php', client: withFailingOrders(), sink, checkpoints });
  const next = await runSync({ connectionId: 'php', client: withFailingOrders(), sink, checkpoints, maxResumes: 0 });
  expect(next).toMatchObject({ resumed: false, jobid: 2, abandoned: { jobid: 1, reason: 'maxResumes is 0: a checkpoint is never resumed' } });
  await expect(runSync({ connectionId: 'php', client: productsOnly(), sink, checkpoints, maxResumes: -1 })).rejects.toThrow(/maxResumes/);
});
