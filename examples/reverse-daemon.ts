/**
 * A store's reverse-connection daemon, as you would run it inside the store's network.
 *
 * Without SERVICE_URL it starts a local demo service first (its store holds 40 demo products and
 * their orders; it queues what the deployed service's buttons queue: "Send updates", a pull of
 * products then orders, and "Fetch updates", a push; then a sample push), runs until the service
 * has nothing more, prints the totals and exits. From the repository root:
 *
 *   npx tsc -p examples --outDir /tmp/sb-examples
 *   NODE_PATH=$PWD/node_modules node /tmp/sb-examples/examples/reverse-daemon.js
 *
 * Against a real service it runs until Ctrl-C (the daemon finishes the item it is storing, then
 * exits), with the service's URL and the connection key in the environment:
 *
 *   SERVICE_URL=https://sync.example.com CONNECTION_KEY=the-connection-key STORE=sqlite:store.db DIALECT=click2sync NODE_PATH=$PWD/node_modules node /tmp/sb-examples/examples/reverse-daemon.js
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryAdapter } from '../adapters/memory';
import type { StoreAdapter } from '../lib/adapter';
import { openAdapter } from '../lib/cli/adapter-spec';
import type { DialectName } from '../lib/contract';
import { demoCatalog } from '../lib/demo';
import { createDaemon, createReverseNodeHandler } from '../lib/reverse';

async function demoService(key: string, dialect: DialectName): Promise<{ url: string; close: () => void }> {
  // answerRoot: deployed daemons (and this kit's) check GET / before anything else.
  const handler = createReverseNodeHandler({ adapter: createMemoryAdapter(demoCatalog(40)), connections: [{ key, name: 'demo-shop', dialect }], answerRoot: true });
  for (const request of [{ kind: 'pull' }, { kind: 'push' }, { kind: 'pingsample' }] as const) await handler.service.enqueue('demo-shop', request);
  const server = createServer(handler).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function main(): Promise<void> {
  const key = process.env.CONNECTION_KEY ?? 'demo-connection-key';
  const dialect = (process.env.DIALECT ?? 'spec') as DialectName;
  const service = process.env.SERVICE_URL ? undefined : await demoService(key, dialect);
  try {
    const adapter = await openAdapter(process.env.STORE ?? 'memory');
    try {
      await runDaemon(adapter, process.env.SERVICE_URL ?? service!.url, key, dialect, service !== undefined);
    } finally {
      await adapter.close?.();
    }
  } finally {
    // Also on a failure: the demo service would otherwise keep the process alive.
    service?.close();
  }
}

async function runDaemon(adapter: StoreAdapter, serviceUrl: string, key: string, dialect: DialectName, demo: boolean): Promise<void> {
  const daemon = createDaemon({
    serviceUrl,
    connectionKey: key,
    adapter,
    dialect,
    pollIntervalMs: 1000,
    onEvent: (e) => {
      if (e.type === 'initialized' || e.type === 'finished') console.log(`${e.type} ${e.kind}${e.entity ? ` of ${e.entity}` : ''}`);
      if (e.type === 'item-failed') console.log(`${e.entity} ${e.id} not stored: ${e.error}`);
      if (e.type === 'error') console.error(`retrying after: ${e.error}`);
    },
  });
  if (demo) {
    // The demo: one run until the service is idle, then the totals.
    console.log(await daemon.runOnce());
    return;
  }
  daemon.start();
  await new Promise((resolve) => process.once('SIGINT', resolve));
  await daemon.stop();
  console.log(daemon.report());
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
