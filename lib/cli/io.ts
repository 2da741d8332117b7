/**
 * What a command may do to the outside world: print, learn whether stdout is a terminal, and wait
 * for a shutdown signal. Tests run commands in a child process (the real CLI); this seam only keeps
 * printing in one place.
 */
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
