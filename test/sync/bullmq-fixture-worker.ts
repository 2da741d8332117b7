/**
 * A sync worker process for the BullMQ tests: `createSyncWorker` with a connection registry read
 * from a JSON file (URL, key, SQLite sink file per connection — the keys never go through Redis),
 * logging every run start, page and run (with its queue job id and pid) to a Redis list the test
 * reads. Prints `ready <name>` once it takes jobs; SIGTERM closes it gracefully.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { StoreAdapter } from '../../lib/adapter';
import { openSqlAdapter } from '../../adapters/sql';
import { createSyncWorker } from '../../lib/sync';

interface RegistryEntry {
  baseUrl: string;
  key: string;
  sink: string;
}

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

async function main(): Promise<void> {
  const registry = JSON.parse(readFileSync(env('SB_REGISTRY'), 'utf8')) as Record<string, RegistryEntry>;
  // The log may live on another Redis URL than the worker's (the fault suite cuts the worker's).
  const log = new Redis(process.env.SB_LOG_REDIS_URL ?? env('SB_REDIS_URL'));
  log.on('error', () => undefined);
  const logKey = env('SB_LOG_KEY');
  const push = (entry: object) => void log.rpush(logKey, JSON.stringify({ pid: process.pid, t: Date.now(), ...entry })).catch(() => undefined);
  const sinks = new Map<string, Promise<StoreAdapter>>();
  const name = `${env('SB_NAME')}:${process.pid}`;

  const worker = createSyncWorker({
    connection: env('SB_REDIS_URL'),
    prefix: env('SB_PREFIX'),
    name,
    concurrency: Number(process.env.SB_CONCURRENCY ?? 4),
    lockTtlMs: Number(process.env.SB_LOCK_TTL ?? 2000),
    stalledIntervalMs: Number(process.env.SB_STALLED ?? 1000),
    resolveConnection(id) {
      const entry = Object.prototype.hasOwnProperty.call(registry, id) ? registry[id] : undefined;
      if (!entry) return undefined;
      if (!sinks.has(id)) sinks.set(id, openSqlAdapter(`sqlite:${entry.sink}`));
      return sinks.get(id)!.then((sink) => ({ client: { baseUrl: entry.baseUrl, svcKey: entry.key, pageSize: 5, retry: 0 }, sink }));
    },
    onEvent(e, ctx) {
      if (e.type === 'run-start') push({ type: 'start', conn: ctx.connectionId, job: ctx.jobId, jobid: e.jobid, resumed: e.resumed });
      if (e.type === 'page' && process.env.SB_LOG_PAGES === '1') push({ type: 'page', conn: ctx.connectionId, job: ctx.jobId, entity: e.entity, seen: e.seen });
    },
    observers: [
      {
        observe(o) {
          if (o.type === 'skipped') push({ type: 'skipped', conn: o.connection, job: o.jobId });
          else {
            const r = o.report;
            push({
              type: 'run',
              conn: o.connection,
              job: o.jobId,
              outcome: o.outcome,
              start: o.startedAt,
              end: o.endedAt,
              jobid: r.jobid,
              resumed: r.resumed,
              attempt: o.attempt,
              products: { count: r.products.count, seen: r.products.seen },
              orders: { count: r.orders.count, seen: r.orders.seen },
              error: r.error?.message,
            });
          }
        },
      },
    ],
    onError: (err) => push({ type: 'worker-error', message: err.message }),
  });
  await worker.worker.waitUntilReady();
  process.stdout.write(`ready ${name}\n`);
  process.once('SIGTERM', () => {
    void (async () => {
      await worker.close();
      await Promise.all([...sinks.values()].map(async (s) => (await s).close?.()));
      await log.quit();
      process.exit(0);
    })();
  });
}

main().catch((err) => {
  process.stderr.write(`worker failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
