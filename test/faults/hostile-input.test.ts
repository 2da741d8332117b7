/**
 * Hostile pages to every write route of `serve` (POST /products, POST /orders) and every page route
 * of `reverse-service` (push and sample pages of products and orders, mid-transaction): huge arrays
 * (`{"products":[0,0,…]}`, 1.6 M items; 2.4 M `{}`), deep nesting, lone surrogates in ids, bodies
 * over the 10 MiB limit. Each must be refused (4xx, or 413 for the size) within a second, the
 * server must answer other requests meanwhile (≤ 100 ms more than just before, issue 20 C; 250 ms
 * in the short run of `npm test`), its memory must not grow by more than 100 MB, and nothing
 * hostile may be stored.
 *
 * Huge arrays are refused before they are parsed (an array longer than a write body's or a push
 * page's bound, or more than a million values: 413), lone surrogates in ids with 400 (issue 20 A
 * and C). Each test gives up at the first request that breaks a rule.
 */
import { demoCatalog } from '../../lib/demo';
import { CONVERTERS } from '../../lib/contract';
import { REVERSE_BASE_PATH } from '../../lib/contract/reverse-routes';
import { CONNECTION, KEY, printRows, record, scale, send, sleep, startServer, Tally, type Answer, type CliServer } from './fault-kit';

jest.setTimeout(scale(120_000, 300_000));

const env = { STOREBRIDGE_KEY: KEY, STOREBRIDGE_CONNECTION: CONNECTION };

/** Hostile bodies that the servers bound today: over the size limit, nested too deep. */
const BOUNDED = {
  'nested 100 k deep': (member: string) => `{"${member}":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
  'body 10.5 MB': (member: string) => `{"${member}":[{"_id":"big","title":"${'x'.repeat(10_500_000)}"}]}`,
};
/** Hostile bodies of many small items (issue 20, C: 42.5 s and +2.7 GB for one page of zeros). */
const repeat = (item: string, n: number) => `${item},`.repeat(n - 1) + item;
const HUGE_ARRAYS = {
  'zeros 1.6 M': (member: string) => `{"${member}":[${repeat('0', 1_600_000)}]}`,
  'empty objects 2.4 M': (member: string) => `{"${member}":[${repeat('{}', 2_400_000)}]}`,
};
type Bodies = Record<string, (member: string) => string>;

interface Probe {
  readonly label: string;
  readonly answer: Answer;
  /** The slowest answer to the other requests sent while it was in flight, in ms. */
  readonly othersMaxMs: number;
  /** The slowest of 20 other requests in the second before (what the machine's load alone costs), in ms. */
  readonly baselineMs: number;
  /** The server's resident memory growth while it was in flight, in MB. */
  readonly rssGrowthMb: number;
}

/**
 * Sends one hostile request and, while it is in flight, another request every 50 ms (each must
 * be answered quickly) and samples the server's memory.
 */
async function probe(server: CliServer, label: string, hostile: () => Promise<Answer>, other: () => Promise<Answer>): Promise<Probe> {
  // The same requests for a second before, at the same pace: what the machine's load alone costs.
  let baselineMs = 0;
  for (let i = 0; i < 20; i++) {
    baselineMs = Math.max(baselineMs, (await other()).ms);
    await sleep(50);
  }
  const rss0 = server.rssMb();
  let peak = rss0;
  let done = false;
  let othersMaxMs = 0;
  const sampler = (async () => {
    while (!done) {
      const a = await other();
      othersMaxMs = Math.max(othersMaxMs, a.kind === '2xx' ? a.ms : Number.POSITIVE_INFINITY);
      peak = Math.max(peak, server.rssMb());
      await sleep(50);
    }
  })();
  const answer = await hostile();
  done = true;
  await sampler;
  return { label, answer, othersMaxMs, baselineMs, rssGrowthMb: Math.max(0, Math.max(peak, server.rssMb()) - rss0) };
}

/**
 * Other requests must be answered within 100 ms meanwhile (issue 20, C) under `npm run faults`;
 * `npm test` runs beside other suites on shared cores, where 250 ms still tells "busy" from
 * "blocked". Counted above what the same request takes just before (the machine's own load: on the
 * shared 2-CPU machine a plain `GET /` took up to 60 ms at times).
 */
const OTHERS_MS = scale(250, 100);

/** Whether the other requests were answered in time while the hostile one was in flight. */
const othersServed = (p: Probe) => p.othersMaxMs <= p.baselineMs + OTHERS_MS;

/** What a hostile request must get: a 4xx within 1 s, others answered in time meanwhile, memory +100 MB at most. */
const broken = (p: Probe) => p.answer.kind !== '4xx' || p.answer.ms > 1_000 || !othersServed(p) || p.rssGrowthMb > 100;

/**
 * Sends each case in turn (stopping at the first one that breaks the rules: the server may be busy
 * with it for a long time), records the row, and checks every answer and that nothing was stored.
 */
async function hostileRound(
  scenario: string,
  server: CliServer,
  cases: Array<{ label: string; send: () => Promise<Answer> }>,
  other: () => Promise<Answer>,
  stored: () => Promise<number>,
): Promise<void> {
  const before = await stored();
  const results: Probe[] = [];
  for (const c of cases) {
    const p = await probe(server, c.label, c.send, other);
    results.push(p);
    if (broken(p)) break;
  }
  const after = broken(results[results.length - 1]) ? before : await stored();
  const tally = new Tally();
  for (const r of results) tally.add(r.answer);
  record({
    scenario,
    requests: tally.requests,
    answers: tally.counts,
    recoveryMs: null,
    lost: Math.max(0, before - after),
    doubled: Math.max(0, after - before),
    note: `others meanwhile ≤ ${Math.max(...results.map((r) => r.othersMaxMs))} ms (before: ≤ ${Math.max(...results.map((r) => r.baselineMs))} ms); memory ≤ +${Math.max(...results.map((r) => r.rssGrowthMb))} MB; ${results.map((r) => `${r.label}: ${r.answer.status ?? 'no answer'} in ${r.answer.ms} ms`).join('; ')}`,
  });
  for (const r of results) {
    expect({ label: r.label, kind: r.answer.kind, within1s: r.answer.ms <= 1_000, othersServed: othersServed(r), growthUnder100MB: r.rssGrowthMb <= 100 }).toEqual({
      label: r.label,
      kind: '4xx',
      within1s: true,
      othersServed: true,
      growthUnder100MB: true,
    });
  }
  expect(after).toBe(before); // nothing hostile stored, nothing lost
  expect(server.child.exitCode).toBeNull();
}

/** A hostile request gives up after 5 s: one that takes longer has failed already (the limit is 1 s). */
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  send(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, timeoutMs: 5_000 });

afterAll(() => printRows());

describe('faults: hostile pages to the store webhooks (serve)', () => {
  let serve: CliServer;
  beforeAll(async () => {
    serve = await startServer(['serve', '--demo', '20', '--rate-limit', 'off'], env);
  });
  // SIGKILL: a server still busy with a hostile body would take its time to stop.
  afterAll(() => serve.kill9());

  const total = async () => (JSON.parse((await send(`${serve.url}/products?jobid=1&limit=1`, { headers: { SvcKey: KEY } })).body ?? '{}') as { paging: { itemsTotal: number } }).paging.itemsTotal;
  const other = () => send(`${serve.url}/products?jobid=1&limit=1`, { headers: { SvcKey: KEY } });
  const cases = (bodies: Bodies) =>
    Object.entries(bodies).flatMap(([name, build]) =>
      (['products', 'orders'] as const).map((entity) => ({
        label: `${entity} ${name}`,
        send: () => post(`${serve.url}/${entity}?jobid=1&id=hostile-1`, build(entity === 'products' ? 'variations' : 'orderItems'), { SvcKey: KEY }),
      })),
    );

  test('deep nesting and bodies over 10 MiB on POST /products and POST /orders: 400 / 413 within 1 s, others served meanwhile', async () => {
    await hostileRound('serve: deep nesting, 10.5 MB bodies (POST /products, /orders)', serve, cases(BOUNDED), other, total);
  });

  // Before the bound: the store validated every item of a huge array (1.6 M zod issues, 4 s) and
  // stored 2.4 M empty variations (a 7 MB product, seconds, +1.2 GB).
  test('huge arrays in a write body: refused within 1 s, others served meanwhile (the store side of issue 20 C)', async () => {
    await hostileRound('serve: huge arrays (POST /products, /orders)', serve, cases(HUGE_ARRAYS), other, total);
  });

  test('a lone surrogate in a written _id is refused with 400 and nothing is stored (issue 20 A)', async () => {
    const product = { ...demoCatalog(1).products[0], sku: 'LONE-1' };
    await hostileRound('serve: a lone surrogate in _id', serve, [{ label: 'products _id x\\ud800', send: () => post(`${serve.url}/products?jobid=1`, JSON.stringify({ ...product, _id: 'x\ud800' }), { SvcKey: KEY }) }], other, total);
  });
});

describe('faults: hostile pages to the reverse service (reverse-service, mid-push)', () => {
  let service: CliServer;
  const P = `${REVERSE_BASE_PATH}/${CONNECTION}`;
  beforeAll(async () => {
    service = await startServer(['reverse-service'], env);
  });
  afterAll(() => service.kill9());

  const status = async () => (await (await fetch(`${service.url}/connections/default/status`)).json()) as Record<string, any>;
  const received = async () => {
    const s = await status();
    return s.products.received + s.orders.received;
  };
  const other = () => send(`${service.url}/`);

  /** Queues a push (or a sample push) and starts it, as a daemon would: its pages are then accepted. */
  async function startPush(kind: 'push' | 'pingsample'): Promise<void> {
    const queued = await send(`${service.url}/connections/default/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind }) });
    expect(queued.status).toBe(200);
    const init = await post(`${service.url}${P}/${kind}/initialize`, '{}');
    expect(init.body).toMatch(/"initialized"/);
  }

  /**
   * Every page route of a push and of a sample push, each with each body, in the transaction's
   * order (its products pages, then its orders pages), so each page reaches the page handling.
   */
  async function pageRound(scenario: string, bodies: Bodies): Promise<void> {
    for (const kind of ['push', 'pingsample'] as const) {
      await startPush(kind);
      for (const entity of ['products', 'orders'] as const) {
        const cases = Object.entries(bodies).map(([name, build]) => ({ label: `${kind}/${entity} ${name}`, send: () => post(`${service.url}${P}/${kind}/${entity}`, build(entity)) }));
        await hostileRound(`${scenario} (${kind}/${entity})`, service, cases, other, received);
        expect((await post(`${service.url}${P}/${kind}/${entity}/finish`, '{}')).status).toBe(200);
      }
      expect((await post(`${service.url}${P}/${kind}/finish`, '{}')).status).toBe(200);
    }
  }

  test('deep nesting and bodies over 10 MiB on every page route: 400 / 413 within 1 s, GET / served meanwhile; a real page is received after', async () => {
    await pageRound('reverse-service: deep nesting, 10.5 MB pages', BOUNDED);
    await startPush('push');
    const product = CONVERTERS.products.toReverse({ ...demoCatalog(1).products[0], _id: 'after-hostile' });
    expect((await post(`${service.url}${P}/push/products`, JSON.stringify({ products: [product] }))).status).toBe(200);
    expect((await status()).products.received).toBe(1);
    for (const step of ['products/finish', 'orders/finish', 'finish']) await post(`${service.url}${P}/push/${step}`, '{}');
  });

  // Before the bound (issue 20, C): 42.5 s and +2.7 GB for one page of zeros.
  test('huge arrays on every page route: refused or answered within 1 s, GET / within 100 ms, memory +100 MB at most (issue 20 C)', async () => {
    await pageRound('reverse-service: huge arrays', HUGE_ARRAYS);
  });
});
