/**
 * Run history (sync health keeps the last N runs per connection, newest first, in memory and in
 * Redis) and the SVG chart drawn from it (one bar per run, a mark per failed run).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { runChart } from '../../lib/dashboard/html/run-chart';
import { JsonFileSyncHealth, MemorySyncHealth, RedisSyncHealth, runsFileBeside, type RunRecord, type SyncObservation } from '../../lib/sync';
import { lastRunOf, runRecordOf } from '../../lib/sync/sync-health';
import type { SyncReport } from '../../lib/sync';
import { describeRedis, purgePrefix, REDIS_URL, uniqueRedisPrefix } from '../sync/bullmq-helpers';

const entity = (count: number, extra: Record<string, number> = {}) => ({ count, seen: count, written: count, unchanged: 0, duplicates: 0, invalid: 0, anomalies: 0, complete: true, ...extra });

/** A run observation as a worker reports it. */
function observation(connection: string, jobid: number, failed: boolean, extra: Record<string, number> = {}): Extract<SyncObservation, { type: 'run' }> {
  const report: SyncReport = {
    ok: !failed,
    connection,
    jobid,
    mode: 'full',
    resumed: false,
    products: entity(10 * jobid, extra),
    orders: entity(jobid),
    requests: 2,
    retries: 0,
    durationMs: 5 * jobid,
    invalidItems: [],
    anomalies: [],
    ...(failed ? { error: { name: 'StoreAuthError', code: 'STORE_AUTH', message: 'listProducts: the store refused the SvcKey (HTTP 401)' } } : {}),
  };
  const t = Date.parse('2030-01-01T00:00:00Z') + jobid * 60_000;
  return { type: 'run', connection, outcome: failed ? 'failed' : 'ok', report, startedAt: t, endedAt: t + 5 * jobid, requests: 2, retries: 0, attempt: 1 };
}

test('memory: the history holds the last N runs of each connection, newest first (property)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 6 }), fc.array(fc.tuple(fc.constantFrom('a', 'b'), fc.boolean()), { maxLength: 30 }), async (size, runs) => {
      const health = new MemorySyncHealth({ historySize: size });
      const seq = { a: 0, b: 0 };
      for (const [c, failed] of runs) health.observe(observation(c, ++seq[c], failed));
      for (const c of ['a', 'b'] as const) {
        const expected = Array.from({ length: seq[c] }, (_, i) => seq[c] - i).slice(0, size);
        expect((await health.history(c)).map((r) => r.jobid)).toEqual(expected);
        expect((await health.history(c, 2)).map((r) => r.jobid)).toEqual(expected.slice(0, 2));
        // The last run is kept whatever the history size.
        expect((await health.lastRun(c))?.jobid).toBe(seq[c] || undefined);
      }
    }),
    { numRuns: 60 },
  );
});

test('normalised and fetched-by-id counts are kept when a run reports them, and absent otherwise', async () => {
  const health = new MemorySyncHealth();
  health.observe(observation('a', 1, false));
  health.observe(observation('a', 2, false, { normalised: 3, fetchedById: 1 }));
  const [newest, oldest] = await health.history('a');
  expect(newest.products).toMatchObject({ normalised: 3, fetchedById: 1 });
  expect(oldest.products).not.toHaveProperty('normalised');
  expect(() => new MemorySyncHealth({ historySize: -1 })).toThrow(/historySize/);
});

describe('run reports in a JSON file (JsonFileSyncHealth: what sync --state keeps for dashboard --state)', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'sb-runs-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const freshFile = () => path.join(dir, `runs-${++n}.json`);

  test('keeps what the memory health keeps: last runs, lastOkAt and history, across instances (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 4 }), fc.array(fc.tuple(fc.constantFrom('a', 'b', '__proto__'), fc.boolean()), { maxLength: 12 }), async (size, runs) => {
        const file = freshFile();
        const memory = new MemorySyncHealth({ historySize: size });
        const seq = new Map<string, number>();
        for (const [c, failed] of runs) {
          seq.set(c, (seq.get(c) ?? 0) + 1);
          const o = observation(c, seq.get(c)!, failed);
          memory.observe(o);
          // A new instance per run, as each `storebridge sync` process makes.
          await new JsonFileSyncHealth(file, { historySize: size }).observe(o);
        }
        const reader = new JsonFileSyncHealth(file);
        expect(await reader.lastRuns()).toEqual(await memory.lastRuns());
        for (const c of ['a', 'b', '__proto__']) {
          expect(await reader.lastRun(c)).toEqual(await memory.lastRun(c));
          expect(await reader.history(c)).toEqual(await memory.history(c));
          expect(await reader.history(c, 1)).toEqual(await memory.history(c, 1));
        }
      }),
      { numRuns: 40 },
    );
  });

  test('no file is no runs; a file that is not one is a clear error; runsFileBeside names the file beside a state file', async () => {
    const missing = new JsonFileSyncHealth(path.join(dir, 'none.json'));
    expect(await missing.lastRuns()).toEqual([]);
    expect(await missing.history('a')).toEqual([]);
    const bad = freshFile();
    writeFileSync(bad, JSON.stringify({ a: { jobid: 3 } }));
    await expect(new JsonFileSyncHealth(bad).lastRuns()).rejects.toThrow(`run-report file ${bad} is not a storebridge run-report file`);
    expect(runsFileBeside('/srv/sync-state.json')).toBe('/srv/sync-state.runs.json');
    expect(runsFileBeside('state')).toBe('state.runs.json');
  });
});

test('the chart has one bar per run, a cross per failed run, and a title per bar (property)', () => {
  fc.assert(
    fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }), fc.boolean(), (fails, compact) => {
      const runs: RunRecord[] = fails.map((failed, i) => runRecordOf(lastRunOf(observation('x', i + 1, failed), undefined)));
      const svg = runChart(runs.reverse(), { width: 300, height: 80, compact }).text;
      expect(svg.match(/<rect /g)?.length).toBe(fails.length);
      expect(svg.match(/class="fail-mark"/g)?.length ?? 0).toBe(fails.filter(Boolean).length);
      expect(svg.match(/<title>/g)?.length).toBe(fails.length + 1);
      expect(svg).toContain(`aria-label="${fails.length} run${fails.length === 1 ? '' : 's'}, ${fails.filter(Boolean).length} failed"`);
      // Oldest on the left: the first bar is job 1.
      expect(/<rect [^>]*><title>[^<]*\(job (\d+)\)/.exec(svg)![1]).toBe('1');
    }),
    { numRuns: 50 },
  );
  expect(runChart([], { width: 100, height: 20 }).text).toContain('no runs yet');
});

test('the chart counts items in words: a failed run with none says "0 items" on its axis, one item "1 item"', () => {
  const failed = runRecordOf(lastRunOf(observation('x', 1, true), undefined));
  const empty: RunRecord = { ...failed, products: { ...failed.products, count: 0 }, orders: { ...failed.orders, count: 0 } };
  const svg = runChart([empty], { width: 300, height: 80 }).text;
  expect(svg).toContain('>0 items</text>');
  expect(svg).toContain(': failed, 5 ms, 0 items (job 1)');
  const one = runChart([{ ...empty, orders: { ...empty.orders, count: 1 } }], { width: 300, height: 80 }).text;
  expect(one).toContain('>1 item</text>');
  expect(one).not.toMatch(/\b1 items\b/);
});

describeRedis('run history in Redis', () => {
  test('kept per connection, trimmed to the history size, shared between processes; forget removes it', async () => {
    const prefix = uniqueRedisPrefix();
    const writer = new Redis(REDIS_URL);
    const reader = new Redis(REDIS_URL);
    try {
      const w = new RedisSyncHealth(writer, { prefix, historySize: 3 });
      for (let i = 1; i <= 5; i++) await w.observe(observation('shop', i, i === 4));
      const r = new RedisSyncHealth(reader, { prefix });
      const history = await r.history('shop');
      expect(history.map((x) => [x.jobid, x.outcome])).toEqual([[5, 'ok'], [4, 'failed'], [3, 'ok']]);
      expect(history[1].error).toMatchObject({ code: 'STORE_AUTH' });
      expect(history[0]).not.toHaveProperty('lastOkAt');
      expect((await r.history('shop', 1)).map((x) => x.jobid)).toEqual([5]);
      expect(await r.history('shop', 0)).toEqual([]);
      expect(await r.history('other')).toEqual([]);
      expect((await r.lastRun('shop'))?.lastOkAt).toBe(new Date(Date.parse('2030-01-01T00:00:00Z') + 5 * 60_000 + 25).toISOString());
      await w.forget('shop');
      expect(await r.history('shop')).toEqual([]);
      expect(await r.lastRun('shop')).toBeUndefined();
    } finally {
      await purgePrefix(writer, prefix);
      await Promise.all([writer.quit(), reader.quit()]);
    }
  });
});
