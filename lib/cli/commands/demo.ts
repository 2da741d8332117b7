/**
 * `storebridge demo [--port P] [--demo N] [--adapter SPEC] [--key K] [--exit]` (and serve's
 * `--host`, `--pagination`, `--page-size`, `--rate-limit`) — the newcomer's
 * `npm start`: starts a demo store, calls it the way the sync service does, prints what came back,
 * and keeps serving until Ctrl-C (`--exit`: stop after the tour).
 *
 * Without `--key`/`STOREBRIDGE_KEY` a random throwaway key is generated and printed, so the store
 * can be tried with curl; it guards only this process's demo data. A key the user supplies is never
 * printed.
 */
import { randomBytes } from 'node:crypto';
import type { CliIO } from '../io';
import { ADAPTER_SPEC_HELP, DEFAULT_ADAPTER_HELP, openAdapter } from '../adapter-spec';
import { parseServeArgs } from './serve';
import { seedDemo } from '../../demo/seed-demo';
import { lineLogger, startStoreServer } from '../../host';

export const HELP = `usage: storebridge demo [options]

Starts a store with demo data, calls it like the sync service would (a page of products, a page
of orders, one product by id, a cursor page, an order update), prints a summary, and keeps serving
until Ctrl-C.

options:
  --port P           port to listen on (default 0: a free one)
  --host H           address to listen on (default 127.0.0.1)
  --demo N           demo products to seed (default 200; about N/4 orders; an existing
                     store gets only the missing ones, never an overwrite)
  --adapter SPEC     ${ADAPTER_SPEC_HELP} (default: ${DEFAULT_ADAPTER_HELP})
  --key K            the SvcKey to require (or STOREBRIDGE_KEY); default: a printed throwaway key
  --pagination MODE  offset | cursor: how a list request with neither offset nor next is answered
                     (default offset); both strategies are always accepted
  --listing MODE     full | stubs: list items, or only {_id, last_updated} stubs (read by ?id=)
  --page-size N      items per list page (default 20)
  --rate-limit N|off requests per minute per key (default 1200)
  --exit             stop after the tour
  -h, --help         this text`;

interface Answer {
  status: number;
  body: any;
  bytes: number;
}

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const exitAfterTour = args.includes('--exit');
  const parsed = parseServeArgs(
    args.filter((a) => a !== '--exit'),
    process.env,
    { keyRequired: false },
  );
  if (typeof parsed === 'string') {
    io.err(`storebridge demo: ${parsed}\n\n${HELP}`);
    return 2;
  }
  const generated = parsed.key === '';
  const keyFromFlag = args.some((a) => a === '--key' || a.startsWith('--key='));
  const key = generated ? `demo-${randomBytes(18).toString('base64url')}` : parsed.key;
  const count = args.includes('--demo') || args.some((a) => a.startsWith('--demo=')) ? parsed.demo : 200;

  const stop = io.shutdownSignal();
  // A signal during the (possibly long) seed stops it between batches, before listening.
  const starting = new AbortController();
  void stop.then((signal) => starting.abort(new Error(`${signal} before the server was ready`)));
  const adapter = await openAdapter(parsed.adapter);
  let store;
  try {
    store = await startStoreServer({
      adapter,
      key,
      port: parsed.port,
      host: parsed.host,
      seed: count > 0 ? (a, signal) => seedDemo(a, count, signal) : undefined,
      pagination: parsed.pagination,
      listing: parsed.listing,
      pageSize: parsed.pageSize,
      rateLimit: parsed.rateLimit,
      logger: lineLogger(io.err),
      signal: starting.signal,
    });
  } catch (err) {
    await adapter.close?.();
    if (starting.signal.aborted) {
      io.err(`storebridge demo: ${await stop}, shutting down`);
      return 0;
    }
    io.err(`storebridge demo: ${(err as Error).message}`);
    return 1;
  }
  const { url } = store;
  io.out(`listening on ${url}`);
  io.out(`demo store: ${store.seeded.products} products, ${store.seeded.orders} orders (adapter ${parsed.adapter})`);
  io.out(generated ? `throwaway demo key (valid only for this process): ${key}` : 'SvcKey: the one you supplied (not shown)');
  io.out('');

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { SvcKey: key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text), bytes: Buffer.byteLength(text) };
  };
  const show = (request: string, result: string) => io.out(`${request.padEnd(46)} → ${result}`);
  /** `STATUS: summary` for the expected status, else `STATUS: error` (a 429 with --rate-limit, …). */
  const outcome = (answer: Answer, expected: number, summary: () => string) =>
    answer.status === expected ? `${answer.status}: ${summary()}` : `${answer.status}: ${answer.body?.error ?? 'unexpected answer'}`;
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

  let ok = true;
  try {
    const products = await call('GET', '/products?sortorder=asc&jobid=1');
    const p = products.body.paging;
    show(
      `GET /products?sortorder=asc&jobid=1`,
      outcome(products, 200, () => `${p.pageSize} of ${p.itemsTotal} products${p.offset === undefined ? '' : ` from offset ${p.offset}`}, ${kb(products.bytes)}`),
    );
    const first = products.body.products?.[0];
    if (first) io.out(`    first: ${first._id} "${first.title}" (${first.variations?.length ?? 0} variations)`);

    const orders = await call('GET', '/orders?sortorder=desc&jobid=1');
    const o = orders.body.paging;
    show(`GET /orders?sortorder=desc&jobid=1`, outcome(orders, 200, () => `${o.pageSize} of ${o.itemsTotal} orders, newest first`));
    const newest = orders.body.orders?.[0];
    if (newest) io.out(`    newest: ${newest._id} ${newest.status}, ${newest.total?.amount ?? '?'} ${newest.total?.currency ?? ''}, ${newest.orderItems?.length ?? 0} items`);

    if (first) {
      const one = await call('GET', `/products/${encodeURIComponent(first._id)}`);
      show(`GET /products/${first._id}`, outcome(one, 200, () => `"${one.body.product?.title}", sku ${one.body.product?.sku}`));
    }

    if (p?.next) {
      const page2 = await call('GET', `/products?sortorder=asc&jobid=1&next=${encodeURIComponent(p.next)}`);
      const q = page2.body.paging;
      show(`GET /products?sortorder=asc&jobid=1&next=…`, outcome(page2, 200, () => `${q.pageSize} more products by cursor${q.next ? ', and a next cursor' : ', the last page'}`));
    }

    if (newest) {
      const status = newest.status === 'shipped' ? 'delivered' : 'shipped';
      const write = await call('POST', `/orders?jobid=1&id=${encodeURIComponent(newest._id)}`, { ...newest, status });
      show(`POST /orders?jobid=1&id=${newest._id}`, outcome(write, 200, () => `success ${write.body.success}, status now ${write.body.order?.status}`));
    }

    const missing = await call('GET', '/orders/no-such-order');
    show(`GET /orders/no-such-order`, `${missing.status}: ${missing.body.error}`);
    const keyless = await fetch(`${url}/products?sortorder=asc&jobid=1`);
    show(`GET /products without a SvcKey`, `${keyless.status}: ${((await keyless.json()) as { error: string }).error}`);
  } catch (err) {
    ok = false;
    io.err(`storebridge demo: the tour failed: ${(err as Error).message}`);
  }

  io.out('');
  const keyRef = generated ? key : keyFromFlag ? '<the key given with --key>' : '$STOREBRIDGE_KEY';
  io.out(`try it: curl -H "SvcKey: ${keyRef}" "${url}/products?sortorder=asc&jobid=1&offset=${parsed.pageSize ?? 20}"`);
  if (exitAfterTour) {
    await store.close();
    return ok ? 0 : 1;
  }
  io.out('serving until Ctrl-C');
  const signal = await stop;
  io.err(`storebridge demo: ${signal}, shutting down`);
  await store.close();
  return ok ? 0 : 1;
}
