/**
 * `storebridge reverse-service --port P --connection KEY [--adapter SPEC] [--demo N]`
 *
 * Runs the service side of the reverse connection for one connection and prints
 * `listening on http://HOST:PORT` once ready. With `--demo N` the service's store holds the demo
 * catalog and three transactions are queued: a pull of products, a pull of orders, a normal push.
 * The key may come from `STOREBRIDGE_CONNECTION` instead of `--connection`; it is never printed.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import { firstProblem, intArg, missingSecret, secretArg } from '../args';
import { ADAPTER_SPEC_HELP, openAdapter } from '../adapter-spec';
import type { CliIO } from '../io';
import { seedDemo } from '../../demo/seed-demo';
import { createReverseServiceRouter } from '../../reverse/service/reverse-router';

export const HELP = `usage: storebridge reverse-service --port P --connection KEY [options]

Runs the service side of the reverse connection: the daemon's calls under
/api/adapters/custom/reverse/connection/KEY/…, and the loopback operator view
GET /connections/KEY/status. Prints "listening on http://HOST:PORT" once ready.

options:
  --port P            port to listen on; 0 picks a free one (default 0)
  --connection KEY    the connection key (or set STOREBRIDGE_CONNECTION); never printed
  --adapter SPEC      the service's store: ${ADAPTER_SPEC_HELP} (default memory)
  --demo N            seed N demo products and about N/4 orders, and queue a pull of products,
                      a pull of orders, then a normal push
  --lease-ms MS       how long an item handed out stays reserved (default 60000)
  --host H            address to listen on (default 127.0.0.1)
  -h, --help          this text`;

interface Args {
  port: number;
  host: string;
  key: string;
  adapter: string;
  demo: number;
  leaseMs: number;
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
        adapter: { type: 'string' },
        demo: { type: 'string' },
        'lease-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  const port = intArg('port', values.port, { min: 0, max: 65535, fallback: 0 });
  const demo = intArg('demo', values.demo, { min: 0, max: 10_000_000, fallback: 0 });
  const leaseMs = intArg('lease-ms', values['lease-ms'], { min: 1, max: 86_400_000, fallback: 60_000 });
  const problem = firstProblem([port, demo, leaseMs]);
  if (problem) return problem;
  const key = secretArg(values.connection, env, 'STOREBRIDGE_CONNECTION');
  if (!key) return missingSecret('--connection KEY', 'STOREBRIDGE_CONNECTION');
  return { port: port as number, host: values.host ?? '127.0.0.1', key, adapter: values.adapter ?? 'memory', demo: demo as number, leaseMs: leaseMs as number };
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
  let server: Server;
  try {
    if (parsed.demo > 0) await seedDemo(adapter, parsed.demo);
    const router = createReverseServiceRouter({
      adapter,
      connections: [{ key: parsed.key, name: 'default' }],
      leaseMs: parsed.leaseMs,
      onError: (err, { connection, call }) => io.err(`storebridge reverse-service: ${call} on connection "${connection}" failed: ${(err as Error)?.message ?? String(err)}`),
    });
    if (parsed.demo > 0) {
      router.service.enqueue('default', { kind: 'pull', entity: 'products' });
      router.service.enqueue('default', { kind: 'pull', entity: 'orders' });
      router.service.enqueue('default', { kind: 'push' });
    }
    const express = require('express') as typeof import('express');
    const app = express();
    app.disable('x-powered-by');
    app.use(router);
    app.use((_req, res) => void res.status(404).json({ error: 'not found' }));
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(parsed.port, parsed.host);
      s.once('listening', () => resolve(s));
      s.once('error', reject);
    });
  } catch (err) {
    await adapter.close?.();
    io.err(`storebridge reverse-service: ${(err as Error).message}`);
    return 1;
  }
  const { port } = server.address() as AddressInfo;
  const host = parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host;
  io.out(`listening on http://${host}:${port}`);
  const signal = await stop;
  io.err(`storebridge reverse-service: ${signal}, shutting down`);
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await adapter.close?.();
  return 0;
}
