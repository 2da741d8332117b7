/**
 * `storebridge daemon --service URL --connection KEY --adapter SPEC [--dialect D] [--once] [--json]`
 *
 * Runs the store's reverse-connection daemon: it does what the service asks (`GET ping`) until idle.
 * `--once` then exits; with `--json` the last stdout line is
 * `{"ok":bool,"pulled":{"products":n,"orders":n},"failed":n,"failedByEntity":{"products":n,"orders":n},"pushed":{"products":n,"orders":n}}`.
 * The key may come from `--connection-file` or `STOREBRIDGE_CONNECTION`; it is never printed.
 */
import type { StoreAdapter } from '../../adapter';
import { DIALECT_NAMES, type DialectName } from '../../contract/dialects';
import { ADAPTER_SPEC_HELP, openAdapter } from '../adapter-spec';
import { defineCommand, flagProblem, runCommand, usageError, type ParsedArgs } from '../flags';
import type { CliIO } from '../io';
import { createDaemon, type Daemon, type DaemonEvent, type DaemonReport } from '../../reverse/daemon';

export const command = defineCommand({
  name: 'daemon',
  usage: '--service URL --connection-file FILE --adapter SPEC [options]',
  summary:
    "Runs the store's side of the reverse connection: asks the service what it wants (pull items into the store, push the store's " +
    'items from where the last push stopped, send a sample), does it, and polls while the service is idle. It speaks the protocol ' +
    "of Click2Sync's deployed daemons.",
  flags: {
    service: { type: 'string', required: true, metavar: 'URL', help: "the service's base URL, e.g. https://sync.example.com (GET of it must answer 200)" },
    connection: { type: 'secret', env: 'STOREBRIDGE_CONNECTION', required: true, metavar: 'KEY', help: 'the connection key' },
    adapter: { type: 'string', required: true, metavar: 'SPEC', help: `the store: ${ADAPTER_SPEC_HELP}` },
    dialect: {
      type: 'string',
      choices: DIALECT_NAMES,
      default: 'spec',
      metavar: 'D',
      help: 'spec (items with strings and ISO dates, acknowledged by _id) or click2sync (numbers and epoch-ms dates, acknowledged by sku / orderid)',
    },
    once: {
      type: 'boolean',
      help:
        'stop once the service is idle, print what was done, exit (1 when the run gave up: at once on a 404 (unknown connection key), ' +
        'after 5 failed passes in a row (about 30 s), after 10 passes that changed nothing, or when stopped by Ctrl-C/SIGTERM)',
    },
    json: { type: 'boolean', help: 'with --once: print the result as one JSON line, last on stdout' },
    'poll-ms': { type: 'int', min: 1, max: 3_600_000, default: 1000, metavar: 'MS', help: 'wait between polls (doubles up to 30000 while idle)' },
    'timeout-ms': { type: 'int', min: 1, max: 3_600_000, default: 30_000, metavar: 'MS', help: 'time-out of each call to the service' },
  },
  epilogue:
    'Without --once it runs until Ctrl-C/SIGTERM, stops after the current item and prints the --json\n' +
    'line of everything it did.\n' +
    'Exit status: 0; 1 as said under --once; 2 on a usage error.',
});

export const HELP = command.help();

type Args = ParsedArgs<typeof command.spec.flags>['values'];

/** A 404 from the service means it does not know the key (docs/reverse-connection.md): say so, not just "not found". */
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

/** The daemon, with its progress lines on stderr (never with --json). */
function makeDaemon(parsed: Args, adapter: StoreAdapter, io: CliIO): Daemon {
  let items = 0;
  return createDaemon({
    serviceUrl: parsed.service,
    connectionKey: parsed.connection,
    adapter,
    dialect: parsed.dialect as DialectName,
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
}

/** `--once`: until idle. Ctrl-C / SIGTERM stops after the current item; the run is then not ok (the next run goes on). */
async function once(daemon: Daemon, parsed: Args, io: CliIO, stop: Promise<string>): Promise<number> {
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
  return ok ? 0 : 1;
}

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async ({ values: parsed }) => {
    if (parsed.json && !parsed.once) return usageError(command, io, '--json needs --once');
    const stop = io.shutdownSignal();
    const adapter = await openAdapter(parsed.adapter);
    let daemon: Daemon;
    try {
      daemon = makeDaemon(parsed, adapter, io);
    } catch (err) {
      await adapter.close?.();
      // createDaemon checks the values; its option errors name the flag (a usage error).
      const problem = flagProblem(err, { serviceUrl: '--service', connectionKey: '--connection', pollIntervalMs: '--poll-ms', requestTimeoutMs: '--timeout-ms' });
      if (problem !== undefined) return usageError(command, io, problem);
      io.err(`storebridge daemon: ${(err as Error).message}`);
      return 2;
    }
    let code = 0;
    if (parsed.once) code = await once(daemon, parsed, io, stop);
    else {
      daemon.start();
      const signal = await stop;
      io.err(`storebridge daemon: ${signal}, stopping after the current item`);
      await daemon.stop();
      io.out(contractLine(daemon.report()));
    }
    await adapter.close?.();
    return code;
  });
}
