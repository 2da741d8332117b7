/**
 * The write fixes through the real CLI (`storebridge serve`, built `dist/`), as issues 19 and 20
 * reproduce them, on SQLite, memory, PostgreSQL and MariaDB, the server killed (`kill -9`) and
 * started again on the same database between the repeats:
 * - the same order create twice (no id, same `orderid`) leaves one order;
 * - 200 parallel creates of one SKU leave one product;
 * - a partial update keeps the order's other members;
 * - an unpaired surrogate in a body `_id` is a 400.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqlAdapter } from '../../adapters/sql';
import { BIN, ROOT, spawnCli, type RunningCli } from '../cli/cli-process';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from '../adapters/sql-databases';

const KEY = 'cli-writes-key-0123456789';
jest.setTimeout(120_000);

async function serve(adapter: string | undefined): Promise<{ cli: RunningCli; base: string }> {
  const cli = spawnCli(['serve', '--port', '0', '--demo', '5', '--rate-limit', 'off', ...(adapter ? ['--adapter', adapter] : [])], { STOREBRIDGE_KEY: KEY });
  for (let i = 0; i < 600 && !/listening on (\S+)/.test(cli.stdout()); i++) {
    if (cli.child.exitCode !== null) throw new Error(`serve exited: ${cli.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const base = /listening on (\S+)/.exec(cli.stdout())?.[1];
  if (!base) throw new Error(`serve did not start: ${cli.stderr()}`);
  return { cli, base };
}

async function call(base: string, method: string, path: string, header: string, body?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { method, headers: { [header]: KEY, 'content-type': 'application/json' }, body });
  return { status: res.status, body: await res.json() };
}

async function all(base: string, entity: string): Promise<any[]> {
  const out: any[] = [];
  let next: string | undefined;
  do {
    const page = await call(base, 'GET', `/${entity}?limit=500${next ? `&next=${next}` : ''}`, 'SvcKey');
    out.push(...page.body[entity]);
    next = page.body.paging.next;
  } while (next);
  return out;
}

function suite(adapter: () => string | undefined, restartable: boolean, cleanup: () => Promise<void>) {
  afterAll(cleanup);
  test('one order per orderid, one product per SKU, partial updates keep the order, unpaired surrogates refused; the same after kill -9 and a restart', async () => {
    if (!existsSync(join(ROOT, 'dist'))) throw new Error('build first (npm run build)');
    void BIN;
    let { cli, base } = await serve(adapter());
    try {
      const create = JSON.stringify({ orderid: 'MKT-1', status: 'paid', total: { amount: 10, currency: 'USD' } });
      const first = await call(base, 'POST', '/orders?jobid=7', 'C2SKey', create);
      const second = await call(base, 'POST', '/orders?jobid=7', 'SvcKey', create);
      expect([first.status, second.body]).toEqual([200, first.body]);

      const race = await Promise.all(Array.from({ length: 200 }, () => call(base, 'POST', '/products?jobid=9', 'SvcKey', JSON.stringify({ sku: 'RACE', title: 'r' }))));
      expect(race.filter((r) => r.status === 200)).toHaveLength(1);
      expect(race.filter((r) => r.status === 400 && /^product not stored: sku: "RACE" is already used by product /.test(r.body.error))).toHaveLength(199);

      const before = (await call(base, 'GET', '/orders/ord-000001', 'SvcKey')).body.order;
      const partial = await call(base, 'POST', '/orders?jobid=3&id=ord-000001', 'C2SKey', JSON.stringify({ status: 'shipped' }));
      expect(partial.body.order).toEqual({ ...before, status: 'shipped', last_updated: partial.body.order.last_updated });
      expect(partial.body.warnings[0].msg).toMatch(/^body: members the body leaves out were kept from the stored order: orderid, /);

      const surrogate = await call(base, 'POST', '/products?jobid=1', 'SvcKey', '{"_id":"x\\ud800","sku":"LS-1","title":"t"}');
      expect([surrogate.status, surrogate.body.reasons[0].msg]).toEqual([400, '_id: must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)']);
      expect((await call(base, 'GET', '/products?sortorder=desc&limit=1', 'SvcKey')).status).toBe(200);

      if (restartable) {
        cli.child.kill('SIGKILL');
        await cli.exit;
        ({ cli, base } = await serve(adapter()));
        expect((await call(base, 'POST', '/orders?jobid=8', 'C2SKey', create)).body).toEqual(first.body);
        expect((await call(base, 'POST', '/products?jobid=9', 'SvcKey', JSON.stringify({ sku: 'RACE', title: 'r' }))).status).toBe(400);
      }
      const orders = await all(base, 'orders');
      expect(orders.filter((o) => o.orderid === 'MKT-1')).toHaveLength(1);
      expect((await all(base, 'products')).filter((p) => p.sku === 'RACE')).toHaveLength(1);
    } finally {
      cli.child.kill('SIGTERM');
      await cli.exit;
    }
  });
}

describe('serve (real CLI) on a SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-cli-writes-'));
  suite(() => `sqlite:${join(dir, 'store.db')}`, true, async () => rmSync(dir, { recursive: true, force: true }));
});

describe('serve (real CLI) on memory', () => suite(() => 'memory', false, async () => undefined));

for (const kind of ['postgres', 'mysql'] as const) {
  describeDatabase(kind, `serve (real CLI) on ${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}`, () => {
    const tablePrefix = uniquePrefix();
    const spec = `${DATABASE_URLS[kind]}?tablePrefix=${tablePrefix}`;
    suite(() => spec, true, async () => {
      const a = await createSqlAdapter({ connection: DATABASE_URLS[kind], tablePrefix, migrate: false });
      await a.dropTables();
      await a.close();
    });
  });
}
