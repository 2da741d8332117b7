/**
 * Runs a page's commands as a reader would in one terminal of a fresh checkout: in order, each
 * with `bash -c`, the environment and working directory carried from one to the next (`export`,
 * `cd`). A command that prints a server's ready line (`listening on http://…`, `dashboard on …`,
 * `serving until Ctrl-C`) is a server: it keeps running, like a second terminal, until the page is
 * done. A command ending in `&` runs in the background the same way. Every process of the page is
 * stopped at its end (its whole process group: examples fork workers).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a server prints once it is ready to be called. */
export const READY = /(listening on|dashboard on) https?:\/\/\S+|serving until Ctrl-C/;

export interface CommandResult {
  readonly how: 'exited' | 'serving' | 'background';
  readonly code: number | null;
  readonly output: string;
  readonly ms: number;
  /** The command changed the environment or the directory for the next ones (`export`, `cd`, `KEY=$(…)`). */
  readonly changedShell?: boolean;
}

interface Running {
  readonly child: ChildProcess;
  output(): string;
  readonly exit: Promise<number | null>;
}

export class DocSession {
  env: NodeJS.ProcessEnv;
  cwd: string;
  private readonly running: Running[] = [];
  private readonly scratch = mkdtempSync(join(tmpdir(), 'sb-doc-session-'));

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.cwd = cwd;
    this.env = env;
  }

  private start(command: string): Running {
    // The shell's environment and directory after the command, for the next one (`export`, `cd`).
    const script = `${command}\n__sb_rc=$?\nenv -0 > "${this.scratch}/env"\npwd > "${this.scratch}/pwd"\nexit $__sb_rc\n`;
    const child = spawn('bash', ['-c', script], { cwd: this.cwd, env: this.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c));
    child.stderr!.on('data', (c: Buffer) => (output += c));
    const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const running = { child, output: () => output, exit };
    this.running.push(running);
    return running;
  }

  /** Runs one command: to its end, until it is serving, or (`&`) in the background. */
  async run(command: string, timeoutMs: number): Promise<CommandResult> {
    const t0 = Date.now();
    const background = /(^|[^&])&\s*(#.*)?$/.test(command);
    const text = background ? command.replace(/&\s*(#.*)?$/, '') : command;
    const r = this.start(text);
    // A background command is given a moment to fail (a port in use, a missing file).
    const limit = background ? 3_000 : timeoutMs;
    const outcome = await new Promise<'exited' | 'serving' | 'waited' | 'timeout'>((resolve) => {
      const timer = setTimeout(() => resolve(background ? 'waited' : 'timeout'), limit);
      const poll = setInterval(() => {
        if (READY.test(r.output())) {
          clearInterval(poll);
          clearTimeout(timer);
          resolve('serving');
        }
      }, 50);
      void r.exit.then(() => {
        clearInterval(poll);
        clearTimeout(timer);
        resolve('exited');
      });
    });
    const ms = Date.now() - t0;
    if (outcome === 'exited') {
      const code = await r.exit;
      const changedShell = !background && this.readShellState();
      return { how: 'exited', code, output: r.output(), ms, changedShell };
    }
    if (outcome === 'timeout') return { how: 'exited', code: null, output: `${r.output()}\n(no end and no ready line within ${timeoutMs} ms)`, ms };
    return { how: outcome === 'serving' ? 'serving' : 'background', code: null, output: r.output(), ms };
  }

  /** Takes the shell's environment and directory after a command; true when they changed. */
  private readShellState(): boolean {
    let pairs: string[];
    let cwd: string;
    try {
      pairs = readFileSync(join(this.scratch, 'env'), 'utf8').split('\0').filter(Boolean);
      cwd = readFileSync(join(this.scratch, 'pwd'), 'utf8').trim();
    } catch {
      return false; // the command ended the shell early (`exit`): nothing to carry over
    }
    // bash's own bookkeeping variables change on every run; they are not the reader's state.
    const own = new Set(['_', 'SHLVL', 'OLDPWD', 'PWD']);
    const env = Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
    const view = (e: NodeJS.ProcessEnv) => JSON.stringify(Object.entries(e).filter(([k]) => !own.has(k)).sort(([a], [b]) => a.localeCompare(b)));
    const changed = cwd !== this.cwd || view(env) !== view(this.env);
    this.env = env;
    this.cwd = cwd;
    return changed;
  }

  /** Stops every process the page started (SIGTERM, then SIGKILL after 5 s). */
  async close(): Promise<void> {
    const alive = this.running.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
    const signal = (sig: NodeJS.Signals) => {
      for (const r of alive) {
        try {
          process.kill(-r.child.pid!, sig);
        } catch {
          // Already gone.
        }
      }
    };
    signal('SIGTERM');
    const done = Promise.all(alive.map((r) => r.exit));
    const late = setTimeout(() => signal('SIGKILL'), 5_000);
    await done;
    clearTimeout(late);
    rmSync(this.scratch, { recursive: true, force: true });
  }
}
