/**
 * A database that goes away mid-request: the store router answers 500 {error} (no internals) and
 * serves again once the database is back, with no restart. The adapter reaches the database
 * through a TCP proxy on loopback that the test closes (dropping every open connection) and reopens.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import { createStoreRouter } from '../../lib/server';
import { demoCatalog } from '../../lib/demo';
import { DATABASE_URLS, describeDatabase, uniquePrefix, type ServerKind } from './sql-databases';

class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}

  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => (s === client ? upstream : client).destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((ok, fail) => server.once('error', fail).listen(this.port, '127.0.0.1', () => ok()));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops accepting and cuts every open connection: the database "goes away". */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
  }
}

function viaProxy(kind: ServerKind, port: number): string {
  const url = new URL(DATABASE_URLS[kind]);
  url.host = `127.0.0.1:${port}`;
  return url.toString();
}

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `store router over the SQL adapter on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'} when the database goes away`, () => {
    let proxy: TcpProxy;
    let adapter: SqlAdapter;
    let server: Server;
    let base: string;

    beforeAll(async () => {
      const target = new URL(DATABASE_URLS[kind]);
      proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || (kind === 'postgres' ? 5432 : 3306)) });
      await proxy.up();
      adapter = await createSqlAdapter({ connection: viaProxy(kind, proxy.port), tablePrefix: uniquePrefix(), poolSize: 3 });
      const signal = new AbortController().signal;
      const { products } = demoCatalog(30);
      await adapter.products.upsertMany(products, { lastUpdated: 'keep', now: 0, signal });
      const app = express();
      app.use(createStoreRouter({ adapter, svcKeys: ['test-key'], rateLimit: false }));
      server = await new Promise<Server>((ok) => {
        const s = app.listen(0, '127.0.0.1', () => ok(s));
      });
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      await new Promise((ok) => server?.close(ok));
      await proxy?.up().catch(() => undefined);
      await adapter?.dropTables().catch(() => undefined);
      await adapter?.close();
      await proxy?.down();
    });

    const get = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers: { SvcKey: 'test-key' } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    test('500 {error} while it is gone, 200 again when it returns', async () => {
      const before = await get('/products?jobid=1&sortorder=asc');
      expect(before.status).toBe(200);
      expect((before.body.paging as { itemsTotal: number }).itemsTotal).toBe(30);

      await proxy.down();
      for (const path of ['/products?jobid=1&sortorder=asc', '/products/prod-000001?jobid=1', '/orders?jobid=1&sortorder=desc']) {
        const during = await get(path);
        expect(during.status).toBe(500);
        expect(Object.keys(during.body)).toEqual(['error']);
        expect(typeof during.body.error).toBe('string');
        expect(String(during.body.error)).not.toMatch(/ECONN|127\.0\.0\.1|\n\s+at |password|postgres:\/\/|mysql:\/\//);
      }

      await proxy.up();
      // The pool discarded the connections the outage broke, so the very next requests succeed.
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await get('/products?jobid=1&sortorder=asc')).status);
      expect(statuses).toEqual([200, 200, 200, 200]);
      const after = await get('/products/prod-000001?jobid=1');
      expect(after.status).toBe(200);
      expect((after.body.product as { _id: string })._id).toBe('prod-000001');
    });
  });
}
