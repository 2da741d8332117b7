/**
 * The CLI servers' logger: one JSON line per event (what `serve`, `demo`, `reverse-service` and
 * `daemon` write to stderr). Errors are logged as their messages along the `cause` chain, never
 * with a stack.
 */
import { messageChain, type Logger } from '../logger';

/** A logger writing one JSON line per event to `write` (stderr in the CLI); errors as messages only. */
export function lineLogger(write: (line: string) => void): Logger {
  const log = (level: string) => (obj: object, msg?: string) => {
    const fields: Record<string, unknown> = { level, time: new Date().toISOString(), msg };
    for (const [k, v] of Object.entries(obj)) {
      fields[k] = v instanceof Error ? messageChain(v) : v;
    }
    write(JSON.stringify(fields));
  };
  return { info: log('info'), warn: log('warn'), error: log('error') };
}
