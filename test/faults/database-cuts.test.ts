/**
 * The database goes away mid-run: PostgreSQL and MariaDB are reached through a TCP proxy that the
 * test cuts (every connection reset, new ones refused) and restores, under `serve` with writers
 * and readers, under `sync --into` mid-run, under `reverse-service` mid-transaction and under a
 * daemon's own store. Each process must answer clean errors (500 {error} without internals, or a
 * clean failed run) and serve again once the database is back, with no restart; nothing
 * acknowledged may be lost or doubled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import { demoCatalog, demoOrderCount } from '../../lib/demo';
import { DATABASE_URLS, describeDatabase, uniquePrefix, type ServerKind } from '../adapters/sql-databases';
import { runCli, spawnCli } from '../cli/cli-process';
import { TcpProxy } from '../support/tcp-proxy';
import {
  auditRoundTrip,
  auditWrites,
  CONNECTION,
  CUT_MS,
  DAEMON_POLL_MS,
  countingProxy,
  crashTraces,
  haltLoads,
  KEY,
  lastJsonLine,
  printRows,
  record,
  recovery,
  scale,
  send,
  sleep,
  startServer,
  Tally,
  reverseStatus,
  waitUntil,
  webhookLoad,
  type CliServer,
} from './fault-kit';

jest.setTimeout(scale(120_000, 300_000));


const LABEL: Record<ServerKind, string> = { postgres: 'PostgreSQL', mysql: 'MariaDB' };
const env = { STOREBRIDGE_KEY: KEY, STOREBRIDGE_CONNECTION: CONNECTION };

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'storebridge-faults-'))));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  printRows();
});

/** The database's own port, for the proxy. */
function targetOf(kind: ServerKind): { host: string; port: number } {
  const url = new URL(DATABASE_URLS[kind]);
  return { host: url.hostname, port: Number(url.port || (kind === 'postgres' ? 5432 : 3306)) };
}

/** A spec through the proxy, on tables of their own. */
const viaProxy = (proxy: TcpProxy, kind: ServerKind, prefix: string) => `${proxy.rewrite(DATABASE_URLS[kind])}?tablePrefix=${prefix}`;

/** Opens the tables directly (not through the proxy), to audit them and drop them. */
const direct = (kind: ServerKind, prefix: string): Promise<SqlAdapter> => createSqlAdapter({ connection: DATABASE_URLS[kind], tablePrefix: prefix, poolSize: 2 });

/** Ids of every item in a table (read directly). */
async function idsOf(adapter: SqlAdapter, entity: 'products' | 'orders'): Promise<string[]> {
  const rows = (await adapter.db.selectFrom(adapter.tables[entity]).select('_id').execute()) as Array<{ _id: unknown }>;
  return rows.map((r) => (Buffer.isBuffer(r._id) ? r._id.toString('utf8') : String(r._id)));
}

/** Expected ids missing from `ids`. */
const lostOf = (expected: readonly string[], ids: readonly string[]) => {
  const have = new Set(ids);
  return expected.filter((id) => !have.has(id)).length;
};

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `faults: ${LABEL[kind]} cut mid-run`, () => {
    let proxy: TcpProxy;
    const prefixes: string[] = [];
    const servers: CliServer[] = [];

    beforeEach(async () => {
      proxy = await TcpProxy.start(targetOf(kind));
    });
    afterEach(async () => {
      haltLoads();
      await Promise.all(servers.splice(0).map((s) => s.stop()));
      await proxy.close();
      for (const prefix of prefixes.splice(0)) {
        const adapter = await direct(kind, prefix);
        await adapter.dropTables().catch(() => undefined);
        await adapter.close();
      }
    });

    const newPrefix = () => {
      const p = uniquePrefix();
      prefixes.push(p);
      return p;
    };

    test(`serve over ${LABEL[kind]}: 500 {error} while it is cut, serving again when it is back, nothing lost or doubled`, async () => {
      const seeded = 50;
      const serve = await startServer(['serve', '--adapter', viaProxy(proxy, kind, newPrefix()), '--demo', String(seeded), '--rate-limit', 'off'], env);
      servers.push(serve);
      const template = demoCatalog(1).products[0];
      const load = webhookLoad(serve.url, { writers: scale(4, 8), readers: 2, prefix: `cut-${kind}`, template });
      await sleep(scale(1_000, 3_000));
      proxy.cut();
      await sleep(CUT_MS);
      const during = { ...load.tally.counts };
      proxy.restore();
      const recoveryMs = await recovery(() => send(`${serve.url}/products?jobid=1&limit=1`, { headers: { SvcKey: KEY } }));
      await sleep(scale(1_000, 3_000));
      await load.stop();
      const { lost, doubled } = await auditWrites(serve.url, load.acknowledged, seeded);
      record({ scenario: `serve, ${LABEL[kind]} cut ${CUT_MS / 1000} s mid-load`, requests: load.tally.requests, answers: load.tally.counts, recoveryMs, lost, doubled, note: `${load.acknowledged.size} writes acknowledged` });

      expect(during['5xx']).toBeGreaterThan(0); // the cut was felt …
      for (const body of load.tally.errorBodies) expect(body).toMatch(/^\{"error":"the store could not complete the request[^"]*"\}$/); // … as clean 500s
      expect(load.tally.counts.reset).toBe(0);
      expect(recoveryMs).toBeLessThan(5_000);
      expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
      expect(crashTraces(serve.stderr())).toEqual([]);
      expect(serve.child.exitCode).toBeNull(); // still the same process
    });

    test(`sync --into ${LABEL[kind]}: a cut mid-run is waited out (or the run stops cleanly and resumes), nothing lost or doubled`, async () => {
      const products = scale(1_500, 6_000);
      const orders = demoOrderCount(products);
      const store = await startServer(['serve', '--demo', String(products), '--rate-limit', 'off'], env);
      servers.push(store);
      const prefix = newPrefix();
      const state = join(dir, `sync-${kind}-${prefix}.json`);
      const args = ['sync', store.url, '--into', viaProxy(proxy, kind, prefix), '--json', '--state', state, '--page-size', '50'];
      const runs = new Tally();
      let first = spawnCli(args, env);
      // Cut once the sink holds some pages (its tables are created by the first of the two to open them).
      const sink = await direct(kind, prefix);
      await waitUntil('the first pages in the sink', async () => (await sink.products.count({ signal: AbortSignal.timeout(5_000) })) > 0);
      proxy.cut();
      await sleep(CUT_MS);
      proxy.restore();
      const restoredAt = Date.now();
      let code = await first.exit;
      let outcome = first;
      const outputs = [first.stdout() + first.stderr()];
      runs.add({ kind: code === 0 ? '2xx' : /"ok":false/.test(first.stdout()) ? '5xx' : 'reset', ms: 0 });
      // A run that stopped cleanly is resumed from its checkpoint, as an operator (or cron) would.
      while (code !== 0 && runs.requests < 5) {
        const again = await runCli(args, env);
        outputs.push(again.stdout + again.stderr);
        code = again.code;
        runs.add({ kind: code === 0 ? '2xx' : /"ok":false/.test(again.stdout) ? '5xx' : 'reset', ms: 0 });
        outcome = { ...first, stdout: () => again.stdout, stderr: () => again.stderr };
      }
      const recoveryMs = Date.now() - restoredAt;
      const report = lastJsonLine(outcome.stdout());
      const catalog = demoCatalog(products);
      const audit = sink;
      const productIds = await idsOf(audit, 'products');
      const orderIds = await idsOf(audit, 'orders');
      const lost = lostOf(catalog.products.map((p) => p._id), productIds) + lostOf(catalog.orders.map((o) => o._id), orderIds);
      const signal = AbortSignal.timeout(5_000);
      const doubled = productIds.length - new Set(productIds).size + (orderIds.length - new Set(orderIds).size) + Math.max(0, (await audit.products.count({ signal })) - products) + Math.max(0, (await audit.orders.count({ signal })) - orders);
      await audit.close();
      record({
        scenario: `sync --into ${LABEL[kind]}, cut ${CUT_MS / 1000} s mid-run`,
        requests: runs.requests,
        answers: runs.counts,
        recoveryMs: null,
        lost,
        doubled,
        note: `runs: ${runs.counts['2xx']} ok, ${runs.counts['5xx']} stopped cleanly; ${recoveryMs} ms from the restore to the end; ${report.requests} store requests`,
      });

      expect({ reset: runs.counts.reset, outputs: runs.counts.reset ? outputs : [] }).toEqual({ reset: 0, outputs: [] }); // every run ended with its --json line
      expect(report).toMatchObject({ ok: true, products: { count: products, duplicates: 0 }, orders: { count: orders, duplicates: 0 } });
      expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
      for (const output of outputs) expect(crashTraces(output)).toEqual([]);
    });

    test(`reverse-service over ${LABEL[kind]}: a cut mid-transaction answers 500 and the daemon finishes once it is back`, async () => {
      const products = scale(200, 1_000);
      const orders = demoOrderCount(products);
      const service = await startServer(['reverse-service', '--adapter', viaProxy(proxy, kind, newPrefix()), '--demo', String(products)], env);
      servers.push(service);
      const counting = await countingProxy(service.url);
      const local = join(dir, `daemon-${kind}-${Date.now()}.db`);
      const daemon = spawnCli(['daemon', '--service', counting.url, '--adapter', `sqlite:${local}`, '--once', '--json', '--poll-ms', DAEMON_POLL_MS], env);
      await waitUntil('the daemon to pull 20 products', async () => (await reverseStatus(service.url)).products.succeeded > 20);
      proxy.cut();
      await sleep(CUT_MS);
      const during = counting.tally.counts['5xx'];
      proxy.restore();
      const restoredAt = Date.now();
      const recoveryMs = await recovery(() => send(`${service.url}/connections/default/status`));
      const code = await daemon.exit;
      const result = lastJsonLine(daemon.stdout());
      await counting.close();
      const { lost, doubled } = await auditRoundTrip(`sqlite:${local}`, await reverseStatus(service.url), { products, orders });
      record({
        scenario: `reverse-service, ${LABEL[kind]} cut ${CUT_MS / 1000} s mid-transaction`,
        requests: counting.tally.requests,
        answers: counting.tally.counts,
        recoveryMs,
        lost,
        doubled,
        note: `daemon --once exit ${code} ${Date.now() - restoredAt} ms after the restore; ${during} calls answered 500 during the cut`,
      });

      expect(during).toBeGreaterThan(0);
      expect(code).toBe(0);
      expect(result).toMatchObject({ ok: true, pulled: { products, orders }, pushed: { products, orders } });
      expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
      expect(crashTraces(service.stderr() + daemon.stderr())).toEqual([]);
      expect(service.child.exitCode).toBeNull();
    });

    test(`daemon over ${LABEL[kind]}: its own store cut mid-pull, the pull finishes once it is back`, async () => {
      const products = scale(200, 1_000);
      const orders = demoOrderCount(products);
      const service = await startServer(['reverse-service', '--demo', String(products)], env);
      servers.push(service);
      const prefix = newPrefix();
      const daemon = spawnCli(['daemon', '--service', service.url, '--adapter', viaProxy(proxy, kind, prefix), '--once', '--json', '--poll-ms', DAEMON_POLL_MS], env);
      await waitUntil('the daemon to pull 20 products', async () => (await reverseStatus(service.url)).products.succeeded > 20);
      proxy.cut();
      await sleep(CUT_MS);
      proxy.restore();
      const restoredAt = Date.now();
      const code = await daemon.exit;
      const result = lastJsonLine(daemon.stdout());
      const view = await reverseStatus(service.url);
      const sink = await direct(kind, prefix);
      const ids = { products: await idsOf(sink, 'products'), orders: await idsOf(sink, 'orders') };
      await sink.close();
      const catalog = demoCatalog(products);
      const lost = lostOf(catalog.products.map((p) => p._id), ids.products) + lostOf(catalog.orders.map((o) => o._id), ids.orders);
      const doubled = Math.max(0, ids.products.length - products) + Math.max(0, ids.orders.length - orders) + Math.max(0, view.products.received - products);
      record({
        scenario: `daemon, its ${LABEL[kind]} store cut ${CUT_MS / 1000} s mid-pull`,
        requests: 1,
        answers: { '2xx': code === 0 ? 1 : 0, '4xx': 0, '5xx': code === 0 ? 0 : 1, reset: 0 },
        recoveryMs: null,
        lost,
        doubled,
        note: `daemon --once exit ${code} ${Date.now() - restoredAt} ms after the restore; ${result.failed} items reported failed to the service`,
      });

      expect(code).toBe(0);
      expect(result).toMatchObject({ ok: true, pulled: { products, orders } });
      expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
      expect(crashTraces(daemon.stderr())).toEqual([]);
    });
  });
}
