/**
 * `storebridge check URL --key K [--json] [--writes]`
 *
 * Runs the endpoint conformance checks (`lib/conformance/endpoint-checker.ts`) against any store
 * and prints a table, or with `--json` one line `{"ok":bool,"checks":[{"name","ok","detail"}]}`
 * last on stdout. Exits non-zero when any check fails. Write probes only with `--writes`.
 */
import { parseArgs } from 'node:util';
import { intArg, missingSecret, secretArg } from '../args';
import type { CliIO } from '../io';
import { checkEndpoints, type CheckReport } from '../../conformance/endpoint-checker';

export const HELP = `usage: storebridge check URL --key K [options]

Checks a store's endpoints (URL/products, URL/orders) against the connector interface.

options:
  --key K              the SvcKey the store expects (or set STOREBRIDGE_KEY); never printed
  --json               print {"ok":bool,"checks":[{"name","ok","detail"}]} as the last stdout line
  --writes             also probe add/update order: creates and updates one test order
                       ("storebridge-check-…") and sends one bad order that must be refused
  --page-size N        ask for N items per page with the limit parameter; 0 sends none (default 100)
  --timeout MS         per-request time limit (default 60000, the spec's processing limit)
  -h, --help           this text

Exit status: 0 when every check passes, 1 when any fails, 2 on a usage error.`;

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        key: { type: 'string' },
        json: { type: 'boolean' },
        writes: { type: 'boolean' },
        'page-size': { type: 'string' },
        timeout: { type: 'string' },
      },
    }));
  } catch (err) {
    io.err(`storebridge check: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const usage = (msg: string) => (io.err(`storebridge check: ${msg}\n\n${HELP}`), 2);
  if (positionals.length !== 1) return usage('exactly one store URL is required');
  const key = secretArg(values.key, process.env, 'STOREBRIDGE_KEY');
  if (!key) return usage(missingSecret('--key K', 'STOREBRIDGE_KEY'));
  const pageSize = intArg('page-size', values['page-size'], { min: 0, max: 100_000, fallback: 100 });
  const timeoutMs = intArg('timeout', values.timeout, { min: 1, max: 3_600_000, fallback: 60_000 });
  if (typeof pageSize === 'string') return usage(pageSize);
  if (typeof timeoutMs === 'string') return usage(timeoutMs);
  const controller = new AbortController();
  void io.shutdownSignal().then(() => controller.abort());
  let report: CheckReport;
  const width = 34;
  try {
    report = await checkEndpoints({
      baseUrl: positionals[0],
      svcKey: key,
      writes: Boolean(values.writes),
      timeoutMs,
      pageSize: pageSize || undefined,
      signal: controller.signal,
      onCheck: values.json ? undefined : (c) => io.out(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name.padEnd(width)} ${c.detail}`),
    });
  } catch (err) {
    io.err(`storebridge check: ${(err as Error).message}`);
    return 2;
  }
  if (values.json) io.out(JSON.stringify({ ok: report.ok, checks: report.checks }));
  else io.out(summaryOf(report.checks));
  return report.ok ? 0 : 1;
}

/** Names the failures when they are few; says what went wrong when one cause failed them all. */
function summaryOf(checks: CheckReport['checks']): string {
  const failed = checks.filter((c) => !c.ok);
  const names = failed.length > 0 && failed.length <= MAX_NAMED_FAILURES ? `: ${failed.map((c) => c.name).join(', ')}` : '';
  const lines = [`\n${checks.length} checks, ${failed.length} failed${names}`];
  if (failed.length > 0 && failed.every((c) => /network failure|timed out/.test(c.detail))) {
    lines.push('The store could not be reached: is the URL right and the store up? (every check failed on the connection)');
  } else if (failed.length > MAX_NAMED_FAILURES && failed.filter((c) => /\b401\b/.test(c.detail)).length * 2 > failed.length) {
    lines.push('The store refused the key (HTTP 401) on most requests that carried it: is --key the key this store expects?');
  }
  return lines.join('\n');
}

/** Past this many failures the summary gives their count, not their names (each has its line above). */
const MAX_NAMED_FAILURES = 8;
