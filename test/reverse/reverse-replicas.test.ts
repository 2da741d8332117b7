/**
 * Replicas: two real `reverse-service` processes over one shared state (PostgreSQL, MariaDB, or
 * Redis beside PostgreSQL items) behind a round-robin proxy, the kit's own daemon (the real CLI)
 * calling through it, so that its calls alternate between them, mid-transaction included. It must
 * get the answers one process would give: every item pulled once and pushed back once. Then a
 * `kill -9` of one replica mid-transaction: the proxy sends everything to the survivor, which
 * finishes with nothing lost or doubled (no erased queue, no lost push page): mid-pull (the CLI
 * daemon) and mid-push (the library daemon, pages of 10).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createSqlAdapter, dropSqlReverseState } from '../../adapters/sql';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog, demoOrderCount } from '../../lib/demo';
import { createDaemon } from '../../lib/reverse';
import { runCli, spawnCli } from '../cli/cli-process';
import { startServer, waitUntil, lastJsonLine, crashTraces, reverseStatus, type CliServer } from '../faults/fault-kit';
import { DATABASE_URLS, describeDatabase, uniquePrefix, type ServerKind } from '../adapters/sql-databases';
import { describeRedis, REDIS_URL } from '../sync/bullmq-helpers';

const KEY = 'replica-key-22';
const env = { STOREBRIDGE_CONNECTION: KEY };

/** A round-robin HTTP proxy: call n goes to target n mod 2 among the live ones; a refused connection marks a target dead (the call goes to the next). */
async function roundRobin(targets: string[]): Promise<{ url: string; served: number[]; dead: Set<number>; close(): Promise<void> }> {
  const served = targets.map(() => 0);
  const dead = new Set<number>();
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const attempt = (tries: number): void => {
        const live = targets.map((_, i) => i).filter((i) => !dead.has(i));
        if (live.length === 0 || tries > targets.length) return void res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"no replica"}');
        const i = live[n++ % live.length];
        const t = new URL(targets[i]);
        const up = request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, connection: 'close' } }, (answer) => {
          served[i]++;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        up.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'ECONNREFUSED') {
            dead.add(i); // nothing was sent: the next replica gets the call
            return attempt(tries + 1);
          }
          // Cut mid-call (the replica died with it): a load balancer answers 502, the daemon calls again.
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"the replica went away"}');
          else res.destroy();
        });
        up.end(body);
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    dead,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

interface Setup {
  readonly label: string;
  readonly items: ServerKind;
  /** `--state`: the items' database (default) or Redis. */
  readonly redisState?: boolean;
}

const SETUPS: Setup[] = [
  { label: 'PostgreSQL state', items: 'postgres' },
  { label: 'MariaDB state', items: 'mysql' },
  { label: 'Redis state, PostgreSQL items', items: 'postgres', redisState: true },
];

/** The `--table-prefix` a replica was started with. */
const prefixes = new WeakMap<CliServer, string>();
const tablePrefixOf = async (s: CliServer) => prefixes.get(s)!;

function replicaSuite(setup: Setup): void {
  const dir = mkdtempSync(join(tmpdir(), 'sb-replicas-'));
  const started: CliServer[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    for (const c of cleanups) await c().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Two replicas over fresh shared tables (and Redis keys); the first seeds the demo catalog and queues pull, pull, push. */
  async function replicas(products: number, name: string, demo = true): Promise<CliServer[]> {
    const prefix = uniquePrefix();
    const base = ['reverse-service', '--adapter', DATABASE_URLS[setup.items], '--table-prefix', prefix, '--name', name, ...(setup.redisState ? ['--state', REDIS_URL] : [])];
    cleanups.push(async () => {
      const a = await createSqlAdapter({ connection: DATABASE_URLS[setup.items], tablePrefix: prefix });
      await a.dropTables();
      await dropSqlReverseState(a);
      await a.close();
    });
    if (setup.redisState) {
      cleanups.push(async () => {
        const redis = new Redis(REDIS_URL);
        const keys = await redis.keys(`storebridge:reverse:${name}:*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      });
    }
    const first = await startServer(demo ? [...base, '--demo', String(products)] : base, env);
    started.push(first);
    const second = await startServer(base, env);
    started.push(second);
    prefixes.set(first, prefix);
    prefixes.set(second, prefix);
    return [first, second];
  }

  test(`${setup.label}: the daemon's calls alternate between two replicas; ${500} products and their orders pulled once and pushed back once`, async () => {
    const products = 500;
    const orders = demoOrderCount(products);
    const name = `rr_${Date.now().toString(36)}`;
    const [a, b] = await replicas(products, name);
    const proxy = await roundRobin([a.url, b.url]);
    const local = `sqlite:${join(dir, `${name}.db`)}`;
    const run = await runCli(['daemon', '--service', proxy.url, '--adapter', local, '--once', '--json', '--poll-ms', '20'], env);
    await proxy.close();
    expect(run.code).toBe(0);
    expect(lastJsonLine(run.stdout)).toMatchObject({ ok: true, pulled: { products, orders }, failed: 0, pushed: { products, orders } });
    // Both replicas carried the transactions (strict alternation: within one call of each other).
    expect(Math.min(...proxy.served)).toBeGreaterThan(1000);
    expect(Math.abs(proxy.served[0] - proxy.served[1])).toBeLessThanOrEqual(5);
    // Both read the same state: each item delivered once, acknowledged once, received once.
    const views = [await reverseStatus(a.url, name), await reverseStatus(b.url, name)];
    expect(views[0]).toEqual({ ...views[1], throttle: views[0].throttle }); // the pace is per process
    for (const [entity, n] of [['products', products], ['orders', orders]] as const) {
      expect(views[0][entity]).toMatchObject({ delivered: n, redelivered: 0, succeeded: n, failed: 0, received: n, refused: 0 });
    }
    expect(views[0].transactions.map((t: { outcome: string; kind: string }) => `${t.kind}:${t.outcome}`)).toEqual(['pull:finished', 'pull:finished', 'push:finished']);
    const sink = await createSqlAdapter({ connection: local });
    expect({ products: await sink.products.count({ signal: AbortSignal.timeout(5000) }), orders: await sink.orders.count({ signal: AbortSignal.timeout(5000) }) }).toEqual({ products, orders });
    await sink.close();
    expect(crashTraces(a.stderr() + b.stderr() + run.stderr)).toEqual([]);
  }, 180_000);

  test(`${setup.label}: kill -9 of a replica mid-pull; the survivor finishes the pull and the queued push: nothing lost or doubled`, async () => {
    const products = 300;
    const orders = demoOrderCount(products);
    const name = `rk_${Date.now().toString(36)}`;
    const [a, b] = await replicas(products, name);
    const proxy = await roundRobin([a.url, b.url]);
    const local = `sqlite:${join(dir, `${name}.db`)}`;
    const daemon = spawnCli(['daemon', '--service', proxy.url, '--adapter', local, '--once', '--json', '--poll-ms', '20'], env);
    await waitUntil('the daemon to pull 60 products', async () => (await reverseStatus(b.url, name)).products.succeeded > 60, 60_000);
    await a.kill9(); // whatever it was doing: committed or not, never half
    const code = await daemon.exit;
    await proxy.close();
    expect(proxy.dead.has(0)).toBe(true);
    expect(code).toBe(0);
    expect(lastJsonLine(daemon.stdout())).toMatchObject({ ok: true, pulled: { products, orders }, pushed: { products, orders } });
    const view = await reverseStatus(b.url, name);
    for (const [entity, n] of [['products', products], ['orders', orders]] as const) {
      // Delivered at most once more than acknowledged (the item out when the replica died, handed out again).
      expect(view[entity]).toMatchObject({ succeeded: n, failed: 0, received: n });
      expect(view[entity].delivered + view[entity].redelivered).toBeLessThanOrEqual(n + 1);
    }
    expect(view.queue).toEqual([]);
    expect(view.transactions.map((t: { outcome: string; kind: string }) => `${t.kind}:${t.outcome}`)).toEqual(['pull:finished', 'pull:finished', 'push:finished']);
    const sink = await createSqlAdapter({ connection: local });
    expect({ products: await sink.products.count({ signal: AbortSignal.timeout(5000) }), orders: await sink.orders.count({ signal: AbortSignal.timeout(5000) }) }).toEqual({ products, orders });
    await sink.close();
    expect(crashTraces(b.stderr() + daemon.stderr())).toEqual([]);
  }, 180_000);

  test(`${setup.label}: kill -9 of a replica mid-push (pages of 10 alternating): every item received once, the store holds the catalog once`, async () => {
    const products = 300;
    const orders = demoOrderCount(products);
    const name = `rp_${Date.now().toString(36)}`;
    const [a, b] = await replicas(products, name, false);
    const queued = await fetch(`${a.url}/connections/${name}/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind":"push"}' });
    expect(queued.status).toBe(200);
    const proxy = await roundRobin([a.url, b.url]);
    // The kit's daemon in this process (pages of 10, so that the push spans many calls on both replicas).
    const daemon = createDaemon({ serviceUrl: proxy.url, connectionKey: KEY, adapter: createMemoryAdapter(demoCatalog(products)), pollIntervalMs: 20, pageItems: 10 });
    const run = daemon.runOnce();
    await waitUntil('the push to receive 100 products', async () => (await reverseStatus(b.url, name)).products.received >= 100, 60_000);
    await a.kill9();
    const report = await run;
    await proxy.close();
    expect(proxy.dead.has(0)).toBe(true);
    expect(report).toMatchObject({ ok: true, pushed: { products, orders } });
    const view = await reverseStatus(b.url, name);
    expect(view.products).toMatchObject({ received: products, refused: 0 });
    expect(view.orders).toMatchObject({ received: orders, refused: 0 });
    expect(view.transactions.map((t: { outcome: string; kind: string; items: unknown }) => [t.kind, t.outcome, t.items])).toEqual([['push', 'finished', { products, orders }]]);
    const store = await createSqlAdapter({ connection: DATABASE_URLS[setup.items], tablePrefix: await tablePrefixOf(b), migrate: false });
    expect({ products: await store.products.count({ signal: AbortSignal.timeout(5000) }), orders: await store.orders.count({ signal: AbortSignal.timeout(5000) }) }).toEqual({ products, orders });
    await store.close();
    expect(crashTraces(b.stderr())).toEqual([]);
  }, 180_000);
}

for (const setup of SETUPS) {
  if (setup.redisState) describeRedis(`reverse-service replicas (${setup.label})`, () => describeDatabase(setup.items, 'on the items database', () => replicaSuite(setup)));
  else describeDatabase(setup.items, `reverse-service replicas (${setup.label})`, () => replicaSuite(setup));
}
