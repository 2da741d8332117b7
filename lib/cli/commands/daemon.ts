/**
 * `storebridge daemon --service URL --connection KEY --adapter SPEC [--dialect D] [--once] [--json]`
 *
 * Runs the store's reverse-connection daemon: it does what the service asks (`GET ping`) until idle.
 * `--once` then exits; with `--json` the last stdout line is
 * `{"ok":bool,"pulled":{"products":n,"orders":n},"failed":n,"failedByEntity":{"products":n,"orders":n},"pushed":{"products":n,"orders":n}}`.
 * The key may come from `STOREBRIDGE_CONNECTION` instead of `--connection`; it is never printed.
 */
import { parseArgs } from 'node:util';
import { DIALECT_NAMES, type DialectName } from '../../contract/dialects';
import { firstProblem, intArg, missingSecret, secretArg } from '../args';
import { ADAPTER_SPEC_HELP, openAdapter } from '../adapter-spec';
import type { CliIO } from '../io';
import { createDaemon, type DaemonEvent, type DaemonReport } from '../../reverse/daemon';

export const HELP = `usage: storebridge daemon --service URL --connection KEY --adapter SPEC [options]

Runs the store's side of the reverse connection: asks the service what it wants (pull items into
the store, push the store's items from where the last push stopped, send a sample), does it, and
polls while the service is idle. It speaks the protocol of Click2Sync's deployed daemons.

options:
  --service URL       the service's base URL, e.g. https://sync.example.com (GET of it must answer 200)
  --connection KEY    the connection key (or set STOREBRIDGE_CONNECTION); never printed
  --adapter SPEC      the store: ${ADAPTER_SPEC_HELP}
  --dialect D         spec (items with strings and ISO dates, acknowledged by _id; default) or
                      click2sync (numbers and epoch-ms dates, acknowledged by sku / orderid)
  --once              stop once the service is idle, print what was done, exit (1 when the run
                      gave up: at once on a 404 (unknown connection key), after 5 failed passes in a
                      row (about 30 s), after 10 passes that changed nothing, or when stopped by
                      Ctrl-C/SIGTERM)
  --json              with --once: print the result as one JSON line, last on stdout
  --poll-ms MS        wait between polls (default 1000; doubles up to 30000 while idle)
  --timeout-ms MS     time-out of each call to the service (default 30000)
  -h, --help          this text

Without --once it runs until Ctrl-C/SIGTERM, stops after the current item and prints the --json
line of everything it did. Exit status: 0; 1 as said under --once; 2 on a usage error.`;

interface Args {
  service: string;
  dialect: DialectName;
  key: string;
  adapter: string;
  once: boolean;
  json: boolean;
  pollMs: number;
  timeoutMs: number;
}

function parse(args: string[], env: NodeJS.ProcessEnv): Args | string {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        service: { type: 'string' },
        connection: { type: 'string' },
        adapter: { type: 'string' },
        dialect: { type: 'string' },
        once: { type: 'boolean' },
        json: { type: 'boolean' },
        'poll-ms': { type: 'string' },
        'timeout-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  const pollMs = intArg('poll-ms', values['poll-ms'], { min: 1, max: 3_600_000, fallback: 1000 });
  const timeoutMs = intArg('timeout-ms', values['timeout-ms'], { min: 1, max: 3_600_000, fallback: 30_000 });
  const problem = firstProblem([pollMs, timeoutMs]);
  if (problem) return problem;
  if (!values.service) return '--service URL is required';
  const key = secretArg(values.connection, env, 'STOREBRIDGE_CONNECTION');
  if (!key) return missingSecret('--connection KEY', 'STOREBRIDGE_CONNECTION');
  if (!values.adapter) return `--adapter is required (${ADAPTER_SPEC_HELP})`;
  if (values.json && !values.once) return '--json needs --once';
  const dialect = values.dialect ?? 'spec';
  if (!(DIALECT_NAMES as readonly string[]).includes(dialect)) return `--dialect must be ${DIALECT_NAMES.join(' or ')}`;
  return { service: values.service, dialect: dialect as DialectName, key, adapter: values.adapter, once: Boolean(values.once), json: Boolean(values.json), pollMs: pollMs as number, timeoutMs: timeoutMs as number };
}

/** A 404 from the service means it does not know the key (DESIGN.md): say so, not just "not found". */
function explain(message: string): string {
  return / answered HTTP 404\b/.test(message) ? `${message} (the service does not know this connection key, or --service is not its base URL)` : message;
}

function describe(e: DaemonEvent, once: boolean): string | undefined {
  switch (e.type) {
    case 'initialized':
    case 'resumed':
      return `${e.type} ${e.kind}${e.entity ? ` (${e.entity})` : ''}`;
    case 'finished':
      return `finished ${e.kind}${e.entity ? ` of ${e.entity}` : ''}`;
    case 'item-failed':
      return `${e.entity} "${e.id}" not stored: ${e.error}`;
    case 'push-item-skipped':
      return `${e.entity} "${e.id}" left out of the push: ${e.reason}`;
    case 'error':
      return `error${once ? '' : ' (retrying)'}: ${explain(e.error)}`;
    default:
      return undefined;
  }
}

function contractLine(r: DaemonReport, ok = r.ok): string {
  return JSON.stringify({ ok, pulled: r.pulled, failed: r.failed, failedByEntity: r.failedByEntity, pushed: r.pushed });
}

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const parsed = parse(args, process.env);
  if (typeof parsed === 'string') {
    io.err(`storebridge daemon: ${parsed}\n\n${HELP}`);
    return 2;
  }
  const stop = io.shutdownSignal();
  const adapter = await openAdapter(parsed.adapter);
  let items = 0;
  const daemon = (() => {
    try {
      return createDaemon({
        serviceUrl: parsed.service,
        connectionKey: parsed.key,
        adapter,
        dialect: parsed.dialect,
        pollIntervalMs: parsed.pollMs,
        requestTimeoutMs: parsed.timeoutMs,
        onEvent: (e) => {
          const line = describe(e, parsed.once);
          if (line && !parsed.json) io.err(`storebridge daemon: ${line}`);
          if ((e.type === 'item-stored' || e.type === 'page-pushed') && io.isTTY && !parsed.json) {
            const before = Math.floor(items / 100);
            items += e.type === 'item-stored' ? 1 : e.items;
            if (Math.floor(items / 100) > before) io.err(`storebridge daemon: ${items} items so far`);
          }
        },
      });
    } catch (err) {
      return err as Error;
    }
  })();
  if (daemon instanceof Error) {
    await adapter.close?.();
    io.err(`storebridge daemon: ${daemon.message}`);
    return 2;
  }
  let code = 0;
  if (parsed.once) {
    // Ctrl-C / SIGTERM: stop after the current item. The run did not reach idle, so it is not ok;
    // the next run goes on where the service says (nothing acknowledged is handed out again).
    let interruptedBy: string | undefined;
    void stop.then((signal) => {
      interruptedBy = signal;
      return daemon.stop();
    });
    const report = await daemon.runOnce();
    const ok = report.ok && interruptedBy === undefined;
    if (parsed.json) io.out(contractLine(report, ok));
    else {
      io.out(
        `pulled ${report.pulled.products} products and ${report.pulled.orders} orders (${report.failedByEntity.products} products and ${report.failedByEntity.orders} orders not stored); ` +
          `pushed ${report.pushed.products} products and ${report.pushed.orders} orders; sample ${report.sampled.products}+${report.sampled.orders}`,
      );
    }
    // Why it is not ok, on stderr (also with --json: the last stdout line stays the report).
    if (interruptedBy) io.err(`storebridge daemon: stopped by ${interruptedBy} before the service was idle; run it again to go on`);
    else if (!report.ok) io.err(`storebridge daemon: gave up: ${explain(report.errors[report.errors.length - 1] ?? 'unknown error')}`);
    code = ok ? 0 : 1;
  } else {
    daemon.start();
    const signal = await stop;
    io.err(`storebridge daemon: ${signal}, stopping after the current item`);
    await daemon.stop();
    io.out(contractLine(daemon.report()));
  }
  await adapter.close?.();
  return code;
}
