/**
 * `storebridge sync URL --key K [--into ADAPTER] [--json] [options]`, or with one URL per entity
 * `storebridge sync --products-url U [--orders-url U] --key K …` (a deployed connection's
 * `{{URI_PRODUCTS}}` and `{{URI_ORDERS}}`, which may carry their own query; a connection given
 * only one of them covers that entity alone).
 *
 * Pulls every product and order from the store into a sink adapter. With `--json` the last stdout
 * line is the report docs/sync.md documents (a contract scripts depend on: members are only added). The key may come from
 * `STOREBRIDGE_KEY`; it is never printed.
 */
import { ADAPTER_SPEC_HELP, openAdapter } from '../adapter-spec';
import { defineCommand, flagProblem, runCommand, usageError, type FlagValues, type ParsedArgs } from '../flags';
import type { CliIO } from '../io';
import { createStoreClient } from '../../client/store-client';
import { JsonFileCheckpointStore, MemoryCheckpointStore } from '../../sync/checkpoint-store';
import { JsonFileSyncHealth, runsFileBeside } from '../../sync/file-sync-health';
import { runObservation } from '../../sync/sync-observer';
import { runSync, type EntityReport, type SyncEvent, type SyncReport } from '../../sync/sync-run';
import { MAX_LISTED } from '../../sync/sync-run-context';
import { totalNormalisations, type NormalisationCounts } from '../../client/store-reply';
import type { StoreClientOptions } from '../../client/client-options';
import { STORE_FLAGS, STORE_OPTION_FLAGS, storeTarget } from './store-flags';
import type { Entity } from '../../contract/entities';
import { messageChain } from '../../logger';
import { emptyProgress, UNKNOWN_COUNT } from '../../sync/sync-run-context';
import { ENTITIES } from '../../contract/entities';

export const command = defineCommand({
  name: 'sync',
  usage: 'URL --key K [options]\n       storebridge sync --products-url U [--orders-url U] --key K [options]',
  summary: "Pulls every product and order from the store at URL (URL/products, URL/orders), or from the connection's URL per entity (products only with --products-url alone), into a sink.",
  positionals: { name: 'URL', min: 0, max: 1 },
  flags: {
    ...STORE_FLAGS,
    into: { type: 'string', metavar: 'ADAPTER', default: 'memory', help: `the sink: ${ADAPTER_SPEC_HELP}` },
    json: { type: 'boolean', help: 'print the run report as one JSON line, last on stdout' },
    state: {
      type: 'string',
      metavar: 'FILE',
      help: 'keep jobid, high water and checkpoints in this JSON file: a run that is interrupted resumes where it stopped (default: none, jobid starts at 1); use it with a kept sink (--into sqlite:FILE, …), not the memory one. Each run\'s report goes beside it (FILE.json → FILE.runs.json, the last 50 per connection), for storebridge dashboard --state FILE',
    },
    connection: { type: 'string', metavar: 'NAME', help: "the connection's name in the state file (default: the URL's host)" },
    incremental: { type: 'boolean', help: "walk desc and stop at the last run's high water (needs --state); a checkpoint of a full run is set aside for a fresh incremental job, and the other way round" },
    'max-resumes': { type: 'int', min: 0, max: 1000, default: 3, help: 'with --state: resumed runs of one job that may fail before the next run starts a fresh job (0: never resume)' },
    strategy: { type: 'string', metavar: 'S', choices: ['auto', 'offset', 'cursor'], default: 'auto', help: 'auto | offset | cursor; auto follows next when the store gives one' },
    'page-size': { type: 'int', min: 0, max: 100_000, default: 100, help: 'ask for N items per page with the limit parameter; 0 sends none' },
    concurrency: { type: 'int', min: 1, max: 64, default: 1, help: 'parallel offset pages once itemsTotal is known' },
    timeout: { type: 'int', min: 1, max: 3_600_000, default: 60_000, unit: 'ms', metavar: 'MS', help: "per-request time limit, the spec's by default" },
    retries: { type: 'int', min: 0, max: 100, default: 3, help: 'retries per request on network errors, timeouts, 5xx, 429' },
    'by-id-concurrency': { type: 'int', min: 1, max: 64, default: 8, help: 'by-ID reads at once when a store lists ids only' },
  },
  epilogue: `What the reader had to normalise (numbers sent as strings, epoch-ms dates, next: "", placeholder
totals, …) is printed as warnings on stderr and counted in the report; it does not fail the run.

Exit status: 0 when the run completed and the store behaved, 1 otherwise, 2 on a usage error.`,
});

export const HELP = command.help();

interface SyncArgs {
  client: StoreClientOptions;
  values: FlagValues<typeof command.spec.flags>;
  connection: string;
}

/** The run's settings from the parsed flags; or a usage message. */
function settingsOf({ values, positionals }: ParsedArgs<typeof command.spec.flags>): SyncArgs | string {
  const target = storeTarget(positionals, values);
  if (typeof target === 'string') return target;
  if (values.incremental && !values.state) return '--incremental needs --state FILE (the high water of the last run is kept there)';
  return {
    client: {
      baseUrl: target.baseUrl,
      urls: target.urls,
      keyHeaders: target.keyHeaders,
      svcKey: values.key,
      timeoutMs: values.timeout,
      retry: values.retries,
      pageSize: values.pageSize || undefined,
    },
    values,
    connection: values.connection ?? target.host,
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
    const known = e.totalKnown !== false;
    const ratio = !known ? 0 : e.itemsTotal > 0 ? Math.min(1, e.seen / e.itemsTotal) : 1;
    const filled = Math.round(ratio * width);
    write(`\r${e.entity.padEnd(8)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${e.seen}/${known ? e.itemsTotal : '?'}   `);
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
      if (now - lastDraw < 100 && (e.totalKnown === false || e.seen < e.itemsTotal)) return;
      lastDraw = now;
      draw(e);
    },
    done: endLine,
  };
}

function entityLine(entity: Entity, r: EntityReport, covered: boolean): string {
  if (!covered) return `${entity.padEnd(8)} not covered by this connection (no ${entity} URL)`;
  const stopped = r.error ? `; stopped: ${r.error.message}` : '';
  return `${entity.padEnd(8)} ${r.count} in the sink (${r.seen} received, ${r.written} written, ${r.duplicates} duplicates, ${r.invalid} invalid${r.anomalies ? `, ${r.anomalies} anomalies` : ''}${r.stubs ? `; ids-only list: ${r.fetchedById} fetched by ID` : ''}${stopped})`;
}

const coveredBy = (report: SyncReport): readonly Entity[] => report.entities ?? ENTITIES;

/**
 * The `--json` line of the CLI contract (docs/sync.md), its original members first and in their order; then the
 * added ones: per entity `normalised` (how many normalisations) and `fetchedById`, the
 * normalisations of both entities by kind, the entities the connection covers, whether the run
 * resumed a job (`resume`: which, since when) or set one aside (`abandoned`), and why it stopped.
 */
export function jsonLine(report: SyncReport): string {
  const e = (r: EntityReport) => ({ count: r.count, duplicates: r.duplicates, invalid: r.invalid, normalised: r.normalised ?? 0, fetchedById: r.fetchedById ?? 0 });
  return JSON.stringify({
    ok: report.ok,
    products: e(report.products),
    orders: e(report.orders),
    requests: report.requests,
    retries: report.retries,
    durationMs: report.durationMs,
    normalisations: report.normalisations ?? {},
    entities: coveredBy(report),
    jobid: report.jobid,
    resumed: report.resumed,
    ...(report.resume ? { resume: report.resume } : {}),
    ...(report.abandoned ? { abandoned: report.abandoned } : {}),
    ...(report.error ? { error: { name: report.error.name, code: report.error.code, message: report.error.message } } : {}),
  });
}

/** The report of a run that could not start (its sink or its state could not be opened): nothing done, counts unknown, and why. */
function notRunReport(connection: string, startedAt: number, err: unknown): SyncReport {
  const entity = (): EntityReport => ({ ...emptyProgress(), count: UNKNOWN_COUNT, normalised: 0, complete: false });
  const { name, code } = err as { name?: unknown; code?: unknown };
  return {
    ok: false,
    connection,
    jobid: 0,
    mode: 'full',
    resumed: false,
    products: entity(),
    orders: entity(),
    requests: 0,
    retries: 0,
    durationMs: Date.now() - startedAt,
    invalidItems: [],
    anomalies: [],
    normalisations: {},
    error: { name: typeof name === 'string' ? name : 'Error', ...(typeof code === 'string' ? { code } : {}), message: messageChain(err) },
  };
}

/** One warning line per entity with normalisations: `warning: products: 280 normalised (string-from-number 280, …)`. */
export function normalisationWarnings(report: SyncReport): string[] {
  const line = (entity: Entity, counts: NormalisationCounts) => {
    const kinds = Object.entries(counts).sort(([, a], [, b]) => (b ?? 0) - (a ?? 0));
    return `warning: ${entity}: ${totalNormalisations(counts)} normalised (${kinds.map(([k, n]) => `${k} ${n}`).join(', ')}); see docs/client.md "The tolerant reader"`;
  };
  return ENTITIES.filter((e) => totalNormalisations(report[e].normalisations ?? {}) > 0).map((e) => line(e, report[e].normalisations ?? {}));
}

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async (parsed) => {
    const settings = settingsOf(parsed);
    if (typeof settings === 'string') return usageError(command, io, settings);
    return syncOnce(settings, io);
  });
}

async function syncOnce({ client: clientOptions, values, connection }: SyncArgs, io: CliIO): Promise<number> {
  let client;
  try {
    client = createStoreClient(clientOptions);
  } catch (err) {
    const problem = flagProblem(err, STORE_OPTION_FLAGS);
    if (problem !== undefined) return usageError(command, io, problem);
    io.err(`storebridge sync: ${(err as Error).message}`);
    return 2;
  }
  let sink;
  const startedAt = Date.now();
  try {
    sink = await openAdapter(values.into);
  } catch (err) {
    io.err(`storebridge sync: --into: ${(err as Error).message}`);
    // A database that cannot be reached (or went away while it was opened) is not a usage error.
    if ((err as { code?: unknown }).code !== 'SQL_CONNECT') return 2;
    if (values.json) io.out(jsonLine(notRunReport(connection, startedAt, err)));
    return 1;
  }
  if (values.state && values.into === 'memory') {
    io.err('storebridge sync: note: --state with the memory sink (no --into): the sink is not kept between runs, so a resumed or incremental run holds only what it wrote itself');
  }
  const controller = new AbortController();
  void io.shutdownSignal().then(() => controller.abort());
  const bar = process.stderr.isTTY ? progressBar((s) => void process.stderr.write(s)) : undefined;
  let report: SyncReport;
  try {
    report = await runSync({
      connectionId: connection,
      client,
      sink,
      checkpoints: values.state ? new JsonFileCheckpointStore(values.state) : new MemoryCheckpointStore(),
      mode: values.incremental ? 'incremental' : 'full',
      maxResumes: values.maxResumes,
      strategy: values.strategy,
      concurrency: values.concurrency,
      byIdConcurrency: values.byIdConcurrency,
      signal: controller.signal,
      onEvent: (e) => bar?.update(e),
    });
  } catch (err) {
    // The run could not start (its state file cannot be read or written, …): still one line, and the --json line.
    io.err(`storebridge sync: ${messageChain(err)}`);
    if (values.json) io.out(jsonLine(notRunReport(connection, startedAt, err)));
    return 1;
  } finally {
    bar?.done();
    await sink.close?.().catch(() => undefined);
  }
  if (values.state) await recordRun(runsFileBeside(values.state), report, startedAt, io);
  printReport(report, values.json, io);
  return report.ok ? 0 : 1;
}

/** Keeps the run's report beside the state file, for `storebridge dashboard --state`; a failure to write it is a note, never the run's failure. */
async function recordRun(file: string, report: SyncReport, startedAt: number, io: CliIO): Promise<void> {
  try {
    await new JsonFileSyncHealth(file).observe(runObservation(report, { startedAt, endedAt: Date.now(), requests: report.requests, retries: report.retries }));
  } catch (err) {
    io.err(`storebridge sync: note: the run report was not kept in ${file}: ${(err as Error).message}`);
  }
}

/** Quarantined items and anomalies printed on stderr; the count of the rest follows. */
const PRINTED = 10;

/** `… and 162 more invalid items (the report lists the first 100)`, when there are more than were printed. */
function andMore(total: number, what: string): string | undefined {
  return total > PRINTED ? `… and ${total - PRINTED} more ${what}${total > MAX_LISTED ? ` (the report lists the first ${MAX_LISTED})` : ''}` : undefined;
}

function printReport(report: SyncReport, json: boolean, io: CliIO): void {
  for (const x of report.invalidItems.slice(0, PRINTED)) io.err(`invalid ${x.entity} ${x._id ? `"${x._id}"` : `#${x.index}`}: ${x.error}`);
  const moreInvalid = andMore(report.products.invalid + report.orders.invalid, 'invalid items');
  if (moreInvalid) io.err(moreInvalid);
  for (const a of report.anomalies.slice(0, PRINTED)) io.err(`anomaly in ${a.entity}: ${JSON.stringify(a)}`);
  const moreAnomalies = andMore(report.products.duplicates + report.products.anomalies + report.orders.duplicates + report.orders.anomalies, 'anomalies');
  if (moreAnomalies) io.err(moreAnomalies);
  for (const w of normalisationWarnings(report)) io.err(w);
  if (report.abandoned) io.err(`storebridge sync: note: job ${report.abandoned.jobid} (since ${report.abandoned.since}) was set aside: ${report.abandoned.reason}; this run is job ${report.jobid}`);
  if (report.error) io.err(`storebridge sync: stopped: ${report.error.message}`);
  if (json) io.out(jsonLine(report));
  else {
    const covered = coveredBy(report);
    io.out(entityLine('products', report.products, covered.includes('products')));
    io.out(entityLine('orders', report.orders, covered.includes('orders')));
    const resumed = report.resume ? ` (resumed, since ${report.resume.since}; resume ${report.resume.resumes})` : '';
    io.out(`job ${report.jobid}${resumed}: ${report.requests} requests, ${report.retries} retries, ${report.durationMs} ms — ${report.ok ? 'ok' : 'NOT OK'}`);
  }
}
