/**
 * What a command may do to the outside world: print, learn whether stdout is a terminal, and wait
 * for a shutdown signal. Tests run commands in a child process (the real CLI); this seam only keeps
 * printing in one place.
 */
import { messageChain } from '../logger';

export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  readonly isTTY: boolean;
  /** Resolves on SIGINT/SIGTERM (long-running commands await it, then close cleanly). */
  shutdownSignal(): Promise<string>;
}

export function processIO(): CliIO {
  // `storebridge check … | head`: a closed pipe ends the output, not the process with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  // The last line of defence: a failure nothing handled (a driver's 'error' event without a
  // listener, a rejection nobody awaited) ends the process with one line and exit 1, never with
  // Node's stack trace (file paths, maybe values). Each known source has its own handler; this
  // only keeps the promise of the CLI contract if one is ever missed.
  const fatal = (err: unknown) => {
    process.stderr.write(`storebridge: unexpected failure: ${messageChain(err).replace(/\s*\n\s*/g, ' ')}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
  return {
    out: (line) => void process.stdout.write(line + '\n'),
    err: (line) => void process.stderr.write(line + '\n'),
    isTTY: Boolean(process.stdout.isTTY),
    shutdownSignal: () =>
      new Promise((resolve) => {
        const on = (sig: string) => {
          process.off('SIGINT', on);
          process.off('SIGTERM', on);
          resolve(sig);
        };
        process.on('SIGINT', on);
        process.on('SIGTERM', on);
      }),
  };
}
