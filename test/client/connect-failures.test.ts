/**
 * Why a connection failed is in the message: the system error code (ECONNREFUSED), or, for a port
 * that `fetch` refuses to use at all (the Fetch standard's "bad ports": 6000, 6665-6669, …), what
 * to do about it. A bad port is not retried: no attempt can succeed. The default transport of the
 * client and the daemon (node:http) has no such list; an injected fetch does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryAdapter } from '../../adapters/memory';
import { createStoreClient } from '../../lib/client';
import { StoreNetworkError } from '../../lib/client/client-errors';
import { createDaemon } from '../../lib/reverse';

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('client: a refused connection names ECONNREFUSED and is retried', async () => {
  const client = createStoreClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, svcKey: 'k-connect', retry: { limit: 2, delay: () => 1 } });
  const err = await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e) => e);
  expect(err).toBeInstanceOf(StoreNetworkError);
  expect(err.message).toMatch(/network failure \(ECONNREFUSED\)/);
  expect(err.attempts).toBe(3);
});

test('client: the default transport (node:http) reaches port 6000, which fetch refuses', async () => {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ paging: { pageSize: 0, itemsTotal: 0, offset: 0 }, products: [] }));
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(6000, '127.0.0.1', () => resolve(true));
  });
  try {
    const client = createStoreClient({ baseUrl: 'http://127.0.0.1:6000', svcKey: 'k-connect', retry: 0 });
    if (listening) {
      expect(await client.listProducts({ sortorder: 'asc', jobid: 1 })).toMatchObject({ items: [], paging: { itemsTotal: 0 } });
    } else {
      // Port 6000 is taken on this machine: whatever answers, it is not fetch's bad-port refusal.
      const err = await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e) => e);
      expect(String(err?.message)).not.toMatch(/fetch refuses/);
    }
  } finally {
    await new Promise<void>((resolve) => (listening ? server.close(() => resolve()) : resolve()));
  }
});

test('client with the global fetch injected: a port fetch refuses (6000) says so and is not retried', async () => {
  const client = createStoreClient({ baseUrl: 'http://127.0.0.1:6000', svcKey: 'k-connect', fetch: globalThis.fetch, retry: { limit: 3, delay: () => 1 } });
  const err = await client.listProducts({ sortorder: 'asc', jobid: 1 }).catch((e) => e);
  expect(err).toBeInstanceOf(StoreNetworkError);
  expect(err.message).toMatch(/fetch refuses port 6000/);
  expect(err.retryable).toBe(false);
  expect(err.attempts).toBe(1);
  expect(client.stats.retries).toBe(0);
});

test('daemon: an unreachable service names the cause (refused; with an injected fetch, a port fetch refuses)', async () => {
  for (const [url, fetch, expected] of [
    [`http://127.0.0.1:${await closedPort()}`, undefined, /the service could not be reached \(ECONNREFUSED\)/],
    ['http://127.0.0.1:6000', globalThis.fetch, /fetch refuses port 6000/],
  ] as const) {
    const report = await createDaemon({ serviceUrl: url, connectionKey: 'daemon-connect-key', adapter: createMemoryAdapter(), pollIntervalMs: 1, maxConsecutiveErrors: 1, fetch }).runOnce();
    expect(report.ok).toBe(false);
    expect(report.errors[0]).toMatch(expected);
    expect(report.errors.join()).not.toContain('daemon-connect-key');
  }
});
