/**
 * What `serve` and `demo` share: the flags of a store server (declared once, with the flag
 * toolkit), their translation into `startStoreServer` options, and the start itself (seeding that
 * a Ctrl-C can stop, a clean message when the start fails).
 */
import type { StoreAdapter } from '../../adapter';
import { seedDemo } from '../../demo/seed-demo';
import { lineLogger, startStoreServer, type RunningStoreServer, type StoreServerOptions } from '../../host';
import type { RateLimitOptions } from '../../server/router-options';
import { ADAPTER_SPEC_HELP, DEFAULT_ADAPTER_HELP, defaultAdapterSpec, openAdapter } from '../adapter-spec';
import { svcKeysOption } from '../../server/key-verifier';
import { readOption } from '../../options';
import { flagProblem, type FlagSpec } from '../flags';
import type { CliIO } from '../io';

/** The flags of every store server (`demo` declares its own `--demo` default). */
export const SERVER_FLAGS = {
  port: { type: 'int', min: 0, max: 65535, default: 0, metavar: 'P', help: 'port to listen on; 0 picks a free one' },
  host: { type: 'string', default: '127.0.0.1', metavar: 'H', help: 'address to listen on' },
  adapter: { type: 'string', metavar: 'SPEC', help: `${ADAPTER_SPEC_HELP} (default: ${DEFAULT_ADAPTER_HELP})` },
  pagination: {
    type: 'string',
    choices: ['offset', 'cursor'],
    default: 'offset',
    metavar: 'MODE',
    help: 'offset | cursor: how a list request with neither offset nor next is answered; both strategies are always accepted',
  },
  listing: {
    type: 'string',
    choices: ['full', 'stubs'],
    default: 'full',
    metavar: 'MODE',
    help: 'full | stubs: list pages carry the items, or only {_id, last_updated} stubs (orders also orderid), each item then read with GET /products?id=X (the deployed "list by id" mode)',
  },
  'page-size': { type: 'int', min: 1, max: 100_000, metavar: 'N', help: 'items per list page (default 20)' },
  'rate-limit': { type: 'string', metavar: 'N|off', help: 'requests per minute per key (default 1200); off turns rate limiting off' },
} as const satisfies Record<string, FlagSpec>;

/** `--rate-limit N|off`: `undefined` (the default), `false`, or a limit; a string is the usage message. */
export function rateLimitArg(text: string | undefined): false | RateLimitOptions | undefined | { problem: string } {
  if (text === undefined) return undefined;
  if (text === 'off') return false;
  if (!/^\d{1,10}$/.test(text) || Number(text) < 1) return { problem: `--rate-limit must be an integer from 1 to 1000000000 (or off), got ${JSON.stringify(text.slice(0, 40))}` };
  return { limit: Number(text), windowMs: 60_000 };
}

/**
 * The key must be something an HTTP header can carry: the router's own `svcKeys` rule, read before
 * the adapter is opened and seeded. The message never holds the key.
 */
export function keyProblem(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  try {
    readOption('svcKeys', svcKeysOption(), [key]);
    return undefined;
  } catch (err) {
    const problem = flagProblem(err, { svcKeys: 'the key' });
    if (problem === undefined) throw err;
    return problem;
  }
}

export interface LaunchSettings extends Omit<StoreServerOptions, 'adapter' | 'seed' | 'signal' | 'logger'> {
  /** `--adapter` (default: a fresh SQLite file). */
  readonly adapterSpec: string | undefined;
  /** `--map FILE`: serve the database's existing tables as the mapping file declares (docs/mapping.md). */
  readonly map?: string;
  /** Demo products to seed first (0: none). */
  readonly demo: number;
}

/**
 * The mapped adapter over a database's own tables; the start-up check's warnings (a missing paging
 * index, with the statement that creates it) go to stderr. Loaded only when `--map` is given.
 */
async function openMapped(name: string, spec: string, file: string, io: CliIO): Promise<StoreAdapter> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { openMappedAdapter } = require('../../../adapters/mapped') as typeof import('../../../adapters/mapped');
  const adapter = await openMappedAdapter(spec, file);
  for (const warning of adapter.warnings) io.err(`storebridge ${name}: warning: ${warning}`);
  return adapter;
}

/**
 * Opens the adapter, seeds, and starts the server, stopping cleanly on a signal during a long seed.
 * Resolves the running server (and the shutdown signal to await), or the exit code to return.
 */
export async function launchStore(name: string, settings: LaunchSettings, io: CliIO): Promise<{ store: RunningStoreServer; stop: Promise<string>; adapterSpec: string } | number> {
  // Listen for the signal before the (possibly long) seeding, so Ctrl-C always shuts down cleanly:
  // a signal during the seed stops it between batches, and the server never starts listening.
  const stop = io.shutdownSignal();
  const starting = new AbortController();
  void stop.then((signal) => starting.abort(new Error(`${signal} before the server was ready`)));
  let adapterSpec = settings.adapterSpec ?? defaultAdapterSpec();
  const adapter =
    settings.map !== undefined
      ? await openMapped(name, adapterSpec, settings.map, io)
      : await openAdapter(adapterSpec, {
          notice: (line) => {
            io.err(line);
            adapterSpec = 'memory'; // the default SQLite file could not be used: say what is really served
          },
        });
  const { demo, adapterSpec: _, map: __, ...server } = settings;
  try {
    const store = await startStoreServer({
      ...server,
      adapter,
      seed: demo > 0 ? (a, signal) => seedDemo(a, demo, signal) : undefined,
      logger: lineLogger(io.err),
      signal: starting.signal,
    });
    return { store, stop, adapterSpec };
  } catch (err) {
    await adapter.close?.();
    if (starting.signal.aborted) {
      io.err(`storebridge ${name}: ${await stop}, shutting down`);
      return 0;
    }
    io.err(`storebridge ${name}: ${(err as Error).message}`);
    return 1;
  }
}
