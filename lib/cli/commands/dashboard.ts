/**
 * `storebridge dashboard [--port P] [--redis URL | --state FILE] [--reverse URL]… [--token-env ENV]`
 *
 * Serves the operator dashboard and prints `dashboard on http://HOST:PORT` once ready. Loopback
 * only unless an operator token is given (from an environment variable: never on the command line,
 * never printed).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { defineCommand, flagProblem, runCommand, usageError, type FlagValues } from '../flags';
import type { CliIO } from '../io';
import type { ReverseSource, SyncSource } from '../../dashboard/dashboard-sources';
import { MIN_TOKEN_LENGTH } from '../../dashboard/dashboard-security';
import { limitedServer, SERVER_LIMITS_HELP, SERVER_TIMEOUTS } from '../../host/store-server';

const SOURCES = 'sources (at least one)';

export const command = defineCommand({
  name: 'dashboard',
  usage: '[--port P] [--redis URL | --state FILE] [--reverse URL]... [options]',
  summary:
    "Serves an HTML dashboard of the sync service's connections (last run, items, errors, next run, run history; Run now, Pause, Resume) and of reverse services (state, queue, counts, failures; Fetch updates, Send updates), and prints \"dashboard on http://HOST:PORT\" once ready.",
  flags: {
    redis: {
      type: 'string',
      metavar: 'URL',
      section: SOURCES,
      help: "the sync service's Redis: health, run history and BullMQ schedules, with Run now / Pause / Resume and the raw jobs view at /jobs/ (needs bullmq and ioredis; the jobs view needs @bull-board/api and @bull-board/express)",
    },
    prefix: { type: 'string', metavar: 'P', section: SOURCES, help: "the sync queue's BullMQ key prefix (default storebridge)" },
    queue: { type: 'string', metavar: 'NAME', section: SOURCES, help: "the sync queue's name (default sync)" },
    state: { type: 'string', metavar: 'FILE', section: SOURCES, help: 'a "storebridge sync --state FILE" checkpoint file (one machine; read-only)' },
    reverse: { type: 'list', metavar: 'URL', section: SOURCES, help: "a reverse service's base URL (its operator routes answer loopback clients, so run the dashboard on its machine)" },
    port: { type: 'int', metavar: 'P', min: 0, max: 65535, default: 0, help: 'port to listen on; 0 picks a free one' },
    host: { type: 'string', metavar: 'H', default: '127.0.0.1', help: 'address to listen on; any other than loopback needs --token-env' },
    'token-env': {
      type: 'string',
      metavar: 'ENV',
      help: `require the operator token held in environment variable ENV (at least ${MIN_TOKEN_LENGTH} characters): browsers log in once, scripts send "Authorization: Bearer TOKEN"`,
    },
    title: { type: 'string', metavar: 'T', help: "the page's title (default storebridge)" },
    'refresh-ms': { type: 'int', metavar: 'MS', min: 0, max: 3_600_000, default: 5_000, help: 'how often the page refreshes itself; 0: never' },
    'no-jobs': { type: 'boolean', help: 'do not mount the raw jobs view (bull-board)' },
    'jobs-writable': { type: 'boolean', help: 'let the jobs view retry, promote, clean and remove jobs (default read-only)' },
  },
  epilogue: SERVER_LIMITS_HELP,
});

export const HELP = command.help();

type Args = FlagValues<typeof command.spec.flags> & { token?: string };

const LOOPBACK_LISTEN = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|::1)$/i;

/**
 * The checks across flags; a string is the usage message. The values themselves (the Redis URL,
 * prefix and queue name, the token, the title) are checked by the factories they go to
 * (`createRedisSyncSource`, `createDashboardRouter`), whose option errors name the flag (`FLAG_OF`).
 */
function check(v: FlagValues<typeof command.spec.flags>, env: NodeJS.ProcessEnv): Args | string {
  if (v.redis !== undefined && v.state !== undefined) return 'give --redis or --state, not both';
  if ((v.prefix !== undefined || v.queue !== undefined) && v.redis === undefined) return '--prefix and --queue go with --redis';
  if (v.redis === undefined && v.state === undefined && v.reverse.length === 0) return 'nothing to show: give --redis URL, --state FILE or --reverse URL';
  let token: string | undefined;
  const tokenEnv = v.tokenEnv;
  if (tokenEnv !== undefined) {
    // The value is never echoed: it may be the token itself, passed by mistake.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) return '--token-env must name an environment variable (letters, digits, _), not hold a value';
    token = env[tokenEnv];
    if (!token) return `--token-env: environment variable ${tokenEnv} is not set or empty`;
  }
  if (!LOOPBACK_LISTEN.test(v.host) && !token) return `listening on ${v.host} (not loopback) needs an operator token: --token-env ENV`;
  return { ...v, token };
}

/** The flag that set each factory option (`flagProblem`): a bad value is a usage error naming the flag. */
const flagOf = (a: Args): Record<string, string> => ({
  connection: '--redis',
  prefix: '--prefix',
  queueName: '--queue',
  token: `--token-env: the token in ${a.tokenEnv}`,
  title: '--title',
  refreshMs: '--refresh-ms',
});

/** The sources named on the command line; `usage`: a bad flag value, `problem`: another one-line problem to print. */
function openSources(a: Args): { sync?: SyncSource; reverse: ReverseSource[] } | { usage: string } | { problem: string } {
  const d = require('../../dashboard') as typeof import('../../dashboard');
  try {
    const reverse = a.reverse.map((url) => d.createReverseHttpSource(url));
    let sync: SyncSource | undefined;
    if (a.state !== undefined) sync = d.createStateFileSource(a.state);
    if (a.redis !== undefined) sync = d.createRedisSyncSource({ connection: a.redis, ...(a.prefix ? { prefix: a.prefix } : {}), ...(a.queue ? { queueName: a.queue } : {}) });
    return { sync, reverse };
  } catch (err) {
    const usage = flagProblem(err, flagOf(a));
    return usage !== undefined ? { usage } : { problem: (err as Error).message };
  }
}

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async ({ values }) => {
    const parsed = check(values, process.env);
    if (typeof parsed === 'string') return usageError(command, io, parsed);
    return serve(parsed, io);
  });
}

async function serve(parsed: Args, io: CliIO): Promise<number> {
  const stop = io.shutdownSignal();
  const sources = openSources(parsed);
  if ('usage' in sources) return usageError(command, io, sources.usage);
  if ('problem' in sources) {
    io.err(`storebridge dashboard: ${sources.problem}`);
    return 1;
  }
  const { createDashboardRouter } = require('../../dashboard') as typeof import('../../dashboard');
  const lastReported = new Map<string, number>();
  let router;
  let server: Server;
  try {
    router = createDashboardRouter({
      ...sources,
      token: parsed.token,
      title: parsed.title,
      refreshMs: parsed.refreshMs,
      jobs: parsed.noJobs ? false : 'auto',
      jobsWritable: parsed.jobsWritable,
      // One line per failing source at most once a minute (the page says it too).
      onError: (_err, { source, message }) => {
        const t = Date.now();
        if ((lastReported.get(source) ?? 0) > t - 60_000) return;
        lastReported.set(source, t);
        io.err(`storebridge dashboard: ${message.split('\n')[0]}`);
      },
    });
    if (router.jobsUnavailable) io.err(`storebridge dashboard: note: no jobs view: ${router.jobsUnavailable}`);
    const express = require('express') as typeof import('express');
    const app = express();
    app.disable('x-powered-by');
    app.use(router);
    server = await new Promise<Server>((resolve, reject) => {
      // The same limits as `serve` (docs/deployment.md "Server limits"), not Node's defaults.
      const s = limitedServer(app, { ...SERVER_TIMEOUTS });
      s.once('error', reject);
      s.listen(parsed.port, parsed.host, () => resolve(s));
    });
  } catch (err) {
    await sources.sync?.close?.().catch(() => undefined);
    const usage = flagProblem(err, flagOf(parsed));
    if (usage !== undefined) return usageError(command, io, usage);
    io.err(`storebridge dashboard: ${(err as Error).message.split('\n')[0]}`);
    return 1;
  }
  const { port } = server.address() as AddressInfo;
  const host = parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host;
  io.out(`dashboard on http://${host}:${port}`);
  const signal = await stop;
  io.err(`storebridge dashboard: ${signal}, shutting down`);
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await router.dashboard.close().catch(() => undefined);
  return 0;
}
