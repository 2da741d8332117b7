/**
 * The sync service's health: the last run of every connection (when, outcome, counts), kept by an
 * observer, and served as JSON by `syncHealthHandler`. `MemorySyncHealth` serves one process;
 * `RedisSyncHealth` (in `redis-sync-state.ts`) is shared by every BullMQ worker.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { defineOptions, opt, readOption } from '../options';
import type { Entity } from '../contract/entities';
import type { SyncObservation, SyncObserver, SyncOutcome } from './sync-observer';

export interface LastRunEntity {
  /** Distinct items in the sink after the run. */
  count: number;
  seen: number;
  written: number;
  invalid: number;
  duplicates: number;
  /** Items the walk repaired to the contract (e.g. numbers sent as strings), when the run counts them. */
  normalised?: number;
  /** Items fetched one by one by id, when the run counts them. */
  fetchedById?: number;
}

/** The last run of one connection, as the health endpoint shows it. */
export interface LastRun {
  connection: string;
  outcome: Exclude<SyncOutcome, 'skipped'>;
  /** When the run ended (ISO 8601). */
  at: string;
  startedAt: string;
  durationMs: number;
  /** The wire `jobid` the run used. */
  jobid: number;
  resumed: boolean;
  attempt: number;
  worker?: string;
  /** The entities the connection covers (a products-only store: `['products']`), when the run says. */
  entities?: Entity[];
  products: LastRunEntity;
  orders: LastRunEntity;
  requests: number;
  retries: number;
  /** Why the run stopped early (never holds a key). */
  error?: { name: string; code?: string; message: string };
  /** When the connection last had a run with outcome `ok` (ISO 8601), if ever. */
  lastOkAt?: string;
}

/** Where last runs are kept. */
export interface SyncHealthSource {
  lastRuns(): Promise<LastRun[]>;
  lastRun(connection: string): Promise<LastRun | undefined>;
}

/** One run in a connection's history (a `LastRun` without `lastOkAt`). */
export type RunRecord = Omit<LastRun, 'lastOkAt'>;

/** A health source that also keeps each connection's last runs (newest first), e.g. for a dashboard. */
export interface SyncHistorySource extends SyncHealthSource {
  /** Up to `limit` (default: all kept) most recent runs of a connection, newest first. */
  history(connection: string, limit?: number): Promise<RunRecord[]>;
}

/** Runs kept per connection by default. */
export const DEFAULT_HISTORY_SIZE = 50;

/** The `historySize` option (runs kept per connection; 0 turns the history off), as factories declare it. */
export const historySizeOption = () => opt.int({ min: 0, max: 10_000 }).default(DEFAULT_HISTORY_SIZE);

/** Reads a `historySize` option given with other members a factory reads itself. */
export function checkHistorySize(value: unknown): number {
  return readOption('historySize', historySizeOption(), value);
}

/** The history record of a last run. */
export function runRecordOf(run: LastRun): RunRecord {
  const { lastOkAt: _dropped, ...record } = run;
  return record;
}

/** Whether `value` looks like a source with run history. */
export function hasHistory(source: SyncHealthSource): source is SyncHistorySource {
  return typeof (source as Partial<SyncHistorySource>).history === 'function';
}

/** Builds the `LastRun` record of a run observation (`lastOkAt` carried over from the previous one). */
export function lastRunOf(o: Extract<SyncObservation, { type: 'run' }>, previous: LastRun | undefined): LastRun {
  const entity = (e: Entity): LastRunEntity => {
    const r = o.report[e];
    // `normalised` and `fetchedById` are counted by newer runs only: carried when present.
    return {
      count: r.count,
      seen: r.seen,
      written: r.written,
      invalid: r.invalid,
      duplicates: r.duplicates,
      ...(typeof r.normalised === 'number' ? { normalised: r.normalised } : {}),
      ...(typeof r.fetchedById === 'number' ? { fetchedById: r.fetchedById } : {}),
    };
  };
  const at = new Date(o.endedAt).toISOString();
  const lastOkAt = o.outcome === 'ok' ? at : previous?.lastOkAt;
  return {
    connection: o.connection,
    outcome: o.outcome,
    at,
    startedAt: new Date(o.startedAt).toISOString(),
    durationMs: Math.max(0, o.endedAt - o.startedAt),
    jobid: o.report.jobid,
    resumed: o.report.resumed,
    attempt: o.attempt,
    ...(o.worker ? { worker: o.worker } : {}),
    ...(o.report.entities ? { entities: [...o.report.entities] } : {}),
    products: entity('products'),
    orders: entity('orders'),
    requests: o.requests,
    retries: o.retries,
    ...(o.report.error ? { error: o.report.error } : {}),
    ...(lastOkAt ? { lastOkAt } : {}),
  };
}

/**
 * Keeps each connection's last run, and its last `historySize` runs (default 50), in this process
 * (an observer and a health source).
 *
 * @example
 * ```ts
 * const health = new MemorySyncHealth();
 * const conn = createSyncConnection({ ..., observers: [health] });
 * app.get('/health', syncHealthHandler(health));
 * ```
 */
export class MemorySyncHealth implements SyncObserver, SyncHistorySource {
  private readonly runs = new Map<string, LastRun>();
  private readonly histories = new Map<string, RunRecord[]>();
  private readonly historySize: number;
  constructor(options: { historySize?: number } = {}) {
    this.historySize = checkHistorySize(options.historySize);
  }
  observe(o: SyncObservation): void {
    if (o.type !== 'run') return;
    const run = lastRunOf(o, this.runs.get(o.connection));
    this.runs.set(o.connection, run);
    if (this.historySize === 0) return;
    const list = this.histories.get(o.connection) ?? [];
    list.unshift(runRecordOf(run));
    list.length = Math.min(list.length, this.historySize);
    this.histories.set(o.connection, list);
  }
  async history(connection: string, limit?: number): Promise<RunRecord[]> {
    const list = this.histories.get(connection) ?? [];
    return list.slice(0, limit ?? list.length);
  }
  async lastRuns(): Promise<LastRun[]> {
    return [...this.runs.values()].sort((a, b) => (a.connection < b.connection ? -1 : a.connection > b.connection ? 1 : 0));
  }
  async lastRun(connection: string): Promise<LastRun | undefined> {
    return this.runs.get(connection);
  }
}

export interface SyncHealthHandlerOptions {
  /**
   * A connection whose last run ended longer ago than this is `stale` (its schedule may have
   * stopped, or every worker is down). Default: none (nothing is ever stale).
   */
  staleAfterMs?: number;
  /** Clock (Unix ms), for tests. */
  now?: () => number;
}

export type HealthStatus = 'ok' | 'degraded';

export interface SyncHealthBody {
  /** `degraded` when a connection's last run failed or is stale. */
  status: HealthStatus;
  checkedAt: string;
  counts: Record<Exclude<SyncOutcome, 'skipped'> | 'stale', number>;
  connections: Array<LastRun & { stale: boolean }>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

const MILLISECONDS = 'must be a positive integer (milliseconds)';

/** `syncHealthHandler`'s options, through the toolkit (`lib/options.ts`). */
const parseHandlerOptions = defineOptions('syncHealthHandler', {
  staleAfterMs: z.number({ error: MILLISECONDS }).int(MILLISECONDS).min(1, MILLISECONDS).max(Number.MAX_SAFE_INTEGER, MILLISECONDS).optional(),
  now: opt.fn<() => number>().optional(),
});

/**
 * The health endpoint: `GET` answers `200` with `SyncHealthBody` (every connection's last run);
 * `GET ?connection=ID` answers that connection's `LastRun` (plus `stale`), or `404 {error}`.
 * Stores failing do not make the *service* unhealthy, so a degraded status is still `200`; `503
 * {error}` means the health state itself cannot be read (e.g. Redis is down). Other methods: `405`.
 * Works as a `node:http` handler and as an Express route handler; it applies no authentication.
 *
 * @example
 * ```ts
 * http.createServer((req, res) => req.url!.startsWith('/health') ? handler(req, res) : metrics(req, res)).listen(9464);
 * const handler = syncHealthHandler(new RedisSyncHealth(redis), { staleAfterMs: 3 * intervalMs });
 * ```
 */
export function syncHealthHandler(source: SyncHealthSource, options: SyncHealthHandlerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  readOption('source', opt.object<SyncHealthSource>('a SyncHealthSource (MemorySyncHealth, RedisSyncHealth, …)', (s) => typeof (s as SyncHealthSource).lastRuns === 'function' && typeof (s as SyncHealthSource).lastRun === 'function'), source);
  const { staleAfterMs } = parseHandlerOptions(options);
  const now = options.now ?? Date.now;
  const withStale = (r: LastRun, t: number) => ({ ...r, stale: staleAfterMs !== undefined && t - Date.parse(r.at) > staleAfterMs });

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      json(res, 405, { error: 'use GET to read the sync health' });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://health.invalid');
    const one = url.searchParams.get('connection');
    const t = now();
    const answer = async () => {
      if (one !== null) {
        const r = await source.lastRun(one);
        if (!r) return json(res, 404, { error: 'no run recorded for this connection' });
        return json(res, 200, withStale(r, t));
      }
      const connections = (await source.lastRuns()).map((r) => withStale(r, t));
      const counts = { ok: 0, store_issues: 0, failed: 0, stale: 0 };
      for (const c of connections) {
        counts[c.outcome]++;
        if (c.stale) counts.stale++;
      }
      const body: SyncHealthBody = {
        status: counts.failed + counts.stale > 0 ? 'degraded' : 'ok',
        checkedAt: new Date(t).toISOString(),
        counts,
        connections,
      };
      json(res, 200, body);
    };
    answer().catch(() => {
      if (!res.headersSent) json(res, 503, { error: 'the sync health state cannot be read' });
      else res.destroy();
    });
  };
}
