/**
 * `storebridge reverse-service --port P (--connection KEY | --connections FILE) [--adapter SPEC] [--demo N] [--dialect D]`
 *
 * Runs the service side of the reverse connection for one connection (or, with `--connections`,
 * for every connection of a registry file, each with its own catalog, re-read when the file
 * changes: docs/reverse-connection.md "Multi-tenant") and prints
 * `listening on http://HOST:PORT` once ready. It answers `GET /` (deployed daemons check it first),
 * every `{P}/…` call, and the loopback operator routes. Its state (queue, transactions, leases,
 * counters, cursors, failures, id map) lives in the adapter's database when the adapter is SQL, in
 * Redis with `--state redis://…`, else in memory. With `--demo N` on a fresh connection, the store
 * holds the demo catalog and three transactions are queued: a pull of products, a pull of orders, a
 * normal push. The key may come from `--connection-file` or `STOREBRIDGE_CONNECTION`; it is never printed.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { limitedServer, SERVER_LIMITS_HELP, SERVER_TIMEOUTS } from '../../host/store-server';
import type { StoreAdapter } from '../../adapter';
import { DIALECT_NAMES, type DialectName } from '../../contract/dialects';
import { ADAPTER_SPEC_HELP, openAdapter } from '../adapter-spec';
import { defineCommand, runCommand, usageError, type ParsedArgs } from '../flags';
import type { CliIO } from '../io';
import { seedDemo } from '../../demo/seed-demo';
import { createMetrics, metricsHandler, type Metrics } from '../../metrics';
import { createReverseNodeHandler } from '../../reverse/bindings/reverse-node';
import { createFileRegistry, followRegistry } from '../../reverse/service/reverse-registry';
import type { ConnectionInfo } from '../../reverse/service/reverse-service-options';
import { createMemoryAdapter, MemoryAdapter } from '../../../adapters/memory';
import type { ReverseService } from '../../reverse/service/reverse-service';
import { createMemoryStateStore, createRedisStateStore, type RedisStateClient, type ReverseStateStore } from '../../reverse/service/reverse-state-store';
import { messageChain } from '../../logger';
import { quietOnError } from '../../sync/redis-connect';

export const command = defineCommand({
  name: 'reverse-service',
  usage: '--port P (--connection-file FILE | --connections FILE) [options]',
  summary:
    'Runs the service side of the reverse connection: GET / (200: deployed daemons check it first), the daemon\'s calls under ' +
    '/api/adapters/custom/reverse/connection/KEY/…, and the loopback operator routes GET /connections, ' +
    'GET /connections/NAME/status and POST /connections/NAME/queue. Prints "listening on http://HOST:PORT" once ready.',
  flags: {
    port: { type: 'int', min: 0, max: 65535, default: 0, metavar: 'P', help: 'port to listen on; 0 picks a free one' },
    connection: { type: 'secret', env: 'STOREBRIDGE_CONNECTION', metavar: 'KEY', help: 'the connection key (one connection; or --connections)' },
    connections: {
      type: 'string',
      metavar: 'FILE',
      help:
        'serve every connection of a registry file instead: JSON [{"name","keyFile"|"keyDigest","dialect"}] or CSV name,key_file,key_digest,dialect; ' +
        "each connection's items in their own tables (<table prefix>c_<name>_…; memory: a store each); the file is re-read when it changes (an invalid file keeps the last good list)",
    },
    'table-prefix': { type: 'string', metavar: 'P', help: 'with a SQL adapter: the prefix of its tables (default storebridge_), the state table included' },
    'registry-poll-ms': { type: 'int', min: 100, max: 3_600_000, default: 2000, metavar: 'MS', help: 'with --connections: how often the file is read again besides its change events' },
    name: { type: 'string', default: 'default', metavar: 'NAME', help: "the connection's name in the operator routes and the state" },
    adapter: { type: 'string', default: 'memory', metavar: 'SPEC', help: `the service's store: ${ADAPTER_SPEC_HELP}` },
    dialect: {
      type: 'string',
      choices: DIALECT_NAMES,
      default: 'spec',
      metavar: 'D',
      help: 'how items handed out are written: spec (strings, ISO dates) or click2sync (numbers, epoch-ms dates: what the deployed daemons read)',
    },
    state: {
      type: 'string',
      metavar: 'SPEC',
      help: "where the connection's state is kept: adapter (the SQL adapter's database; the default with a SQL adapter), memory (the default otherwise), or a redis:// URL",
    },
    demo: { type: 'int', min: 0, max: 10_000_000, default: 0, help: 'seed N demo products and about N/4 orders and, on a fresh connection, queue a pull of products, a pull of orders, then a normal push' },
    'lease-ms': { type: 'int', min: 1, max: 86_400_000, default: 60_000, metavar: 'MS', help: 'how long an item handed out stays reserved' },
    'expire-ms': { type: 'int', min: 1, max: 2_592_000_000, default: 900_000, metavar: 'MS', help: 'a transaction with no daemon call for this long ends as expired' },
    'max-deliveries': { type: 'int', min: 1, max: 1000, default: 5, metavar: 'K', help: 'an item handed out K times without an acknowledgement is recorded as failed (code 1004) and the pull moves on' },
    'max-calls-per-second': { type: 'int', min: 0, max: 1_000_000, default: 20, metavar: 'R', help: "answers to a connection calling faster than R calls a second are delayed (not refused): a daemon's crash loop costs at most about R calls a second; 0: no limit" },
    'keep-alive-ms': {
      type: 'int',
      min: 1,
      max: 600_000,
      default: 5000,
      metavar: 'MS',
      help: 'how long an idle HTTP connection is kept open (deployed daemons open one per call and never close it; behind a proxy, set it above the proxy\'s upstream idle time-out)',
    },
    'max-push-page-items': { type: 'int', min: 1, max: 1_000_000, default: 1000, metavar: 'N', help: 'a push page of more items is refused whole (413); deployed daemons send 50' },
    'metrics-port': { type: 'int', min: 0, max: 65535, metavar: 'P', help: 'serve Prometheus metrics at http://HOST:P/metrics (a separate listener; 0 picks a free port); prints "metrics on URL" (docs/observability.md)' },
    host: { type: 'string', default: '127.0.0.1', metavar: 'H', help: 'address to listen on' },
  },
  epilogue: `${SERVER_LIMITS_HELP} Here idle connections are kept --keep-alive-ms instead.`,
});

export const HELP = command.help();

type Args = ParsedArgs<typeof command.spec.flags>['values'];

/** The service's main store: `--adapter`, with `--table-prefix` for a SQL one. */
async function openMainAdapter(parsed: Args): Promise<StoreAdapter> {
  if (parsed.tablePrefix === undefined) return openAdapter(parsed.adapter);
  const sql = require('../../../adapters/sql') as typeof import('../../../adapters/sql');
  if (!/^(sqlite|postgres|postgresql|mysql|mariadb):/.test(parsed.adapter)) throw new Error('--table-prefix needs a SQL adapter (sqlite:FILE, postgres:URL or mysql:URL)');
  return sql.openSqlAdapter(parsed.adapter, { tablePrefix: parsed.tablePrefix });
}

const isSqlAdapter = (adapter: StoreAdapter): boolean => (adapter as { db?: unknown }).db !== undefined && (adapter as { tables?: unknown }).tables !== undefined;

/**
 * With `--connections`: each connection's own store. A SQL adapter's connections share its
 * database and pool, each under the table prefix `<prefix>c_<name>_` (registry names are
 * `[a-z][a-z0-9_]{0,23}`, so prefixes never overlap); a memory adapter gives each its own memory store.
 */
function connectionAdapters(main: StoreAdapter, parsed: Args): (c: ConnectionInfo) => Promise<StoreAdapter> {
  const seed = async (a: StoreAdapter) => {
    if (parsed.demo > 0) await seedDemo(a, parsed.demo);
    return a;
  };
  if (isSqlAdapter(main)) {
    const sql = require('../../../adapters/sql') as typeof import('../../../adapters/sql');
    const m = main as import('../../../adapters/sql').SqlAdapter;
    const base = m.tables.products.replace(/products$/, '').replace(/^.*\./, '');
    return async ({ name }) => seed(await sql.createSqlAdapter({ db: m.db, kind: m.kind, tablePrefix: `${base}c_${name}_`, ...(m.tables.schema ? { schema: m.tables.schema } : {}), destroyOnClose: false }));
  }
  if (main instanceof MemoryAdapter) return async () => seed(createMemoryAdapter());
  throw new Error('--connections needs a SQL adapter (sqlite:FILE, postgres:URL or mysql:URL) or memory: each connection gets its own tables');
}

/** The state store `--state` names (the SQL adapter's database by default when there is one). */
async function openStateStore(spec: string | undefined, adapter: StoreAdapter): Promise<ReverseStateStore> {
  const sqlAdapter = isSqlAdapter(adapter);
  if (spec === 'memory' || (spec === undefined && !sqlAdapter)) return createMemoryStateStore();
  if (spec === 'adapter' || spec === undefined) {
    if (!sqlAdapter) throw new Error('--state adapter needs a SQL adapter (sqlite:FILE, postgres:URL or mysql:URL)');
    const sql = require('../../../adapters/sql') as typeof import('../../../adapters/sql');
    return sql.createSqlReverseStateStore(adapter as import('../../../adapters/sql').SqlAdapter);
  }
  const { loadOptional } = require('../../../adapters/sql/sql-dialects') as typeof import('../../../adapters/sql/sql-dialects');
  const Redis = loadOptional<{ default: new (url: string, o: object) => RedisStateClient & { on(event: 'error', listener: (err: Error) => void): unknown } }>('ioredis', '--state redis://').default;
  // Failures reach the service through the commands that fail (500, logged); ioredis reconnects.
  return createRedisStateStore(quietOnError(new Redis(spec, { maxRetriesPerRequest: 3, lazyConnect: false })), { quitOnClose: true });
}

/** With `--demo`: the demo transactions, queued once, on a connection that has never run one. */
async function queueDemo(service: ReverseService, name: string): Promise<void> {
  const status = await service.status(name);
  if (status.transactions.length > 0 || status.current || status.queue.length > 0) return;
  await service.enqueue(name, { kind: 'pull', entity: 'products' });
  await service.enqueue(name, { kind: 'pull', entity: 'orders' });
  await service.enqueue(name, { kind: 'push' });
}

interface Running {
  readonly server: Server;
  readonly stopFollowing: () => void;
  readonly service: ReverseService;
  readonly metricsServer?: Server;
}

function listen(server: Server, port: number, host: string): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** `GET /metrics` on its own listener (the operator's scraper, not the daemons, reaches it). */
function metricsServer(metrics: Metrics): Server {
  const handler = metricsHandler(metrics);
  return limitedServer((req, res) => {
    if ((req.url ?? '').split('?')[0] === '/metrics') return handler(req, res);
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'only GET /metrics is served here' }));
  }, { ...SERVER_TIMEOUTS });
}

async function start(parsed: Args, adapter: StoreAdapter, stateStore: ReverseStateStore, io: CliIO): Promise<Running> {
  const registry = parsed.connections !== undefined ? createFileRegistry(parsed.connections) : undefined;
  const connections = registry ? await registry.list() : [{ key: parsed.connection!, name: parsed.name }];
  if (connections.length === 0) throw new Error(`${parsed.connections} lists no connection`);
  if (!registry && parsed.demo > 0) await seedDemo(adapter, parsed.demo);
  const metrics = parsed.metricsPort !== undefined ? createMetrics() : undefined;
  const handler = createReverseNodeHandler({
    ...(registry ? { adapterFor: connectionAdapters(adapter, parsed) } : { adapter }),
    connections,
    dialect: parsed.dialect as DialectName,
    stateStore,
    // Memory state is this process's alone: no replica can change it, so no read before each call.
    stateShared: parsed.state !== 'memory' && !(parsed.state === undefined && !isSqlAdapter(adapter)),
    leaseMs: parsed.leaseMs,
    transactionIdleMs: parsed.expireMs,
    maxDeliveries: parsed.maxDeliveries,
    maxCallsPerSecond: parsed.maxCallsPerSecond,
    maxPushPageItems: parsed.maxPushPageItems,
    ...(metrics ? { metrics } : {}),
    answerRoot: true,
    onError: (err, { connection, call }) => io.err(`storebridge reverse-service: ${call} on connection "${connection}" failed: ${messageChain(err)}`),
  });
  if (parsed.demo > 0) for (const name of handler.service.connectionNames()) await queueDemo(handler.service, name);
  const follower =
    registry &&
    followRegistry(handler.service, registry, {
      intervalMs: parsed.registryPollMs,
      watchPath: registry.path,
      onError: (err) => io.err(`storebridge reverse-service: ${parsed.connections}: ${messageChain(err)}; still serving the previous list`),
      onChange: (names) => io.err(`storebridge reverse-service: ${parsed.connections}: serving ${names.length} connection(s)`),
    });
  // The same limits as `serve` (docs/deployment.md "Server limits"), not Node's defaults (stalled
  // headers held ~90 s, a stalled body ~330 s, timeouts answered as bare text).
  let server: Server;
  try {
    server = await listen(limitedServer(handler, { ...SERVER_TIMEOUTS, keepAliveTimeout: parsed.keepAliveMs }), parsed.port, parsed.host);
  } catch (err) {
    follower?.stop();
    throw err;
  }
  const stopFollowing = () => follower?.stop();
  if (!metrics) return { server, service: handler.service, stopFollowing };
  try {
    return { server, service: handler.service, stopFollowing, metricsServer: await listen(metricsServer(metrics), parsed.metricsPort!, parsed.host) };
  } catch (err) {
    stopFollowing();
    server.close();
    throw err;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async ({ values }) => {
    if ((values.connection === undefined) === (values.connections === undefined)) {
      return usageError(command, io, 'give --connection (or --connection-file, or STOREBRIDGE_CONNECTION) for one connection, or --connections FILE: one of them');
    }
    if (values.state !== undefined && !/^(adapter|memory|rediss?:\/\/.+)$/.test(values.state)) {
      return usageError(command, io, '--state must be adapter, memory or a redis:// URL');
    }
    return serve(values, io);
  });
}

async function serve(parsed: Args, io: CliIO): Promise<number> {
  const stop = io.shutdownSignal();
  let adapter: StoreAdapter;
  try {
    adapter = await openMainAdapter(parsed);
  } catch (err) {
    io.err(`storebridge reverse-service: ${(err as Error).message}`);
    return 1;
  }
  let stateStore: ReverseStateStore | undefined;
  let running: Running;
  try {
    stateStore = await openStateStore(parsed.state, adapter);
    running = await start(parsed, adapter, stateStore, io);
  } catch (err) {
    await stateStore?.close?.();
    await adapter.close?.();
    io.err(`storebridge reverse-service: ${(err as Error).message}`);
    return 1;
  }
  const { port } = running.server.address() as AddressInfo;
  const host = parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host;
  io.out(`listening on http://${host}:${port}`);
  if (running.metricsServer) io.out(`metrics on http://${host}:${(running.metricsServer.address() as AddressInfo).port}/metrics`);
  const signal = await stop;
  io.err(`storebridge reverse-service: ${signal}, shutting down`);
  running.stopFollowing();
  await Promise.all([closeServer(running.server), running.metricsServer && closeServer(running.metricsServer)]);
  await running.service.close();
  await stateStore.close?.();
  await adapter.close?.();
  return 0;
}
