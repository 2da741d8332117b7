/**
 * The real CLI for the peer-emulator tests: `storebridge reverse-service` as a child process (started,
 * killed with SIGKILL, started again on the same port and database), and the build check the
 * end-to-end tests share.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BIN, ROOT, spawnCli, type RunningCli } from '../cli/cli-process';

const run = promisify(execFile);

/** Builds dist when it is older than the reverse sources (a rebuild under other suites is avoided when fresh). */
export async function ensureBuilt(): Promise<void> {
  const dirs = [join(ROOT, 'lib', 'reverse'), join(ROOT, 'lib', 'cli'), join(ROOT, 'lib', 'contract'), join(ROOT, 'adapters', 'sql')];
  const sources = dirs.flatMap((d) => readdirSync(d, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(d, f)));
  const built = join(ROOT, 'dist', 'lib', 'cli', 'commands', 'reverse-service.js');
  const newest = Math.max(...sources.map((p) => statSync(p).mtimeMs));
  if (!existsSync(built) || statSync(built).mtimeMs < newest) {
    await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT }).catch(() => undefined);
  }
}

export interface CliService {
  readonly url: string;
  readonly port: number;
  readonly cli: RunningCli;
  /** SIGKILL: no shutdown, no flush; what was not written is lost. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<number | null>;
  /** The operator view (`GET /connections/NAME/status`). */
  status(name?: string): Promise<Record<string, any>>;
  /** `POST /connections/NAME/queue`. */
  queue(body: unknown, name?: string): Promise<Record<string, any>>;
}

/** Starts `storebridge reverse-service ARGS` and waits for its `listening on` line. */
export async function startCliService(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliService> {
  const cli = spawnCli(['reverse-service', ...args], env);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(cli.stdout());
      if (m) {
        clearInterval(timer);
        resolve(m[1]);
      }
    }, 5);
    void cli.exit.then((code) => {
      clearInterval(timer);
      reject(new Error(`reverse-service exited with ${code}: ${cli.stderr()}`));
    });
  });
  const port = Number(new URL(url).port);
  return {
    url,
    port,
    cli,
    async kill() {
      cli.child.kill('SIGKILL');
      await cli.exit.catch(() => undefined);
    },
    async stop() {
      cli.child.kill('SIGTERM');
      return cli.exit;
    },
    async status(name = 'default') {
      return (await (await fetch(`${url}/connections/${encodeURIComponent(name)}/status`)).json()) as Record<string, any>;
    },
    async queue(body, name = 'default') {
      const res = await fetch(`${url}/connections/${encodeURIComponent(name)}/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await res.json()) as Record<string, any>;
    },
  };
}

export { BIN, ROOT };
