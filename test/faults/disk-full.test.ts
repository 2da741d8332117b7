/**
 * The disk fills under `serve` on SQLite: a real full disk, not a simulated error. The server runs
 * in a mount namespace of its own (`unshare --user --map-root-user --mount`, no root needed) where
 * its data directory is a 2 MB tmpfs, most of it taken by a filler file. Writes go on until the
 * disk is full; then every write must answer a clear 500 that says so (no internals), the log must
 * name the real cause (SQLITE_FULL, not the rollback that followed it), reads must keep working,
 * and once the filler is removed writes must succeed again without a restart. Nothing acknowledged
 * may be lost or doubled.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoCatalog } from '../../lib/demo';
import { BIN } from '../cli/cli-process';
import { REQUIRE_DB } from '../support/describe-when';
import { auditWrites, crashTraces, KEY, postJson, printRows, record, recovery, scale, send, startServer, Tally } from './fault-kit';

jest.setTimeout(scale(120_000, 300_000));

/** Whether this machine lets an unprivileged process have its own mount namespace (most Linux kernels do). */
function namespacesWork(): string | undefined {
  const r = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /tmp && echo ok'], { encoding: 'utf8' });
  return r.stdout.trim() === 'ok' ? undefined : (r.stderr || r.error?.message || 'unshare failed').trim().split('\n')[0];
}

const why = process.platform === 'linux' ? namespacesWork() : 'not Linux';
const describeDisk = why === undefined ? describe : REQUIRE_DB ? describe : describe.skip;
if (why !== undefined && !REQUIRE_DB) console.warn(`NOTICE: skipping the disk-full faults: no private tmpfs here (${why}).`);

describeDisk('faults: the disk fills under serve on SQLite', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'storebridge-faults-disk-'))));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    printRows();
  });

  test('writes answer a clear 500 while the disk is full, reads go on, writes work again once space is freed', async () => {
    if (why !== undefined) throw new Error(`a private tmpfs is needed (${why}); STOREBRIDGE_REQUIRE_DB=1 turns this skip into a failure`);
    const data = join(dir, 'data');
    // 2 MB of tmpfs, 900 KB of it a filler: the store's own writes fill the rest.
    const script = `mkdir -p "$1" && mount -t tmpfs -o size=2m tmpfs "$1" && dd if=/dev/zero of="$1/filler" bs=1k count=900 2>/dev/null && shift && exec "$@"`;
    const serve = await startServer([], { STOREBRIDGE_KEY: KEY }, 60_000, [
      'unshare', '--user', '--map-root-user', '--mount', 'sh', '-c', script, 'sh', data,
      process.execPath, BIN, 'serve', '--adapter', `sqlite:${data}/store.db`, '--demo', '20', '--rate-limit', 'off', '--log-requests',
    ]);
    try {
      const template = demoCatalog(1).products[0];
      const tally = new Tally();
      const acknowledged = new Set<string>();
      const write = async (id: string) => {
        const a = tally.add(await postJson(`${serve.url}/products?jobid=1&id=${id}`, { ...template, _id: id, sku: `SKU-${id}`, description: 'x'.repeat(8_000) }));
        if (a.kind === '2xx') acknowledged.add(id);
        return a;
      };
      // Write until the disk is full (several refusals in a row), then a few more.
      let refusedInARow = 0;
      for (let n = 0; refusedInARow < 10 && n < 2_000; n++) refusedInARow = (await write(`full-${n}`)).kind === '5xx' ? refusedInARow + 1 : 0;
      const whenFull = { ...tally.counts };
      const read = tally.add(await send(`${serve.url}/products?jobid=1&limit=5`, { headers: { SvcKey: KEY } }));

      // Free the space, in the server's namespace.
      const freed = spawnSync('nsenter', ['--target', String(serve.child.pid), '--user', '--mount', '--preserve-credentials', 'rm', `${data}/filler`], { encoding: 'utf8' });
      expect(freed.status).toBe(0);
      let n = 0;
      const recoveryMs = await recovery(() => write(`after-${n++}`));
      for (let i = 0; i < 20; i++) await write(`after-more-${i}`);
      const { lost, doubled } = await auditWrites(serve.url, acknowledged, 20);
      const log = serve.stderr();
      record({ scenario: 'serve on SQLite, the disk fills (2 MB tmpfs)', requests: tally.requests, answers: tally.counts, recoveryMs, lost, doubled, note: `${whenFull['2xx']} writes fitted; once full every write 500, reads 200; space freed without a restart` });

      expect(whenFull['5xx']).toBeGreaterThanOrEqual(10);
      expect(read.status).toBe(200); // reads go on while the disk is full
      for (const body of tally.errorBodies) expect(body).toBe('{"error":"the store could not complete the request: the database storage is full; its log has the details"}');
      expect(log).toMatch(/"code":"STORAGE_FAILED","failure":"full".*SQLITE_FULL/);
      expect(log).not.toMatch(/cannot rollback/);
      expect({ lost, doubled }).toEqual({ lost: 0, doubled: 0 });
      expect(crashTraces(log)).toEqual([]);
      expect(serve.child.exitCode).toBeNull();
    } finally {
      await serve.stop();
    }
  });
});
