/** The real CLI in a child process, for the end-to-end tests (needs the build: `npm run build`). */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'storebridge.js');

export interface RunningCli {
  readonly child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exit: Promise<number | null>;
}

/** Starts `storebridge ARGS` with the environment plus `env`. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): RunningCli {
  return spawnProcess([process.execPath, BIN, ...args], env);
}

/** Starts any command (`argv[0]` and its arguments) the same way: a command that runs the CLI, e.g. inside `unshare`. */
export function spawnProcess([file, ...args]: readonly string[], env: NodeJS.ProcessEnv = {}): RunningCli {
  const child = spawn(file, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c));
  child.stderr!.on('data', (c: Buffer) => (stderr += c));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

/** Runs `storebridge ARGS` to its end. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = spawnCli(args, env);
  const code = await cli.exit;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}
