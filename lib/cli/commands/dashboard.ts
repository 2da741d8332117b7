/**
 * `storebridge dashboard [--port P] [--redis URL | --state FILE] [--reverse URL]… [--token-env ENV]`
 *
 * Serves the operator dashboard and prints `dashboard on http://HOST:PORT` once ready. Loopback
 * only unless an operator token is given (from an environment variable: never on the command line,
 * never printed).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import { firstProblem, intArg } from '../args';
import type { CliIO } from '../io';
import type { ReverseSource, SyncSource } from '../../dashboard/dashboard-sources';
import { MIN_TOKEN_LENGTH } from '../../dashboard/dashboard-security';

export const HELP = `usage: storebridge dashboard [--port P] [--redis URL | --state FILE] [--reverse URL]... [options]

Serves an HTML dashboard of the sync service's connections (last run, items, errors, next run,
run history; Run now, Pause, Resume) and of reverse services (state, queue, counts, failures;
Fetch updates, Send updates), and prints "dashboard on http://HOST:PORT" once ready.

sources (at least one):
  --redis URL          the sync service's Redis: health, run history and BullMQ schedules, with
                       Run now / Pause / Resume and the raw jobs view at /jobs/ (needs bullmq and
                       ioredis; the jobs view needs @bull-board/api and @bull-board/express)
  --prefix P           the sync queue's BullMQ key prefix (default storebridge)
  --queue NAME         the sync queue's name (default sync)
  --state FILE         a "storebridge sync --state FILE" checkpoint file (one machine; read-only)
  --reverse URL        a reverse service's base URL (its operator routes answer loopback clients,
                       so run the dashboard on its machine); repeat for several

options:
  --port P             port to listen on; 0 picks a free one (default 0)
  --host H             address to listen on (default 127.0.0.1); any other needs --token-env
  --token-env ENV      require the operator token held in environment variable ENV (at least
                       ${MIN_TOKEN_LENGTH} characters): browsers log in once, scripts send
                       "Authorization: Bearer TOKEN"
  --title T            the page's title (default storebridge)
  --refresh-ms MS      how often the page refreshes itself (default 5000; 0: never)
  --no-jobs            do not mount the raw jobs view (bull-board)
  --jobs-writable      let the jobs view retry, promote, clean and remove jobs (default read-only)
  -h, --help           this text`;

interface Args {
  port: number;
  host: string;
  redis?: string;
  prefix?: string;
  queue?: string;
  state?: string;
  reverse: string[];
  token?: string;
  title?: string;
  refreshMs: number;
  jobs: boolean;
  jobsWritable: boolean;
}

const LOOPBACK_LISTEN = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|::1)$/i;

function parse(args: string[], env: NodeJS.ProcessEnv): Args | string {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        redis: { type: 'string' },
        prefix: { type: 'string' },
        queue: { type: 'string' },
        state: { type: 'string' },
        reverse: { type: 'string', multiple: true },
        'token-env': { type: 'string' },
        title: { type: 'string' },
        'refresh-ms': { type: 'string' },
        'no-jobs': { type: 'boolean' },
        'jobs-writable': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  const port = intArg('port', values.port, { min: 0, max: 65535, fallback: 0 });
  const refreshMs = intArg('refresh-ms', values['refresh-ms'], { min: 0, max: 3_600_000, fallback: 5_000 });
  const problem = firstProblem([port, refreshMs]);
  if (problem) return problem;
  if (values.redis !== undefined && !/^rediss?:\/\/./.test(values.redis)) return '--redis must be a redis:// or rediss:// URL';
  if (values.redis !== undefined && values.state !== undefined) return 'give --redis or --state, not both';
  if ((values.prefix !== undefined || values.queue !== undefined) && values.redis === undefined) return '--prefix and --queue go with --redis';
  const reverse = values.reverse ?? [];
  if (values.redis === undefined && values.state === undefined && reverse.length === 0) return 'nothing to show: give --redis URL, --state FILE or --reverse URL';
  let token: string | undefined;
  const tokenEnv = values['token-env'];
  if (tokenEnv !== undefined) {
    // The value is never echoed: it may be the token itself, passed by mistake.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) return '--token-env must name an environment variable (letters, digits, _), not hold a value';
    token = env[tokenEnv];
    if (!token) return `--token-env: environment variable ${tokenEnv} is not set or empty`;
    if (token.length < MIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) return `--token-env: the token in ${tokenEnv} must be at least ${MIN_TOKEN_LENGTH} visible ASCII characters`;
  }
  const host = values.host ?? '127.0.0.1';
  if (!LOOPBACK_LISTEN.test(host) && !token) return `listening on ${host} (not loopback) needs an operator token: --token-env ENV`;
  return {
    port: port as number,
    host,
    redis: values.redis,
    prefix: values.prefix,
    queue: values.queue,
    state: values.state,
    reverse,
    token,
    title: values.title,
    refreshMs: refreshMs as number,
    jobs: !values['no-jobs'],
    jobsWritable: Boolean(values['jobs-writable']),
  };
}

/** The sources named on the command line; a string is a one-line problem to print. */
function openSources(a: Args): { sync?: SyncSource; reverse: ReverseSource[] } | string {
  const d = require('../../dashboard') as typeof import('../../dashboard');
  try {
    const reverse = a.reverse.map((url) => d.createReverseHttpSource(url));
    let sync: SyncSource | undefined;
    if (a.state !== undefined) sync = d.createStateFileSource(a.state);
    if (a.redis !== undefined) sync = d.createRedisSyncSource({ connection: a.redis, ...(a.prefix ? { prefix: a.prefix } : {}), ...(a.queue ? { queueName: a.queue } : {}) });
    return { sync, reverse };
  } catch (err) {
    return (err as Error).message;
  }
}

export async function run(args: string[], io: CliIO): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const parsed = parse(args, process.env);
  if (typeof parsed === 'string') {
    io.err(`storebridge dashboard: ${parsed}\n\n${HELP}`);
    return 2;
  }
  const stop = io.shutdownSignal();
  const sources = openSources(parsed);
  if (typeof sources === 'string') {
    io.err(`storebridge dashboard: ${sources}`);
    return 1;
  }
  const { createDashboardRouter } = require('../../dashboard') as typeof import('../../dashboard');
  let lastReported = new Map<string, number>();
  let router;
  let server: Server;
  try {
    router = createDashboardRouter({
      ...sources,
      token: parsed.token,
      title: parsed.title,
      refreshMs: parsed.refreshMs,
      jobs: parsed.jobs ? 'auto' : false,
      jobsWritable: parsed.jobsWritable,
      // One line per failing source at most once a minute (the page says it too).
      onError: (err, { source }) => {
        const t = Date.now();
        if ((lastReported.get(source) ?? 0) > t - 60_000) return;
        lastReported.set(source, t);
        io.err(`storebridge dashboard: ${source}: ${(err as Error)?.message?.split('\n')[0] ?? String(err)}`);
      },
    });
    if (router.jobsUnavailable) io.err(`storebridge dashboard: note: no jobs view: ${router.jobsUnavailable}`);
    const express = require('express') as typeof import('express');
    const app = express();
    app.disable('x-powered-by');
    app.use(router);
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(parsed.port, parsed.host);
      s.once('listening', () => resolve(s));
      s.once('error', reject);
    });
  } catch (err) {
    await sources.sync?.close?.().catch(() => undefined);
    io.err(`storebridge dashboard: ${(err as Error).message.split('\n')[0]}`);
    return 1;
  }
  const { port } = server.address() as AddressInfo;
  const host = parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host;
  io.out(`dashboard on http://${host}:${port}`);
  const signal = await stop;
  io.err(`storebridge dashboard: ${signal}, shutting down`);
  lastReported = new Map();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await router.dashboard.close().catch(() => undefined);
  return 0;
}
