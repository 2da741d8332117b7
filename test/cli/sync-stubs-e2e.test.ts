/**
 * The deployed "list by id" mode end to end with the real CLI: `serve --listing stubs` lists
 * `{_id, last_updated}` stubs and serves each item through `?id=`; `sync` fetches them by ID and
 * moves exactly the data a full listing moves. A second run fetches nothing (nothing changed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlAdapter } from '../../adapters/sql';
import { sinkContents } from '../peers/store-emulator';
import { runCli, spawnCli, type RunningCli } from './cli-process';

const KEY = 'stubs-e2e-Key-41d0c9';
const lastLine = (s: string) => s.trim().split('\n').pop()!;

async function serve(listing: 'full' | 'stubs'): Promise<{ cli: RunningCli; url: string }> {
  const cli = spawnCli(['serve', '--port', '0', '--demo', '300', '--listing', listing, '--rate-limit', 'off'], { STOREBRIDGE_KEY: KEY });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(cli.stdout());
      if (m) {
        clearInterval(timer);
        resolve(m[1]);
      }
    }, 50);
    void cli.exit.then((code) => (clearInterval(timer), reject(new Error(`serve exited with ${code}: ${cli.stderr()}`))));
  });
  return { cli, url };
}

let dir: string;
const servers: RunningCli[] = [];
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-stubs-e2e-'));
});
afterAll(async () => {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await s.exit;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('serve --listing stubs + sync moves the same data as the full listing, fetched by ID', async () => {
  const sinks: Record<string, string> = {};
  const urls: Record<string, string> = {};
  const reports: Record<string, { ok: boolean; products: { count: number; fetchedById?: number }; orders: { count: number; fetchedById?: number } }> = {};
  for (const listing of ['full', 'stubs'] as const) {
    const { cli, url } = await serve(listing);
    servers.push(cli);
    urls[listing] = url;
    sinks[listing] = path.join(dir, `${listing}.db`);
    const r = await runCli(['sync', url, '--into', `sqlite:${sinks[listing]}`, '--json'], { STOREBRIDGE_KEY: KEY });
    expect(r.code).toBe(0);
    reports[listing] = JSON.parse(lastLine(r.stdout));
    expect(r.stdout + r.stderr + cli.stdout() + cli.stderr()).not.toContain(KEY);
  }
  expect(reports.stubs).toMatchObject({ ok: true, products: { count: 300, fetchedById: 300 }, orders: { count: 75, fetchedById: 75 } });
  expect(reports.full).toMatchObject({ ok: true, products: { count: 300 }, orders: { count: 75 } });
  expect(reports.full.products.fetchedById ?? 0).toBe(0);
  // Nothing changed since: the stubs match the sink's last_updated, so no item is fetched again.
  const again = await runCli(['sync', urls.stubs, '--into', `sqlite:${sinks.stubs}`, '--json'], { STOREBRIDGE_KEY: KEY });
  expect(again.code).toBe(0);
  expect(JSON.parse(lastLine(again.stdout))).toMatchObject({ ok: true, products: { count: 300, fetchedById: 0 }, orders: { count: 75, fetchedById: 0 } });
  const full = await openSqlAdapter(`sqlite:${sinks.full}`);
  const stubs = await openSqlAdapter(`sqlite:${sinks.stubs}`);
  try {
    for (const entity of ['products', 'orders'] as const) expect(await sinkContents(stubs, entity)).toEqual(await sinkContents(full, entity));
  } finally {
    await full.close?.();
    await stubs.close?.();
  }
}, 120_000);
