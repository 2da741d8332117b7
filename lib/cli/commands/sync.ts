/**
 * `storebridge sync URL --key K [--into ADAPTER] [--json] [options]`, or with one URL per entity
 * `storebridge sync --products-url U --orders-url U --key K …` (a deployed connection's
 * `{{URI_PRODUCTS}}` and `{{URI_ORDERS}}`, which may carry their own query).
 *
 * Pulls every product and order from the store into a sink adapter. With `--json` the last stdout
 * line is the report DESIGN.md fixes (with added members only). The key may come from
 * `STOREBRIDGE_KEY`; it is never printed.
 */
import { parseArgs } from 'node:util';
import { firstProblem, intArg, missingSecret, secretArg } from '../args';
import { ADAPTER_SPEC_HELP, openAdapter } from '../adapter-spec';
import type { CliIO } from '../io';
import { createStoreClient } from '../../client/store-client';
import { JsonFileCheckpointStore, MemoryCheckpointStore } from '../../sync/checkpoint-store';
import { runSync, type EntityReport, type SyncEvent, type SyncReport } from '../../sync/sync-run';
import { totalNormalisations, type NormalisationCounts } from '../../client/store-reply';
import type { OperationUrls } from '../../client/client-options';
import { KEY_HEADERS_HELP, keyHeadersArg, STORE_FLAG_OPTIONS, STORE_URLS_HELP, storeLocation } from './store-flags';
import type { Entity } from '../../contract/webhook';

export const HELP = `usage: storebridge sync URL --key K [options]
       storebridge sync --products-url U --orders-url U --key K [options]

Pulls every product and order from the store at URL (URL/products, URL/orders), or from the
connection's URL per entity, into a sink.

options:
  --key K              the connection's key (or set STOREBRIDGE_KEY); never printed
${STORE_URLS_HELP}
${KEY_HEADERS_HELP}
  --into ADAPTER       the sink: ${ADAPTER_SPEC_HELP} (default memory)
  --json               print the run report as one JSON line, last on stdout
  --state FILE         keep jobid, high water and checkpoints in this JSON file: a run that is
                       interrupted resumes where it stopped (default: none, jobid starts at 1);
                       use it with a kept sink (--into sqlite:FILE, …), not the memory one
  --connection NAME    the connection's name in the state file (default: the URL's host)
  --incremental        walk desc and stop at the last run's high water (needs --state)
  --strategy S         auto | offset | cursor (default auto: follow next when the store gives one)
  --page-size N        ask for N items per page with the limit parameter; 0 sends none (default 100)
  --concurrency N      parallel offset pages once itemsTotal is known (default 1)
  --timeout MS         per-request time limit (default 60000, the spec's)
  --retries N          retries per request on network errors, timeouts, 5xx, 429 (default 3)
  --by-id-concurrency N  by-ID reads at once when a store lists ids only (default 8)
  -h, --help           this text

What the reader had to normalise (numbers sent as strings, epoch-ms dates, next: "", placeholder
totals, …) is printed as warnings on stderr and counted in the report; it does not fail the run.

Exit status: 0 when the run completed and the store behaved, 1 otherwise, 2 on a usage error.`;

interface SyncArgs {
  /** The base URL and/or the per-entity list URLs. */
  baseUrl?: string;
  urls: OperationUrls;
  keyHeaders?: string[];
  key: string;
  into: string;
  json: boolean;
  state?: string;
  connection: string;
  incremental: boolean;
  strategy: 'auto' | 'offset' | 'cursor';
  pageSize: number;
  concurrency: number;
  timeoutMs: number;
  retries: number;
  byIdConcurrency: number;
}

function parse(args: string[], env: NodeJS.ProcessEnv): SyncArgs | string {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        key: { type: 'string' },
        ...STORE_FLAG_OPTIONS,
        'by-id-concurrency': { type: 'string' },
        into: { type: 'string' },
        json: { type: 'boolean' },
        state: { type: 'string' },
        connection: { type: 'string' },
        incremental: { type: 'boolean' },
        strategy: { type: 'string' },
        'page-size': { type: 'string' },
        concurrency: { type: 'string' },
        timeout: { type: 'string' },
        retries: { type: 'string' },
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  const where = storeLocation(positionals, values['products-url'], values['orders-url']);
  if (typeof where === 'string') return where;
  const keyHeaders = keyHeadersArg(values['key-headers']);
  if (keyHeaders && !Array.isArray(keyHeaders)) return keyHeaders.error;
  const key = secretArg(values.key, env, 'STOREBRIDGE_KEY');
  if (!key) return missingSecret('--key K', 'STOREBRIDGE_KEY');
  const pageSize = intArg('page-size', values['page-size'], { min: 0, max: 100_000, fallback: 100 });
  const concurrency = intArg('concurrency', values.concurrency, { min: 1, max: 64, fallback: 1 });
  const timeoutMs = intArg('timeout', values.timeout, { min: 1, max: 3_600_000, fallback: 60_000 });
  const retries = intArg('retries', values.retries, { min: 0, max: 100, fallback: 3 });
  const byIdConcurrency = intArg('by-id-concurrency', values['by-id-concurrency'], { min: 1, max: 64, fallback: 8 });
  const problem = firstProblem([pageSize, concurrency, timeoutMs, retries, byIdConcurrency]);
  if (problem) return problem;
  const strategy = values.strategy ?? 'auto';
  if (strategy !== 'auto' && strategy !== 'offset' && strategy !== 'cursor') return '--strategy must be auto, offset or cursor';
  if (values.incremental && !values.state) return '--incremental needs --state FILE (the high water of the last run is kept there)';
  return {
    baseUrl: where.baseUrl,
    urls: where.urls,
    keyHeaders,
    key,
    into: values.into ?? 'memory',
    json: Boolean(values.json),
    state: values.state,
    connection: values.connection ?? where.host,
    incremental: Boolean(values.incremental),
    strategy,
    pageSize: pageSize as number,
    concurrency: concurrency as number,
    timeoutMs: timeoutMs as number,
    retries: retries as number,
    byIdConcurrency: byIdConcurrency as number,
  };
}

/**
 * A progress bar on stderr, one line per entity, redrawn at most 10 times a second. When the walk
 * moves on to the next entity (or the run ends), the finished entity's line is drawn with its last
 * numbers and kept, so the products bar is not overwritten by the orders bar.
 */
export function progressBar(write: (s: string) => void): { update(e: SyncEvent): void; done(): void } {
  let lastDraw = 0;
  let latest: Extract<SyncEvent, { type: 'page' }> | undefined;
  let drawn = true;
  const draw = (e: Extract<SyncEvent, { type: 'page' }>) => {
    const width = 30;
    const ratio = e.itemsTotal > 0 ? Math.min(1, e.seen / e.itemsTotal) : 1;
    const filled = Math.round(ratio * width);
    write(`\r${e.entity.padEnd(8)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${e.seen}/${e.itemsTotal}   `);
    drawn = true;
  };
  const endLine = () => {
    if (!latest) return;
    if (!drawn) draw(latest);
    write('\n');
    latest = undefined;
  };
  return {
    update(e) {
      if (e.type !== 'page') return;
      if (latest && latest.entity !== e.entity) endLine();
      latest = e;
      drawn = false;
      const now = Date.now();
      if (now - lastDraw < 100 && e.seen < e.itemsTotal) return;
      lastDraw = now;
      draw(e);
    },
    done: endLine,
  };
}

const entityLine = (entity: Entity, r: EntityReport) =>
  `${entity.padEnd(8)} ${r.count} in the sink (${r.seen} received, ${r.written} written, ${r.duplicates} duplicates, ${r.invalid} invalid${r.anomalies ? `, ${r.anomalies} anomalies` : ''}${r.stubs ? `; ids-only list: ${r.fetchedById} fetched by ID` : ''})`;

/**
 * The `--json` line of DESIGN.md's CLI contract, its members first and in its order; then the
 * added ones: per entity `normalised` (how many normalisations) and `fetchedById`, and the
 * normalisations of both entities by kind.
 */
export function jsonLine(report: SyncReport): string {
  const e = (r: EntityReport) => ({ count: r.count, duplicates: r.duplicates, invalid: r.invalid, normalised: totalNormalisations(r.normalised), fetchedById: r.fetchedById });
  return JSON.stringify({ ok: report.ok, products: e(report.products), orders: e(report.orders), requests: report.requests, retries: report.retries, durationMs: report.durationMs, normalisations: report.normalised });
}

/** One warning line per entity with normalisations: `warning: products: 280 normalised (string-from-number 280, …)`. */
export function normalisationWarnings(report: SyncReport): string[] {
  const line = (entity: Entity, counts: NormalisationCounts) => {
    const kinds = Object.entries(counts).sort(([, a], [, b]) => (b ?? 0) - (a ?? 0));
    return `warning: ${entity}: ${totalNormalisations(counts)} normalised (${kinds.map(([k, n]) => `${k} ${n}`).join(', ')}); see docs/client.md "The tolerant reader"`;
  };
  return (['products', 'orders'] as const).filter((e) => totalNormalisations(report[e].normalised) > 0).map((e) => line(e, report[e].normalised));
}

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const parsed = parse(args, process.env);
  if (typeof parsed === 'string') {
    io.err(`storebridge sync: ${parsed}\n\n${HELP}`);
    return 2;
  }
  let client;
  try {
    client = createStoreClient({
      baseUrl: parsed.baseUrl,
      urls: parsed.urls,
      keyHeaders: parsed.keyHeaders,
      svcKey: parsed.key,
      timeoutMs: parsed.timeoutMs,
      retry: parsed.retries,
      pageSize: parsed.pageSize || undefined,
    });
  } catch (err) {
    io.err(`storebridge sync: ${(err as Error).message}`);
    return 2;
  }
  let sink;
  try {
    sink = await openAdapter(parsed.into);
  } catch (err) {
    io.err(`storebridge sync: --into: ${(err as Error).message}`);
    return 2;
  }
  if (parsed.state && parsed.into === 'memory') {
    io.err('storebridge sync: note: --state with the memory sink (no --into): the sink is not kept between runs, so a resumed or incremental run holds only what it wrote itself');
  }
  const controller = new AbortController();
  void io.shutdownSignal().then(() => controller.abort());
  const bar = process.stderr.isTTY ? progressBar((s) => void process.stderr.write(s)) : undefined;
  let report: SyncReport;
  try {
    report = await runSync({
      connectionId: parsed.connection,
      client,
      sink,
      checkpoints: parsed.state ? new JsonFileCheckpointStore(parsed.state) : new MemoryCheckpointStore(),
      mode: parsed.incremental ? 'incremental' : 'full',
      strategy: parsed.strategy,
      concurrency: parsed.concurrency,
      byIdConcurrency: parsed.byIdConcurrency,
      signal: controller.signal,
      onEvent: (e) => bar?.update(e),
    });
  } finally {
    bar?.done();
    await sink.close?.();
  }
  for (const x of report.invalidItems.slice(0, 10)) io.err(`invalid ${x.entity} ${x._id ? `"${x._id}"` : `#${x.index}`}: ${x.error}`);
  for (const a of report.anomalies.slice(0, 10)) io.err(`anomaly in ${a.entity}: ${JSON.stringify(a)}`);
  for (const w of normalisationWarnings(report)) io.err(w);
  if (report.error) io.err(`storebridge sync: stopped: ${report.error.message}`);
  if (parsed.json) io.out(jsonLine(report));
  else {
    io.out(entityLine('products', report.products));
    io.out(entityLine('orders', report.orders));
    io.out(`job ${report.jobid}: ${report.requests} requests, ${report.retries} retries, ${report.durationMs} ms — ${report.ok ? 'ok' : 'NOT OK'}`);
  }
  return report.ok ? 0 : 1;
}
