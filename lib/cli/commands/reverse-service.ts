/**
 * `storebridge reverse-service --port P --connection KEY [--adapter SPEC] [--demo N] [--dialect D]`
 *
 * Runs the service side of the reverse connection for one connection and prints
 * `listening on http://HOST:PORT` once ready. It answers `GET /` (deployed daemons check it first),
 * every `{P}/…` call, and the loopback operator routes. Its state (queue, transactions, leases,
 * counters, cursors, failures, id map) lives in the adapter's database when the adapter is SQL, in
 * Redis with `--state redis://…`, else in memory. With `--demo N` on a fresh connection, the store
 * holds the demo catalog and three transactions are queued: a pull of products, a pull of orders, a
 * normal push. The key may come from `STOREBRIDGE_CONNECTION`; it is never printed.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { parseArgs } from 'node:util';
import type { StoreAdapter } from '../../adapter';
import { DIALECT_NAMES, type DialectName } from '../../contract/dialects';
import { firstProblem, intArg, missingSecret, secretArg } from '../args';
import { ADAPTER_SPEC_HELP, openAdapter } from '../adapter-spec';
import type { CliIO } from '../io';
import { seedDemo } from '../../server/store-server';
import { createReverseNodeHandler } from '../../reverse/bindings/reverse-node';
import type { ReverseService } from '../../reverse/service/reverse-service';
import { createMemoryStateStore, createRedisStateStore, type RedisStateClient, type ReverseStateStore } from '../../reverse/service/reverse-state-store';

export const HELP = `usage: storebridge reverse-service --port P --connection KEY [options]

Runs the service side of the reverse connection: GET / (200, daemons check it first), the daemon's
calls under /api/adapters/custom/reverse/connection/KEY/…, and the loopback operator routes
GET /connections, GET /connections/NAME/status and POST /connections/NAME/queue.
Prints "listening on http://HOST:PORT" once ready.

options:
  --port P            port to listen on; 0 picks a free one (default 0)
  --connection KEY    the connection key (or set STOREBRIDGE_CONNECTION); never printed
  --name NAME         the connection's name in the operator routes and the state (default "default")
  --adapter SPEC      the service's store: ${ADAPTER_SPEC_HELP} (default memory)
  --dialect D         how items handed out are written: spec (strings, ISO dates; default) or
                      click2sync (numbers, epoch-ms dates: what the deployed daemons read)
  --state SPEC        where the connection's state is kept: adapter (the SQL adapter's database;
                      the default with a SQL adapter), memory (the default otherwise), or a
                      redis:// URL
  --demo N            seed N demo products and about N/4 orders and, on a fresh connection, queue
                      a pull of products, a pull of orders, then a normal push
  --lease-ms MS       how long an item handed out stays reserved (default 60000)
  --expire-ms MS      a transaction with no daemon call for this long ends as expired (default 900000)
  --host H            address to listen on (default 127.0.0.1)
  -h, --help          this text`;

interface Args {
  port: number;
  host: string;
  key: string;
  name: string;
  adapter: string;
  dialect: DialectName;
  state: string | undefined;
  demo: number;
  leaseMs: number;
  expireMs: number;
}

function parse(args: string[], env: NodeJS.ProcessEnv): Args | string {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        connection: { type: 'string' },
        name: { type: 'string' },
        adapter: { type: 'string' },
        dialect: { type: 'string' },
        state: { type: 'string' },
        demo: { type: 'string' },
        'lease-ms': { type: 'string' },
        'expire-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  const port = intArg('port', values.port, { min: 0, max: 65535, fallback: 0 });
  const demo = intArg('demo', values.demo, { min: 0, max: 10_000_000, fallback: 0 });
  const leaseMs = intArg('lease-ms', values['lease-ms'], { min: 1, max: 86_400_000, fallback: 60_000 });
  const expireMs = intArg('expire-ms', values['expire-ms'], { min: 1, max: 2_592_000_000, fallback: 900_000 });
  const problem = firstProblem([port, demo, leaseMs, expireMs]);
  if (problem) return problem;
  const dialect = values.dialect ?? 'spec';
  if (!(DIALECT_NAMES as readonly string[]).includes(dialect)) return `--dialect must be ${DIALECT_NAMES.join(' or ')}`;
  if (values.state !== undefined && !/^(adapter|memory|rediss?:\/\/.+)$/.test(values.state)) return '--state must be adapter, memory or a redis:// URL';
  const key = secretArg(values.connection, env, 'STOREBRIDGE_CONNECTION');
  if (!key) return missingSecret('--connection KEY', 'STOREBRIDGE_CONNECTION');
  return {
    port: port as number,
    host: values.host ?? '127.0.0.1',
    key,
    name: values.name ?? 'default',
    adapter: values.adapter ?? 'memory',
    dialect: dialect as DialectName,
    state: values.state,
    demo: demo as number,
    leaseMs: leaseMs as number,
    expireMs: expireMs as number,
  };
}

/** The state store `--state` names (the SQL adapter's database by default when there is one). */
async function openStateStore(spec: string | undefined, adapter: StoreAdapter): Promise<ReverseStateStore> {
  const sqlAdapter = (adapter as { db?: unknown; tables?: unknown }).db !== undefined && (adapter as { tables?: unknown }).tables !== undefined;
  if (spec === 'memory' || (spec === undefined && !sqlAdapter)) return createMemoryStateStore();
  if (spec === 'adapter' || spec === undefined) {
    if (!sqlAdapter) throw new Error('--state adapter needs a SQL adapter (sqlite:FILE, postgres:URL or mysql:URL)');
    const sql = require('../../../adapters/sql') as typeof import('../../../adapters/sql');
    return sql.createSqlReverseStateStore(adapter as import('../../../adapters/sql').SqlAdapter);
  }
  const { loadOptional } = require('../../../adapters/sql/sql-dialects') as typeof import('../../../adapters/sql/sql-dialects');
  const Redis = loadOptional<{ default: new (url: string, o: object) => RedisStateClient }>('ioredis', '--state redis://').default;
  return createRedisStateStore(new Redis(spec, { maxRetriesPerRequest: 3, lazyConnect: false }), { quitOnClose: true });
}

/** With `--demo`: the demo transactions, queued once, on a connection that has never run one. */
async function queueDemo(service: ReverseService, name: string): Promise<void> {
  const status = await service.status(name);
  if (status.transactions.length > 0 || status.current || status.queue.length > 0) return;
  await service.enqueue(name, { kind: 'pull', entity: 'products' });
  await service.enqueue(name, { kind: 'pull', entity: 'orders' });
  await service.enqueue(name, { kind: 'push' });
}

async function start(parsed: Args, adapter: StoreAdapter, stateStore: ReverseStateStore, io: CliIO): Promise<{ server: Server; service: ReverseService }> {
  if (parsed.demo > 0) await seedDemo(adapter, parsed.demo);
  const handler = createReverseNodeHandler({
    adapter,
    connections: [{ key: parsed.key, name: parsed.name }],
    dialect: parsed.dialect,
    stateStore,
    leaseMs: parsed.leaseMs,
    transactionIdleMs: parsed.expireMs,
    answerRoot: true,
    onError: (err, { connection, call }) => io.err(`storebridge reverse-service: ${call} on connection "${connection}" failed: ${(err as Error)?.message ?? String(err)}`),
  });
  if (parsed.demo > 0) await queueDemo(handler.service, parsed.name);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createServer(handler);
    s.once('error', reject);
    s.listen(parsed.port, parsed.host, () => resolve(s));
  });
  return { server, service: handler.service };
}

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const parsed = parse(args, process.env);
  if (typeof parsed === 'string') {
    io.err(`storebridge reverse-service: ${parsed}\n\n${HELP}`);
    return 2;
  }
  const stop = io.shutdownSignal();
  const adapter = await openAdapter(parsed.adapter);
  let stateStore: ReverseStateStore | undefined;
  let running: { server: Server; service: ReverseService };
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
  const signal = await stop;
  io.err(`storebridge reverse-service: ${signal}, shutting down`);
  await new Promise<void>((resolve) => {
    running.server.close(() => resolve());
    running.server.closeIdleConnections();
  });
  await running.service.close();
  await stateStore.close?.();
  await adapter.close?.();
  return 0;
}
