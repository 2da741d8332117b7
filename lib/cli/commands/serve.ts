/**
 * `storebridge serve --port P --key K [--demo N] [--adapter SPEC] [--pagination offset|cursor]`
 *
 * Serves the six webhook operations at `/` over an adapter and prints `listening on URL` once
 * ready. The key may come from `STOREBRIDGE_KEY` instead of `--key`; it is never printed.
 */
import { parseArgs } from 'node:util';
import { ADAPTER_SPEC_HELP, defaultAdapterSpec, openAdapter } from '../adapter-spec';
import type { CliIO } from '../io';
import { lineLogger, startStoreServer } from '../../server/store-server';
import type { Pagination, RateLimitOptions } from '../../server/router-options';

export const HELP = `usage: storebridge serve --port P --key K [options]

Serves a store's webhooks (GET /products, GET /products/:id, POST /products?jobid=&id=,
and the same for /orders) and prints "listening on http://HOST:PORT" once ready.

options:
  --port P                 port to listen on; 0 picks a free one (default 0)
  --key K                  the SvcKey callers must send (or set STOREBRIDGE_KEY); never printed
  --demo N                 seed N demo products and about N/4 orders first
  --adapter SPEC           ${ADAPTER_SPEC_HELP} (default ${defaultAdapterSpec()})
  --pagination MODE        offset | cursor: how a list request with neither offset nor next is
                           answered (default offset); both strategies are always accepted
  --page-size N            items per list page (default 20)
  --rate-limit N|off       requests per minute per key (default 1200)
  --host H                 address to listen on (default 127.0.0.1)
  -h, --help               this text`;

export interface ServeArgs {
  port: number;
  host: string;
  key: string;
  demo: number;
  adapter: string;
  pagination: Pagination;
  pageSize: number | undefined;
  rateLimit: false | RateLimitOptions | undefined;
}

/** Parses serve-like arguments; a string is a usage error to print. */
export function parseServeArgs(args: string[], env: NodeJS.ProcessEnv, { keyRequired = true } = {}): ServeArgs | string {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        key: { type: 'string' },
        demo: { type: 'string' },
        adapter: { type: 'string' },
        pagination: { type: 'string' },
        'page-size': { type: 'string' },
        'rate-limit': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  const int = (name: string, text: string | undefined, min: number, max: number): number | string | undefined => {
    if (text === undefined) return undefined;
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) return `--${name} must be an integer from ${min} to ${max}`;
    return Number(text);
  };
  const port = int('port', values.port, 0, 65535) ?? 0;
  const demo = int('demo', values.demo, 0, 10_000_000) ?? 0;
  const pageSize = int('page-size', values['page-size'], 1, 100_000);
  for (const v of [port, demo, pageSize]) if (typeof v === 'string') return v;
  const key = values.key ?? (env.STOREBRIDGE_KEY || undefined);
  if (keyRequired && !key) return '--key K (or the STOREBRIDGE_KEY environment variable) is required';
  if (key !== undefined && !/^[\x21-\x7e]+$/.test(key)) return 'the key must be visible ASCII characters without spaces';
  const pagination = values.pagination ?? 'offset';
  if (pagination !== 'offset' && pagination !== 'cursor') return '--pagination must be offset or cursor';
  let rateLimit: false | RateLimitOptions | undefined;
  const rl = values['rate-limit'];
  if (rl === 'off') rateLimit = false;
  else if (rl !== undefined) {
    const n = int('rate-limit', rl, 1, 1_000_000_000);
    if (typeof n === 'string') return `${n} (or off)`;
    rateLimit = { limit: n!, windowMs: 60_000 };
  }
  return {
    port: port as number,
    host: values.host ?? '127.0.0.1',
    key: key ?? '',
    demo: demo as number,
    adapter: values.adapter ?? defaultAdapterSpec(),
    pagination,
    pageSize: pageSize as number | undefined,
    rateLimit,
  };
}

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const parsed = parseServeArgs(args, process.env);
  if (typeof parsed === 'string') {
    io.err(`storebridge serve: ${parsed}\n\n${HELP}`);
    return 2;
  }
  // Listen for the signal before the (possibly long) seeding, so Ctrl-C always shuts down cleanly.
  const stop = io.shutdownSignal();
  const adapter = await openAdapter(parsed.adapter);
  let store;
  try {
    store = await startStoreServer({
      adapter,
      key: parsed.key,
      port: parsed.port,
      host: parsed.host,
      demo: parsed.demo,
      pagination: parsed.pagination,
      pageSize: parsed.pageSize,
      rateLimit: parsed.rateLimit,
      logger: lineLogger(io.err),
    });
  } catch (err) {
    await adapter.close?.();
    io.err(`storebridge serve: ${(err as Error).message}`);
    return 1;
  }
  io.out(`listening on ${store.url}`);
  const signal = await stop;
  io.err(`storebridge serve: ${signal}, shutting down`);
  await store.close();
  return 0;
}
