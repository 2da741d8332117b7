/**
 * `storebridge serve --port P --key-file FILE [--demo N] [--adapter SPEC [--map FILE]] [--pagination offset|cursor]`
 * `[--listing full|stubs] [--rate-limit N --redis URL] [--jwt-key KID=ENV --jwt-connection ID] [--metrics-port P]`
 *
 * Serves the six webhook operations at `/` over an adapter and prints `listening on URL` once
 * ready. The key comes from `--key-file`, `STOREBRIDGE_KEY` or `--key` (the help prefers the first
 * two: a command line is visible to every user of the machine); it is never printed. Secrets for
 * JWT keys and cursors are read from environment variables named on the command line.
 */
import type { JwtKeyOptions, JwtSigningKey } from '../../server/jwt-key-verifier';
import { connectRedisRateLimit, parseRedisRateLimit, parseRedisRateLimitOptions, type RedisRateLimit } from '../../server/redis-rate-limit';
import { defineCommand, flagProblem, runCommand, usageError, type FlagValues } from '../flags';
import type { CliIO } from '../io';
import { keyProblem, launchStore, rateLimitArg, SERVER_FLAGS } from './serve-common';
import { SERVER_LIMITS_HELP } from '../../host/store-server';

const SCALE = 'running several replicas (docs/deployment.md)';

export const command = defineCommand({
  name: 'serve',
  usage: '--port P --key-file FILE [options]',
  summary:
    'Serves a store\'s webhooks (GET /products, GET /products/:id, POST /products, and the same for /orders; GET /products?id=X reads one item) and prints "listening on http://HOST:PORT" once ready. The key is accepted in the SvcKey or the C2SKey header.',
  flags: {
    key: { type: 'secret', env: 'STOREBRIDGE_KEY', metavar: 'K', help: 'the key callers must send' },
    demo: {
      type: 'int',
      min: 0,
      max: 10_000_000,
      default: 0,
      help: 'seed N demo products and about N/4 orders first (into an existing store: only the missing ones; an existing item is never overwritten)',
    },
    ...SERVER_FLAGS,
    map: {
      type: 'string',
      metavar: 'FILE',
      help: 'serve the existing tables of the --adapter database as the mapping file FILE declares (docs/mapping.md; storebridge map infer writes one); stops naming any table or column the database lacks',
    },
    redis: { type: 'string', metavar: 'URL', section: SCALE, help: 'count rate limits in Redis, shared by every replica using the same URL and prefix (needs ioredis and rate-limit-redis)' },
    'redis-prefix': { type: 'string', metavar: 'P', default: 'storebridge:rl:', section: SCALE, help: 'prefix of the Redis keys' },
    'jwt-key': { type: 'list', metavar: 'KID=ENV', section: SCALE, help: 'accept JWT keys signed (HS256) with the secret in environment variable ENV under key id KID; repeat for a rotation\'s overlap (docs/keys.md)' },
    'jwt-connection': { type: 'string', metavar: 'ID', section: SCALE, help: 'the connection id JWT keys must name (required with --jwt-key)' },
    'cursor-secret-env': { type: 'string', metavar: 'ENV', section: SCALE, help: 'cursor secret from environment variable ENV: the same on every replica (required with --jwt-key and no key; default: derived from the key)' },
    'metrics-port': { type: 'int', min: 0, max: 65535, metavar: 'P', section: SCALE, help: 'serve Prometheus metrics at http://HOST:P/metrics (a separate listener; 0 picks a free port); prints "metrics on URL" (docs/observability.md)' },
    'log-requests': { type: 'boolean', section: SCALE, help: 'log one JSON line per request to stderr (jobid, status, key id)' },
  },
  epilogue: SERVER_LIMITS_HELP,
});

export const HELP = command.help();

type Values = FlagValues<typeof command.spec.flags>;

interface ScaleArgs {
  redis?: string;
  jwt?: JwtKeyOptions;
  cursorSecret?: string;
}

/** The replica options: Redis URL, JWT keys (secrets from named environment variables), cursor secret. */
function scaleArgs(values: Values, env: NodeJS.ProcessEnv): ScaleArgs | { problem: string } {
  const out: ScaleArgs = {};
  // Checked by the rate-limit store's own reader (before anything starts); its errors name the flags.
  try {
    if (values.redis !== undefined) parseRedisRateLimit(values.redis, { prefix: values.redisPrefix });
    else parseRedisRateLimitOptions({ prefix: values.redisPrefix });
  } catch (err) {
    const problem = flagProblem(err, { url: '--redis', prefix: '--redis-prefix' });
    if (problem === undefined) throw err;
    return { problem };
  }
  if (values.redis !== undefined) out.redis = values.redis;
  const secretFrom = (flag: string, name: string): string => {
    // The value is not echoed: it may be the secret itself, passed by mistake.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw `${flag} must name an environment variable (letters, digits, _), not hold a value`;
    const value = env[name];
    if (!value) throw `${flag}: environment variable ${name} is not set or empty`;
    return value;
  };
  try {
    if (values.jwtKey.length > 0) {
      if (!values.jwtConnection) return { problem: '--jwt-connection ID is required with --jwt-key' };
      const keys: JwtSigningKey[] = values.jwtKey.map((spec) => {
        const m = /^([\x21-\x3c\x3e-\x7e]{1,100})=(.+)$/.exec(spec);
        if (!m) throw '--jwt-key must be KID=ENV (a key id and the environment variable holding its secret)';
        return { kid: m[1], secret: secretFrom('--jwt-key', m[2]) };
      });
      out.jwt = { connection: values.jwtConnection, keys };
    } else if (values.jwtConnection !== undefined) return { problem: '--jwt-connection needs at least one --jwt-key' };
    if (values.cursorSecretEnv !== undefined) out.cursorSecret = secretFrom('--cursor-secret-env', values.cursorSecretEnv);
  } catch (message) {
    return { problem: message as string };
  }
  if (out.jwt && values.key === undefined && out.cursorSecret === undefined) return { problem: '--cursor-secret-env ENV is required with --jwt-key and no key (every replica needs the same cursor secret)' };
  return out;
}

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async ({ values }) => {
    const scale = scaleArgs(values, process.env);
    if ('problem' in scale) return usageError(command, io, scale.problem);
    if (!values.key && !scale.jwt) return usageError(command, io, 'a key is required: --key-file FILE, the STOREBRIDGE_KEY environment variable, or --key K');
    const badKey = keyProblem(values.key);
    if (badKey) return usageError(command, io, badKey);
    if (values.map !== undefined && values.adapter === undefined) return usageError(command, io, '--map needs --adapter: the database whose tables the mapping file names (sqlite:FILE, postgres:URL or mysql:URL)');
    if (values.map !== undefined && values.demo > 0) return usageError(command, io, '--demo cannot be combined with --map: a mapped store serves the tables as they are');
    let rateLimit = rateLimitArg(values.rateLimit);
    if (rateLimit && 'problem' in rateLimit) return usageError(command, io, rateLimit.problem);
    if (scale.redis !== undefined && rateLimit === false) return usageError(command, io, '--redis shares the rate limit, so it cannot be combined with --rate-limit off');

    let redis: RedisRateLimit | undefined;
    if (scale.redis !== undefined) {
      try {
        redis = await connectRedisRateLimit(scale.redis, { prefix: values.redisPrefix });
      } catch (err) {
        io.err(`storebridge serve: ${(err as Error).message}`);
        return 1;
      }
      rateLimit = { ...(rateLimit || {}), store: redis.store('key'), failedAuth: { store: redis.store('auth') } };
    }
    const launched = await launchStore(
      'serve',
      {
        adapterSpec: values.adapter,
        map: values.map,
        demo: values.demo,
        key: values.key ?? '',
        port: values.port,
        host: values.host,
        pagination: values.pagination,
        listing: values.listing,
        pageSize: values.pageSize,
        rateLimit,
        logRequests: values.logRequests,
        jwt: scale.jwt,
        cursorSecret: scale.cursorSecret,
        metricsPort: values.metricsPort,
      },
      io,
    );
    if (typeof launched === 'number') {
      await redis?.close();
      return launched;
    }
    const { store, stop } = launched;
    io.out(`listening on ${store.url}`);
    if (store.metricsUrl) io.out(`metrics on ${store.metricsUrl}`);
    const signal = await stop;
    io.err(`storebridge serve: ${signal}, shutting down`);
    await store.close();
    await redis?.close();
    return 0;
  });
}
