/**
 * A database that goes away mid-request: the store router answers 500 {error} (no internals, the
 * kind of failure in words) and serves again once the database is back, with no restart. A
 * connection cut while it is checked out of the pool (mid-transaction) is a rejected query, never an
 * unhandled 'error' event (issue 20, D: `sync --into postgres:` crashed so). The adapter reaches
 * the database through the TCP proxy of test/support, which the test cuts and restores.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { createSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import { createStoreRouter } from '../../lib/server';
import { demoCatalog } from '../../lib/demo';
import { StorageError } from '../../lib/errors';
import { messageChain, type Logger } from '../../lib/logger';
import { TcpProxy } from '../support/tcp-proxy';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from './sql-databases';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `store router over the SQL adapter on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'} when the database goes away`, () => {
    let proxy: TcpProxy;
    let adapter: SqlAdapter;
    let server: Server;
    let base: string;
    const logged: Array<{ obj: Record<string, unknown>; msg?: string }> = [];
    const logger: Logger = { info: () => undefined, warn: () => undefined, error: (obj, msg) => void logged.push({ obj: obj as Record<string, unknown>, msg }) };

    beforeAll(async () => {
      const target = new URL(DATABASE_URLS[kind]);
      proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || (kind === 'postgres' ? 5432 : 3306)) });
      adapter = await createSqlAdapter({ connection: proxy.rewrite(DATABASE_URLS[kind]), tablePrefix: uniquePrefix(), poolSize: 3 });
      const signal = new AbortController().signal;
      const { products } = demoCatalog(30);
      await adapter.products.upsertMany(products, { lastUpdated: 'keep', now: 0, signal });
      const app = express();
      app.use(createStoreRouter({ adapter, svcKeys: ['test-key'], rateLimit: false, logger }));
      server = await new Promise<Server>((ok) => {
        const s = app.listen(0, '127.0.0.1', () => ok(s));
      });
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      await new Promise((ok) => server?.close(ok));
      proxy?.restore();
      await adapter?.dropTables().catch(() => undefined);
      await adapter?.close();
      await proxy?.close();
    });

    const get = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers: { SvcKey: 'test-key' } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    test('500 {error} naming the failure while it is gone, the cause in the log, 200 again when it returns', async () => {
      const before = await get('/products?jobid=1&sortorder=asc');
      expect(before.status).toBe(200);
      expect((before.body.paging as { itemsTotal: number }).itemsTotal).toBe(30);

      proxy.cut();
      logged.length = 0;
      for (const path of ['/products?jobid=1&sortorder=asc', '/products/prod-000001?jobid=1', '/orders?jobid=1&sortorder=desc']) {
        const during = await get(path);
        expect(during.status).toBe(500);
        expect(during.body).toEqual({ error: 'the store could not complete the request: the connection to the database failed; its log has the details' });
      }
      const write = await fetch(`${base}/products?jobid=1&id=prod-000001`, { method: 'POST', headers: { SvcKey: 'test-key', 'content-type': 'application/json' }, body: JSON.stringify({ ...demoCatalog(1).products[0], title: 'changed' }) });
      expect(write.status).toBe(500);
      // The log has the driver's words (a reset connection), not only "the adapter failed".
      expect(logged.length).toBe(4);
      for (const { obj } of logged) {
        expect(obj).toMatchObject({ code: 'STORAGE_FAILED', failure: 'unreachable' });
        expect(messageChain(obj.err)).toMatch(/^the connection to the database failed \(.*(ECONNRESET|ECONNREFUSED|Connection terminated|closed state|PROTOCOL_CONNECTION_LOST).*\)/);
      }

      proxy.restore();
      // The pool discarded the connections the outage broke, so the very next requests succeed.
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await get('/products?jobid=1&sortorder=asc')).status);
      expect(statuses).toEqual([200, 200, 200, 200]);
      const after = await get('/products/prod-000001?jobid=1');
      expect(after.status).toBe(200);
      expect((after.body.product as { _id: string; title: string }).title).not.toBe('changed');
    });

    test('a connection cut while checked out, between two statements of a transaction: the transaction fails, nothing crashes', async () => {
      const uncaught: unknown[] = [];
      const onUncaught = (err: unknown) => void uncaught.push(err);
      process.on('uncaughtException', onUncaught);
      try {
        const attempt = adapter.db.transaction().execute(async (trx) => {
          await trx.selectFrom(adapter.tables.products).select('_id').limit(1).execute();
          // The connection is idle but checked out: pg-pool listens for its errors only while it is in the pool.
          proxy.cut();
          await sleep(300);
          await trx.selectFrom(adapter.tables.products).select('_id').limit(1).execute();
        });
        await expect(attempt).rejects.toThrow();
        // And through the adapter: a write with its connection cut mid-way is a StorageError.
        const write = adapter.products.upsert({ ...demoCatalog(1).products[0], title: 'cut' }, { lastUpdated: 'touch', now: Date.now(), signal: new AbortController().signal });
        await expect(write).rejects.toBeInstanceOf(StorageError);
        await sleep(300);
        expect(uncaught).toEqual([]);
      } finally {
        process.off('uncaughtException', onUncaught);
        proxy.restore();
      }
      expect((await adapter.products.get('prod-000001', { signal: new AbortController().signal }))?.title).not.toBe('cut');
    });
  });
}
