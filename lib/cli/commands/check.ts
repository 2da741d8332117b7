/**
 * `storebridge check URL --key K [--json] [--writes] [--strict]`, or with one URL per entity
 * `storebridge check --products-url U --orders-url U --key K …`
 *
 * Runs the endpoint conformance checks (`lib/conformance/endpoint-checker.ts`) against any store
 * and prints a table, or with `--json` one line `{"ok":bool,"checks":[{"name","ok","detail","level"}]}`
 * last on stdout. Exits non-zero when a `must` check fails (with `--strict`: any check). Write
 * probes only with `--writes`.
 */
import { parseArgs } from 'node:util';
import { intArg, missingSecret, secretArg } from '../args';
import type { CliIO } from '../io';
import { checkEndpoints, type CheckReport, type CheckResult, type EndpointCheckOptions } from '../../conformance/endpoint-checker';
import { KEY_HEADERS_HELP, keyHeadersArg, STORE_FLAG_OPTIONS, STORE_URLS_HELP, storeLocation } from './store-flags';

export const HELP = `usage: storebridge check URL --key K [options]
       storebridge check --products-url U --orders-url U --key K [options]

Checks a store's endpoints (URL/products, URL/orders, or the connection's URL per entity) against
the connector interface. Each check is a "must" (the interface's own rules) or a "should"
(hardening, and what the deployed Click2Sync service relies on: C2SKey, ?id=, optional sortorder
and jobid). A failed "should" is a warning.

options:
  --key K              the key the store expects (or set STOREBRIDGE_KEY); never printed
${STORE_URLS_HELP}
${KEY_HEADERS_HELP}
  --json               print {"ok":bool,"checks":[{"name","ok","detail","level"}]} as the last stdout line
  --strict             failed "should" checks fail the run too
  --writes             also probe add/update order: creates and updates one test order
                       ("storebridge-check-…") and sends one bad order that must be refused
  --page-size N        ask for N items per page with the limit parameter; 0 sends none (default 100)
  --timeout MS         per-request time limit (default 60000, the spec's processing limit)
  -h, --help           this text

Exit status: 0 when every "must" check passes (with --strict: every check), 1 otherwise, 2 on a
usage error.`;

type CheckArgs = Omit<EndpointCheckOptions, 'onCheck' | 'signal'> & { json: boolean };

function parse(args: string[]): CheckArgs | string {
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
        json: { type: 'boolean' },
        strict: { type: 'boolean' },
        writes: { type: 'boolean' },
        'page-size': { type: 'string' },
        timeout: { type: 'string' },
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  const where = storeLocation(positionals, values['products-url'], values['orders-url']);
  if (typeof where === 'string') return where;
  const keyHeaders = keyHeadersArg(values['key-headers']);
  if (keyHeaders && !Array.isArray(keyHeaders)) return keyHeaders.error;
  const key = secretArg(values.key, process.env, 'STOREBRIDGE_KEY');
  if (!key) return missingSecret('--key K', 'STOREBRIDGE_KEY');
  const pageSize = intArg('page-size', values['page-size'], { min: 0, max: 100_000, fallback: 100 });
  const timeoutMs = intArg('timeout', values.timeout, { min: 1, max: 3_600_000, fallback: 60_000 });
  if (typeof pageSize === 'string') return pageSize;
  if (typeof timeoutMs === 'string') return timeoutMs;
  return {
    baseUrl: where.baseUrl,
    urls: where.urls,
    keyHeaders,
    svcKey: key,
    json: Boolean(values.json),
    strict: Boolean(values.strict),
    writes: Boolean(values.writes),
    timeoutMs,
    pageSize: pageSize || undefined,
  };
}

const WIDTH = 34;
const mark = (c: CheckResult) => (c.ok ? 'PASS' : c.level === 'must' ? 'FAIL' : 'WARN');

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const parsed = parse(args);
  if (typeof parsed === 'string') {
    io.err(`storebridge check: ${parsed}\n\n${HELP}`);
    return 2;
  }
  const { json, ...options } = parsed;
  const controller = new AbortController();
  void io.shutdownSignal().then(() => controller.abort());
  let report: CheckReport;
  try {
    report = await checkEndpoints({ ...options, signal: controller.signal, onCheck: json ? undefined : (c) => io.out(`${mark(c)}  ${c.name.padEnd(WIDTH)} ${c.detail}`) });
  } catch (err) {
    io.err(`storebridge check: ${(err as Error).message}`);
    return 2;
  }
  if (json) io.out(JSON.stringify({ ok: report.ok, checks: report.checks.map(({ name, ok, detail, level }) => ({ name, ok, detail, level })) }));
  else io.out(summaryOf(report, Boolean(options.strict)));
  return report.ok ? 0 : 1;
}

/** Past this many failures the summary gives their count, not their names (each has its line above). */
const MAX_NAMED_FAILURES = 8;

/** Names the failures and warnings when they are few; says what went wrong when one cause failed them all. */
export function summaryOf(report: CheckReport, strict: boolean): string {
  const { checks } = report;
  const failures = checks.filter((c) => !c.ok && (strict || c.level === 'must'));
  const warnings = checks.filter((c) => !c.ok && !strict && c.level === 'should');
  const names = (list: CheckResult[]) => (list.length > 0 && list.length <= MAX_NAMED_FAILURES ? `: ${list.map((c) => c.name).join(', ')}` : '');
  const lines = [`\n${checks.length} checks, ${failures.length} failed${names(failures)}`];
  if (warnings.length) lines.push(`${warnings.length} warning${warnings.length === 1 ? '' : 's'} (should)${names(warnings)}; --strict makes them fail`);
  const notOk = checks.filter((c) => !c.ok);
  if (notOk.length > 0 && notOk.every((c) => /network failure|timed out/.test(c.detail))) {
    lines.push('The store could not be reached: is the URL right and the store up? (every check failed on the connection)');
  } else if (notOk.length > MAX_NAMED_FAILURES && notOk.filter((c) => /\b401\b|refused the key/.test(c.detail)).length * 2 > notOk.length) {
    lines.push('The store refused the key (HTTP 401) on most requests that carried it: is --key the key this store expects?');
  }
  return lines.join('\n');
}
