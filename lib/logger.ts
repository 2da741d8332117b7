/**
 * The logger every part of the kit accepts: pino-like (pino, bunyan, winston's `child`-less
 * loggers, or a few lines of your own). The kit logs objects first and a message second, and never
 * a key. A `logger` option is read with `opt.logger()` (`lib/options.ts`).
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * createStoreRouter({ adapter, svcKeys: [key], logger: pino() });
 * ```
 */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  /** With it (pino has it), each request or run logs through `child({jobid, operation, …})`. */
  child?(bindings: Record<string, unknown>): Logger;
}

/**
 * An error's message followed by its causes' (`a: b: c`), never a stack: what logs and one-line
 * reports print. A cause whose message the line already holds (a wrapper that quotes it) is skipped.
 */
export function messageChain(err: unknown): string {
  // Duck-typed: errors from another realm (a socket's, under a VM context) are not `instanceof Error`.
  const messageOf = (e: unknown) => (typeof e === 'object' && e !== null && typeof (e as Error).message === 'string' ? (e as Error).message : undefined);
  let line = messageOf(err) ?? String(err);
  for (let cause = (err as { cause?: unknown })?.cause, depth = 0; messageOf(cause) !== undefined && depth < 10; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (!line.includes(messageOf(cause)!)) line += `: ${messageOf(cause)}`;
  }
  return line;
}
