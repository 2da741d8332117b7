/**
 * The fault suite's kit: the real CLI processes under test, a tally of answers by kind, recovery
 * timing, and the results table.
 *
 * Each scenario records one row: requests sent, answers by kind (2xx / 4xx / 5xx / reset — a
 * connection dropped or no answer in time), how long the process took to serve again after the
 * fault ended (without a restart, unless the row says so), and items lost (acknowledged, then not
 * found) or doubled (stored twice). The target is 0 lost and 0 doubled everywhere.
 *
 * `npm test` runs the short version; `npm run faults` (STOREBRIDGE_FAULTS=full) the full one, with
 * longer faults, more load and bigger catalogs, and prints the table (`table-reporter.js`).
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createSqlAdapter } from '../../adapters/sql';
import { spawnCli, spawnProcess, type RunningCli } from '../cli/cli-process';

export const FULL = process.env.STOREBRIDGE_FAULTS === 'full';

/** `short` in `npm test`, `full` under `npm run faults`. */
export const scale = <T>(short: T, full: T): T => (FULL ? full : short);

/** How long a cut lasts: 2 s in `npm test`, 7 s (the 6–8 s) under `npm run faults`. */
export const CUT_MS = scale(2_000, 7_000);

/**
 * `--poll-ms` of a `daemon --once` that must outlast a cut: it gives up after 5 failed passes in a
 * row, waiting `poll × 2^n` between them (0.4 + 0.8 + 1.6 + 3.2 s at 200 ms; 15 s at 500 ms).
 */
export const DAEMON_POLL_MS = String(scale(200, 500));

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const KEY = 'fault-suite-key-20';
export const CONNECTION = 'fault-suite-connection-20';

export type AnswerKind = '2xx' | '4xx' | '5xx' | 'reset';

export interface Answer {
  readonly kind: AnswerKind;
  readonly status?: number;
  readonly body?: string;
  readonly ms: number;
}

/** Answers by kind, and the 5xx bodies seen (to check they hold no internals). */
export class Tally {
  readonly counts: Record<AnswerKind, number> = { '2xx': 0, '4xx': 0, '5xx': 0, reset: 0 };
  readonly errorBodies = new Set<string>();

  get requests(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  add(answer: Answer): Answer {
    this.counts[answer.kind]++;
    if (answer.kind === '5xx' && answer.body !== undefined) this.errorBodies.add(answer.body);
    return answer;
  }
}

/** One HTTP request; a dropped connection or no answer within `timeoutMs` is a `reset`. */
export async function send(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<Answer> {
  const t0 = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs ?? 15_000) });
    const body = await res.text();
    const kind: AnswerKind = res.status < 300 ? '2xx' : res.status < 500 ? '4xx' : '5xx';
    return { kind, status: res.status, body, ms: Date.now() - t0 };
  } catch {
    return { kind: 'reset', ms: Date.now() - t0 };
  }
}

export const keyed = (extra: Record<string, string> = {}) => ({ SvcKey: KEY, ...extra });

export const postJson = (url: string, body: unknown, timeoutMs?: number) =>
  send(url, { method: 'POST', headers: keyed({ 'content-type': 'application/json' }), body: JSON.stringify(body), timeoutMs });

/** Polls `probe` every 50 ms until it answers 2xx; the time that took, in ms (throws after `limitMs`). */
export async function recovery(probe: () => Promise<Answer>, limitMs = 60_000): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if ((await probe()).kind === '2xx') return Date.now() - t0;
    if (Date.now() - t0 > limitMs) throw new Error(`no 2xx answer within ${limitMs} ms of the fault's end`);
    await sleep(50);
  }
}

/** A CLI server (`serve`, `reverse-service`) started and listening. */
export interface CliServer extends RunningCli {
  readonly url: string;
  /** Resident memory, in MB (from /proc). */
  rssMb(): number;
  /** SIGKILL, and wait for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM, and wait for the exit; its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `storebridge ARGS` (or `command`, a whole argv that runs it, e.g. inside `unshare`) and
 * waits for its `listening on URL` line.
 */
export async function startServer(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000, command?: string[]): Promise<CliServer> {
  const cli = command ? spawnProcess(command, env) : spawnCli(args, env);
  const t0 = Date.now();
  let url: string | undefined;
  let exited = false;
  void cli.exit.then(() => (exited = true));
  while (!(url = /listening on (http:\/\/\S+)/.exec(cli.stdout())?.[1])) {
    if (exited || Date.now() - t0 > timeoutMs) throw new Error(`${(command ?? args).join(' ')} did not start: ${cli.stderr().slice(-2000)}`);
    await sleep(25);
  }
  const stopWith = async (signal: NodeJS.Signals) => {
    if (!exited) cli.child.kill(signal);
    return cli.exit;
  };
  return {
    ...cli,
    url,
    rssMb: () => rssMb(cli.child.pid!),
    kill9: async () => void (await stopWith('SIGKILL')),
    // A process that does not stop within 10 s of SIGTERM is killed (a clean-up must end).
    stop: async () => {
      const late = setTimeout(() => cli.child.kill('SIGKILL'), 10_000);
      try {
        return await stopWith('SIGTERM');
      } finally {
        clearTimeout(late);
      }
    },
  };
}

export function rssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : 0;
  } catch {
    return 0;
  }
}

/**
 * What a process printed that it must never print: an unhandled 'error' event, Node's stack trace
 * lines, ioredis's "Unhandled error event", the last-resort handler's line.
 */
export function crashTraces(output: string): string[] {
  return output.split('\n').filter((line) => /Unhandled 'error' event|^\s+at .+[(/].+:\d+:\d+\)?$|\[ioredis\] Unhandled|unexpected failure|node:internal/.test(line));
}

/** The last stdout line, as JSON. */
export function lastJsonLine(stdout: string): Record<string, any> {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Record<string, any>;
}

export interface FaultRow {
  readonly scenario: string;
  readonly requests: number;
  readonly answers: Record<AnswerKind, number>;
  /** Time to the first good answer after the fault ended, in ms; `null` when it does not apply. */
  readonly recoveryMs: number | null;
  /** `restart` when recovery needed a new process (kill -9 rows): the time is to its first good answer. */
  readonly restart?: boolean;
  readonly lost: number;
  readonly doubled: number;
  readonly note?: string;
}

const rows: FaultRow[] = [];

const TABLE_HEAD = '| scenario | requests | 2xx | 4xx | 5xx | reset | recovery | lost | doubled | note |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|';

/** One row of the Markdown table (docs/reliability.md's form). */
function tableLine(r: FaultRow): string {
  const recovered = r.recoveryMs === null ? '–' : `${(r.recoveryMs / 1000).toFixed(2)} s${r.restart ? ' (restart)' : ''}`;
  return `| ${r.scenario} | ${r.requests} | ${r.answers['2xx']} | ${r.answers['4xx']} | ${r.answers['5xx']} | ${r.answers.reset} | ${recovered} | ${r.lost} | ${r.doubled} | ${r.note ?? ''} |`;
}

/**
 * Records a scenario's row: printed with this file's others when its tests are done (`printRows`),
 * and, under `npm run faults`, appended to the table the reporter prints at the end.
 */
export function record(row: FaultRow): FaultRow {
  rows.push(row);
  const out = process.env.STOREBRIDGE_FAULTS_OUT;
  if (out) {
    if (!existsSync(out)) appendFileSync(out, `${TABLE_HEAD}\n`);
    appendFileSync(out, `${tableLine(row)}\n`);
  }
  return row;
}

/** This file's rows as a table, once its tests are done. */
export function printRows(): void {
  if (rows.length > 0 && !process.env.STOREBRIDGE_FAULTS_OUT) process.stdout.write(`\n${[TABLE_HEAD, ...rows.map(tableLine)].join('\n')}\n`);
}

/**
 * Writers and readers against a store's webhooks until `stop()`: each writer writes new products
 * with its own ids (`<prefix>-<writer>-<n>`), retry-safe by id; readers read list pages and items.
 * Every answer is tallied; `acknowledged` holds the ids answered 2xx, `unanswered` the others.
 */
const loads = new Set<{ halt(): void }>();

/** Halts every load still running: call it in `afterEach`, so a failed test leaves no writer behind. */
export function haltLoads(): void {
  for (const load of loads) load.halt();
  loads.clear();
}

export function webhookLoad(url: string, o: { writers: number; readers: number; prefix: string; template: Record<string, unknown> }) {
  const tally = new Tally();
  const acknowledged = new Set<string>();
  const unanswered = new Set<string>();
  let running = true;
  // A test that fails before `stop()` must not leave its writers running (jest would never exit):
  // `haltLoads()` in afterEach, and a deadline in any case.
  const deadline = setTimeout(() => (running = false), 10 * 60_000).unref();
  const productBody = (id: string) => ({ ...o.template, _id: id, sku: `SKU-${id}`, title: `fault ${id}` });
  const writer = async (w: number) => {
    for (let n = 0; running; n++) {
      const id = `${o.prefix}-${w}-${n}`;
      const a = tally.add(await postJson(`${url}/products?jobid=1&id=${id}`, productBody(id)));
      if (a.kind === '2xx') acknowledged.add(id);
      else unanswered.add(id);
      if (a.kind !== '2xx') await sleep(20);
    }
  };
  const reader = async () => {
    while (running) {
      const a = tally.add(await send(`${url}/products?jobid=1&sortorder=desc&limit=20`, { headers: keyed() }));
      if (a.kind !== '2xx') await sleep(20);
    }
  };
  const loops = [...Array.from({ length: o.writers }, (_, w) => writer(w)), ...Array.from({ length: o.readers }, () => reader())];
  const load = {
    tally,
    acknowledged,
    unanswered,
    /** Stops the load at once (for a test's clean-up). */
    halt(): void {
      running = false;
      clearTimeout(deadline);
    },
    /** Stops the load, then retries every write that was not answered 2xx (as a caller would) until it is. */
    async stop(): Promise<void> {
      this.halt();
      await Promise.all(loops);
      for (const id of unanswered) {
        for (let attempt = 0; ; attempt++) {
          const a = tally.add(await postJson(`${url}/products?jobid=1&id=${id}`, productBody(id)));
          if (a.kind === '2xx') break;
          if (attempt > 100) throw new Error(`the write of ${id} never succeeded: ${a.status} ${a.body}`);
          await sleep(100);
        }
        acknowledged.add(id);
      }
      unanswered.clear();
    },
  };
  loads.add(load);
  return load;
}

/**
 * Items acknowledged but not readable (lost), and the surplus of the store's `itemsTotal` over the
 * distinct items it should hold (doubled: a row stored or counted twice).
 */
export async function auditWrites(url: string, acknowledged: ReadonlySet<string>, seeded: number): Promise<{ lost: number; doubled: number }> {
  let lost = 0;
  const ids = [...acknowledged];
  for (let i = 0; i < ids.length; i += 16) {
    const answers = await Promise.all(ids.slice(i, i + 16).map((id) => send(`${url}/products/${id}?jobid=1`, { headers: keyed() })));
    lost += answers.filter((a) => a.status !== 200).length;
  }
  const page = await send(`${url}/products?jobid=1&limit=1`, { headers: keyed() });
  const total = (JSON.parse(page.body ?? '{}') as { paging?: { itemsTotal?: number } }).paging?.itemsTotal ?? Number.NaN;
  return { lost, doubled: total - (seeded + acknowledged.size) };
}

/**
 * An HTTP pass-through in front of `target` that tallies every answer by kind: put between a
 * daemon and its service to count the daemon's calls. A failed upstream call resets the client's
 * connection (as the service's own failure would).
 */
export async function countingProxy(target: string): Promise<{ url: string; tally: Tally; close(): Promise<void> }> {
  const http = await import('node:http');
  const t = new URL(target);
  const tally = new Tally();
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const t0 = Date.now();
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      const status = answer.statusCode ?? 0;
      tally.add({ kind: status < 300 ? '2xx' : status < 500 ? '4xx' : '5xx', status, ms: Date.now() - t0 });
      res.writeHead(status, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => {
      tally.add({ kind: 'reset', ms: Date.now() - t0 });
      res.destroy();
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tally,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` every 25 ms until it holds; throws naming `what` after `timeoutMs`. A check that throws counts as false. */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The reverse service's operator view of connection `name` (loopback, no key). */
export async function reverseStatus(url: string, name = 'default'): Promise<Record<string, any>> {
  const res = await fetch(`${url}/connections/${name}/status`, { signal: AbortSignal.timeout(10_000) });
  if (res.status !== 200) throw new Error(`status view answered ${res.status}`);
  return (await res.json()) as Record<string, any>;
}

/**
 * After a daemon's transactions: what its store (a SQL spec) holds and what the service received
 * by push (its status view), each against the catalog's counts. A count below is lost, above doubled.
 */
export async function auditRoundTrip(store: string, view: Record<string, any>, expected: { products: number; orders: number }): Promise<{ lost: number; doubled: number }> {
  const sink = await createSqlAdapter({ connection: store });
  const signal = AbortSignal.timeout(5_000);
  const held = { products: await sink.products.count({ signal }), orders: await sink.orders.count({ signal }) };
  await sink.close();
  let lost = 0;
  let doubled = 0;
  for (const entity of ['products', 'orders'] as const) {
    for (const n of [held[entity], view[entity].received as number]) {
      lost += Math.max(0, expected[entity] - n);
      doubled += Math.max(0, n - expected[entity]);
    }
  }
  return { lost, doubled };
}
