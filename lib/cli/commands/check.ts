/**
 * `storebridge check URL --key K [--json] [--writes] [--strict]`, or with one URL per entity
 * `storebridge check --products-url U --orders-url U --key K …`
 *
 * Runs the endpoint conformance checks (`lib/conformance/endpoint-checker.ts`) against any store
 * and prints a table, or with `--json` one line `{"ok":bool,"checks":[{"name","ok","detail","level"}]}`
 * last on stdout. Exits non-zero when a `must` check fails (with `--strict`: any check). Write
 * probes only with `--writes`.
 */
import { defineCommand, flagProblem, runCommand, usageError, type ParsedArgs } from '../flags';
import type { CliIO } from '../io';
import { checkEndpoints, type CheckReport, type CheckResult, type EndpointCheckOptions } from '../../conformance/endpoint-checker';
import { STORE_FLAGS, STORE_OPTION_FLAGS, storeTarget } from './store-flags';

export const command = defineCommand({
  name: 'check',
  usage: 'URL --key K [options]\n       storebridge check --products-url U --orders-url U --key K [options]',
  summary:
    "Checks a store's endpoints (URL/products, URL/orders, or the connection's URL per entity) against the connector interface. Each check is a \"must\" (the interface's own rules) or a \"should\" (hardening, and what the deployed Click2Sync service relies on: C2SKey, ?id=, optional sortorder and jobid). A failed \"should\" is a warning.",
  positionals: { name: 'URL', min: 0, max: 1 },
  flags: {
    ...STORE_FLAGS,
    json: { type: 'boolean', help: 'print {"ok":bool,"checks":[{"name","ok","detail","level"}]} as the last stdout line' },
    strict: { type: 'boolean', help: 'failed "should" checks fail the run too' },
    writes: { type: 'boolean', help: 'also probe add/update order: creates and updates one test order ("storebridge-check-…") and sends one bad order that must be refused' },
    'page-size': { type: 'int', min: 0, max: 100_000, default: 100, help: 'ask for N items per page with the limit parameter; 0 sends none' },
    timeout: { type: 'int', min: 1, max: 3_600_000, default: 60_000, unit: 'ms', metavar: 'MS', help: "per-request time limit, the spec's processing limit by default" },
  },
  epilogue: 'Exit status: 0 when every "must" check passes (with --strict: every check), 1 otherwise, 2 on a usage error.',
});

export const HELP = command.help();

type CheckArgs = Omit<EndpointCheckOptions, 'onCheck' | 'signal'> & { json: boolean };

/** The checker's options from the parsed flags; or a usage message. */
function optionsOf({ values, positionals }: ParsedArgs<typeof command.spec.flags>): CheckArgs | string {
  const target = storeTarget(positionals, values);
  if (typeof target === 'string') return target;
  return {
    baseUrl: target.baseUrl,
    urls: target.urls,
    keyHeaders: target.keyHeaders,
    svcKey: values.key,
    json: values.json,
    strict: values.strict,
    writes: values.writes,
    timeoutMs: values.timeout,
    pageSize: values.pageSize || undefined,
  };
}

const WIDTH = 34;
const mark = (c: CheckResult) => (c.ok ? 'PASS' : c.level === 'must' ? 'FAIL' : 'WARN');

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async (parsed) => {
    const options = optionsOf(parsed);
    if (typeof options === 'string') return usageError(command, io, options);
    return checkOnce(options, io);
  });
}

async function checkOnce({ json, ...options }: CheckArgs, io: CliIO): Promise<number> {
  const controller = new AbortController();
  void io.shutdownSignal().then(() => controller.abort());
  let report: CheckReport;
  try {
    report = await checkEndpoints({ ...options, signal: controller.signal, onCheck: json ? undefined : (c) => io.out(`${mark(c)}  ${c.name.padEnd(WIDTH)} ${c.detail}`) });
  } catch (err) {
    const problem = flagProblem(err, { ...STORE_OPTION_FLAGS, writes: '--writes' });
    if (problem !== undefined) return usageError(command, io, problem);
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
