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
import { defineCommand, runCommand, usageError } from '../flags';
import type { CliIO } from '../io';
import { keyProblem, launchStore, rateLimitArg, SERVER_FLAGS } from './serve-common';

export const command = defineCommand({
  name: 'demo',
  usage: '[options]',
  summary:
    'Starts a store with demo data, calls it like the sync service would (a page of products, a page of orders, one product by id, a cursor page, an order update, then the deployed service\'s forms: C2SKey, ?id=, a create without id), prints a summary, and keeps serving until Ctrl-C.',
  flags: {
    key: { type: 'secret', env: 'STOREBRIDGE_KEY', metavar: 'K', help: 'the key to require (default: a printed throwaway key)' },
    demo: { type: 'int', min: 0, max: 10_000_000, default: 200, help: 'demo products to seed (about N/4 orders; an existing store gets only the missing ones, never an overwrite)' },
    ...SERVER_FLAGS,
    exit: { type: 'boolean', help: 'stop after the tour' },
  },
});

export const HELP = command.help();

interface Answer {
  status: number;
  body: any;
  bytes: number;
}

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async ({ values }) => {
    const badKey = keyProblem(values.key);
    if (badKey) return usageError(command, io, badKey);
    const rateLimit = rateLimitArg(values.rateLimit);
    if (rateLimit && 'problem' in rateLimit) return usageError(command, io, rateLimit.problem);
    const generated = values.key === undefined;
    const key = values.key ?? `demo-${randomBytes(18).toString('base64url')}`;
    const launched = await launchStore(
      'demo',
      { adapterSpec: values.adapter, demo: values.demo, key, port: values.port, host: values.host, pagination: values.pagination, listing: values.listing, pageSize: values.pageSize, rateLimit },
      io,
    );
    if (typeof launched === 'number') return launched;
    const { store, stop, adapterSpec } = launched;
    // How the curl line names the key (the key itself only when it is a throwaway).
    const keyRef = generated ? key : args.some((a) => a === '--key' || a.startsWith('--key=')) ? '<the key given with --key>' : args.some((a) => a === '--key-file' || a.startsWith('--key-file=')) ? '$(cat <your --key-file>)' : '$STOREBRIDGE_KEY';
    const ok = await tour(store.url, key, { generated, adapterSpec, seeded: store.seeded }, io);
    if (values.exit) {
      await store.close();
      return ok ? 0 : 1;
    }
    // Only for a store that goes on serving: after --exit there is nothing left to try.
    io.out(`try it: curl -H "SvcKey: ${keyRef}" "${store.url}/products?sortorder=asc&jobid=1&offset=${values.pageSize ?? 20}"`);
    io.out('serving until Ctrl-C');
    const signal = await stop;
    io.err(`storebridge demo: ${signal}, shutting down`);
    await store.close();
    return ok ? 0 : 1;
  });
}

interface TourContext {
  readonly generated: boolean;
  readonly adapterSpec: string;
  readonly seeded: { products: number; orders: number };
}

/** Calls the store the way the sync service does and prints what came back; false when a call failed outright. */
async function tour(url: string, key: string, ctx: TourContext, io: CliIO): Promise<boolean> {
  io.out(`listening on ${url}`);
  io.out(`demo store: ${ctx.seeded.products} products, ${ctx.seeded.orders} orders (adapter ${ctx.adapterSpec})`);
  io.out(ctx.generated ? `throwaway demo key (valid only for this process): ${key}` : 'key: the one you supplied (not shown)');
  io.out('');

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, header = 'SvcKey'): Promise<Answer> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { [header]: key, ...(body ? { 'content-type': 'application/json' } : {}) },
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

    io.out('');
    io.out('the deployed Click2Sync service calls it so: the key in C2SKey, no sortorder or jobid, one item by ?id=, creates without id');
    if (first) {
      const bare = await call('GET', `/products?id=${encodeURIComponent(first._id)}`, undefined, 'C2SKey');
      show(`GET /products?id=${first._id}`, outcome(bare, 200, () => `the bare product "${bare.body.title}"`));
    }
    const created = await call('POST', '/products', { sku: `DEMO-NEW-${Date.now()}`, title: 'Created without an id' }, 'C2SKey');
    show(`POST /products (no id)`, outcome(created, 200, () => `success ${created.body.success}, new _id ${created.body.product?._id}`));
  } catch (err) {
    ok = false;
    io.err(`storebridge demo: the tour failed: ${(err as Error).message}`);
  }

  io.out('');
  return ok;
}
