/**
 * `storebridge serve --port P --key K [--demo N] [--adapter SPEC] [--pagination offset|cursor]`
 * `[--rate-limit N --redis URL] [--jwt-key KID=ENV --jwt-connection ID] [--metrics-port P]`
 *
 * Serves the six webhook operations at `/` over an adapter and prints `listening on URL` once
 * ready. The key may come from `STOREBRIDGE_KEY` instead of `--key`; it is never printed. Secrets
 * for JWT keys and cursors are read from environment variables named on the command line, never
 * from the command line itself (it is visible to every user of the machine).
 */
import { parseArgs } from 'node:util';
import { firstProblem, intArg, missingSecret, secretArg } from '../args';
import { ADAPTER_SPEC_HELP, DEFAULT_ADAPTER_HELP, defaultAdapterSpec, openAdapter } from '../adapter-spec';
import type { CliIO } from '../io';
import { seedDemo } from '../../demo/seed-demo';
import { lineLogger, startStoreServer } from '../../host';
import type { JwtKeyOptions, JwtSigningKey } from '../../server/jwt-key-verifier';
import { connectRedisRateLimit, type RedisRateLimit } from '../../server/redis-rate-limit';
import type { Listing, Pagination, RateLimitOptions } from '../../server/router-options';

export const HELP = `usage: storebridge serve --port P --key K [options]

Serves a store's webhooks (GET /products, GET /products/:id, POST /products?jobid=&id=,
and the same for /orders) and prints "listening on http://HOST:PORT" once ready.

options:
  --port P                 port to listen on; 0 picks a free one (default 0)
  --key K                  the SvcKey callers must send (or set STOREBRIDGE_KEY); never printed
  --demo N                 seed N demo products and about N/4 orders first (into an existing
                           store: only the missing ones; an existing item is never overwritten)
  --adapter SPEC           ${ADAPTER_SPEC_HELP} (default: ${DEFAULT_ADAPTER_HELP})
  --pagination MODE        offset | cursor: how a list request with neither offset nor next is
                           answered (default offset); both strategies are always accepted
  --listing MODE           full | stubs: list pages carry the items (default), or only
                           {_id, last_updated} stubs (orders also orderid), each item then read
                           with GET /products?id=X (the deployed "list by id" mode)
  --page-size N            items per list page (default 20)
  --rate-limit N|off       requests per minute per key (default 1200)
  --host H                 address to listen on (default 127.0.0.1)

running several replicas (docs/deployment.md):
  --redis URL              count rate limits in Redis, shared by every replica using the same URL
                           and prefix (needs ioredis and rate-limit-redis)
  --redis-prefix P         prefix of the Redis keys (default storebridge:rl:)
  --jwt-key KID=ENV        accept JWT SvcKeys signed (HS256) with the secret in environment variable
                           ENV under key id KID; repeat for a rotation's overlap (docs/keys.md)
  --jwt-connection ID      the connection id JWT SvcKeys must name (required with --jwt-key)
  --cursor-secret-env ENV  cursor secret from environment variable ENV: the same on every replica
                           (required with --jwt-key and no --key; default: derived from --key)
  --metrics-port P         serve Prometheus metrics at http://HOST:P/metrics (a separate listener;
                           0 picks a free port); prints "metrics on URL" (docs/observability.md)
  --log-requests           log one JSON line per request to stderr (jobid, status, key id)
  -h, --help               this text`;

export interface ServeArgs {
  port: number;
  host: string;
  key: string;
  demo: number;
  adapter: string;
  pagination: Pagination;
  listing: Listing;
  pageSize: number | undefined;
  rateLimit: false | RateLimitOptions | undefined;
  /** The scale options (serve only; `storebridge demo` refuses them). */
  scale: ScaleArgs;
}

export interface ScaleArgs {
  redis?: string;
  redisPrefix: string;
  jwt?: JwtKeyOptions;
  cursorSecret?: string;
  metricsPort?: number;
  logRequests: boolean;
}

/** Parses serve-like arguments; a string is a usage error to print. */
const SCALE_OPTIONS = {
  redis: { type: 'string' },
  'redis-prefix': { type: 'string' },
  'jwt-key': { type: 'string', multiple: true },
  'jwt-connection': { type: 'string' },
  'cursor-secret-env': { type: 'string' },
  'metrics-port': { type: 'string' },
  'log-requests': { type: 'boolean' },
} as const;

export function parseServeArgs(args: string[], env: NodeJS.ProcessEnv, { keyRequired = true, scale = false } = {}): ServeArgs | string {
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
        listing: { type: 'string' },
        'page-size': { type: 'string' },
        'rate-limit': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        ...(scale ? SCALE_OPTIONS : {}),
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  const port = intArg('port', values.port, { min: 0, max: 65535, fallback: 0 });
  const demo = intArg('demo', values.demo, { min: 0, max: 10_000_000, fallback: 0 });
  const pageSize = intArg('page-size', values['page-size'], { min: 1, max: 100_000, fallback: undefined });
  const problem = firstProblem([port, demo, pageSize]);
  if (problem) return problem;
  const key = secretArg(values.key, env, 'STOREBRIDGE_KEY');
  const scaleArgs = parseScaleArgs(values as Parameters<typeof parseScaleArgs>[0], env, key !== undefined);
  if (typeof scaleArgs === 'string') return scaleArgs;
  if (keyRequired && !key && !scaleArgs.jwt) return missingSecret('--key K', 'STOREBRIDGE_KEY');
  if (key !== undefined && !/^[\x21-\x7e]+$/.test(key)) return 'the key must be visible ASCII characters without spaces';
  const pagination = values.pagination ?? 'offset';
  if (pagination !== 'offset' && pagination !== 'cursor') return '--pagination must be offset or cursor';
  const listing = values.listing ?? 'full';
  if (listing !== 'full' && listing !== 'stubs') return '--listing must be full or stubs';
  let rateLimit: false | RateLimitOptions | undefined;
  const rl = values['rate-limit'];
  if (rl === 'off') rateLimit = false;
  else if (rl !== undefined) {
    const n = intArg('rate-limit', rl, { min: 1, max: 1_000_000_000, fallback: 0 });
    if (typeof n === 'string') return `${n} (or off)`;
    rateLimit = { limit: n, windowMs: 60_000 };
  }
  if (scaleArgs.redis !== undefined && rateLimit === false) return '--redis shares the rate limit, so it cannot be combined with --rate-limit off';
  return {
    port: port as number,
    host: values.host ?? '127.0.0.1',
    key: key ?? '',
    demo: demo as number,
    adapter: values.adapter ?? defaultAdapterSpec(),
    pagination,
    listing,
    pageSize: pageSize as number | undefined,
    rateLimit,
    scale: scaleArgs,
  };
}

function parseScaleArgs(
  values: { redis?: string; 'redis-prefix'?: string; 'jwt-key'?: string[]; 'jwt-connection'?: string; 'cursor-secret-env'?: string; 'metrics-port'?: string; 'log-requests'?: boolean },
  env: NodeJS.ProcessEnv,
  hasStaticKey: boolean,
): ScaleArgs | string {
  const out: ScaleArgs = { redisPrefix: values['redis-prefix'] ?? 'storebridge:rl:', logRequests: values['log-requests'] ?? false };
  if (values.redis !== undefined) {
    if (!/^rediss?:\/\/./.test(values.redis)) return '--redis must be a redis:// or rediss:// URL';
    out.redis = values.redis;
  }
  if (!/^[\x21-\x7e]{1,100}$/.test(out.redisPrefix)) return '--redis-prefix must be 1 to 100 visible ASCII characters';
  const secretFrom = (flag: string, name: string): string => {
    // The value is not echoed: it may be the secret itself, passed by mistake.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw `${flag} must name an environment variable (letters, digits, _), not hold a value`;
    const value = env[name];
    if (!value) throw `${flag}: environment variable ${name} is not set or empty`;
    return value;
  };
  try {
    const jwtKeys = values['jwt-key'] ?? [];
    if (jwtKeys.length > 0) {
      const connection = values['jwt-connection'];
      if (!connection) return '--jwt-connection ID is required with --jwt-key';
      const keys: JwtSigningKey[] = jwtKeys.map((spec) => {
        const m = /^([\x21-\x3c\x3e-\x7e]{1,100})=(.+)$/.exec(spec);
        if (!m) throw `--jwt-key must be KID=ENV (a key id and the environment variable holding its secret)`;
        return { kid: m[1], secret: secretFrom('--jwt-key', m[2]) };
      });
      out.jwt = { connection, keys };
    } else if (values['jwt-connection'] !== undefined) return '--jwt-connection needs at least one --jwt-key';
    if (values['cursor-secret-env'] !== undefined) out.cursorSecret = secretFrom('--cursor-secret-env', values['cursor-secret-env']);
  } catch (message) {
    return message as string;
  }
  if (out.jwt && !hasStaticKey && out.cursorSecret === undefined) return '--cursor-secret-env ENV is required with --jwt-key and no --key (every replica needs the same cursor secret)';
  const metricsPort = intArg('metrics-port', values['metrics-port'], { min: 0, max: 65535, fallback: undefined });
  if (typeof metricsPort === 'string') return metricsPort;
  out.metricsPort = metricsPort;
  return out;
}

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const parsed = parseServeArgs(args, process.env, { scale: true });
  if (typeof parsed === 'string') {
    io.err(`storebridge serve: ${parsed}\n\n${HELP}`);
    return 2;
  }
  // Listen for the signal before the (possibly long) seeding, so Ctrl-C always shuts down cleanly:
  // a signal during the seed stops it between batches, and the server never starts listening.
  const stop = io.shutdownSignal();
  const starting = new AbortController();
  void stop.then((signal) => starting.abort(new Error(`${signal} before the server was ready`)));
  let redis: RedisRateLimit | undefined;
  let rateLimit = parsed.rateLimit;
  if (parsed.scale.redis !== undefined) {
    try {
      redis = await connectRedisRateLimit(parsed.scale.redis, { prefix: parsed.scale.redisPrefix });
    } catch (err) {
      io.err(`storebridge serve: ${(err as Error).message}`);
      return 1;
    }
    const rl = rateLimit || {};
    rateLimit = { ...rl, store: redis.store('key'), failedAuth: { store: redis.store('auth') } };
  }
  const adapter = await openAdapter(parsed.adapter);
  let store;
  try {
    store = await startStoreServer({
      adapter,
      key: parsed.key,
      port: parsed.port,
      host: parsed.host,
      seed: parsed.demo > 0 ? (a, signal) => seedDemo(a, parsed.demo, signal) : undefined,
      pagination: parsed.pagination,
      listing: parsed.listing,
      pageSize: parsed.pageSize,
      rateLimit,
      logger: lineLogger(io.err),
      logRequests: parsed.scale.logRequests,
      jwt: parsed.scale.jwt,
      cursorSecret: parsed.scale.cursorSecret,
      metricsPort: parsed.scale.metricsPort,
      signal: starting.signal,
    });
  } catch (err) {
    await adapter.close?.();
    await redis?.close();
    if (starting.signal.aborted) {
      io.err(`storebridge serve: ${await stop}, shutting down`);
      return 0;
    }
    io.err(`storebridge serve: ${(err as Error).message}`);
    return 1;
  }
  io.out(`listening on ${store.url}`);
  if (store.metricsUrl) io.out(`metrics on ${store.metricsUrl}`);
  const signal = await stop;
  io.err(`storebridge serve: ${signal}, shutting down`);
  await store.close();
  await redis?.close();
  return 0;
}
