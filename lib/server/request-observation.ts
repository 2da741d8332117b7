/**
 * What the router records about one request: a logger bound to the request's `jobid` (the
 * correlation id the sync service also logs) and operation, and, when the response ends, one log
 * line and the request metrics. The presented key is redacted from anything logged through it.
 */
import { JobIdParameter } from '../contract/query';
import type { Logger, RouterConfig } from './router-options';

/** The raw text of the first `jobid` parameter of a query (a look at the raw query, not a parse of all of it). */
const JOBID_TEXT = /(?:^|&)jobid=([^&]*)/;
const REDACTED = '[REDACTED]';

/**
 * The `jobid` query parameter when the contract's `JobIdParameter` reads it (an integer, negative
 * ones too: the same requests the router serves as tracked are logged as tracked), else undefined.
 */
export function jobidOf(rawQuery: string): number | undefined {
  const m = JOBID_TEXT.exec(rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery);
  if (!m) return undefined;
  // Percent-escapes and `+` are decoded the way the router's own parse decodes them.
  const text = /[%+]/.test(m[1]) ? (new URLSearchParams(`jobid=${m[1]}`).get('jobid') ?? '') : m[1];
  const read = JobIdParameter.schema.safeParse(text);
  return read.success ? read.data : undefined;
}

export class RequestObservation {
  /** The request's logger (undefined when the router has none). */
  readonly logger: Logger | undefined;
  /** Set once the key is accepted: its id, never the key. */
  keyId: string | undefined;
  private presented: string | undefined;
  private readonly started = process.hrtime.bigint();
  private ended = false;

  constructor(
    private readonly config: RouterConfig,
    readonly operation: string,
    readonly route: string,
    readonly method: string,
    readonly jobid: number | undefined,
  ) {
    const base = config.logger;
    if (!base) return;
    // Deployed callers may send no jobid: such a request is served and logged as untracked.
    const bindings: Record<string, unknown> = jobid === undefined ? { operation, untracked: true } : { jobid, operation };
    const bound = typeof base.child === 'function' ? base.child(bindings) : withBindings(base, bindings);
    this.logger = redacting(bound, () => this.presented);
  }

  /** Remembers the presented key, only to redact it from this request's log lines. */
  redact(presented: string): void {
    this.presented = presented;
  }

  /** Writes the request line and metrics once, however many times the host reports the end. */
  end(status: number): void {
    if (this.ended) return;
    this.ended = true;
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    this.config.metrics?.request(this.operation, this.route, this.method, status, seconds);
    if (this.config.logRequests && this.logger) {
      const fields: Record<string, unknown> = { method: this.method, route: this.route, status, durationMs: Math.round(seconds * 1e6) / 1e3 };
      if (this.keyId !== undefined) fields.keyId = this.keyId;
      this.logger.info(fields, `${this.method} ${this.route} ${status}`);
    }
    // `presented` stays: work the caller abandoned may still log through this logger after the end.
  }
}

/** A logger without `child`: bindings merged into each line's fields. */
function withBindings(logger: Logger, bindings: Record<string, unknown>): Logger {
  const wrap = (level: 'info' | 'warn' | 'error') => (obj: object, msg?: string) => logger[level]({ ...bindings, ...obj }, msg);
  return { info: wrap('info'), warn: wrap('warn'), error: wrap('error'), child: (more) => withBindings(logger, { ...bindings, ...more }) };
}

/**
 * Replaces the presented key wherever it appears in a logged string: in the message, in string
 * fields, and in logged errors along their `cause` chain (copied, never mutated).
 */
function redacting(logger: Logger, secret: () => string | undefined): Logger {
  const wrap = (level: 'info' | 'warn' | 'error') => (obj: object, msg?: string) => {
    const key = secret();
    if (!key) return logger[level](obj, msg);
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) fields[k] = redactValue(v, key, 0);
    logger[level](fields, msg === undefined ? undefined : scrub(msg, key));
  };
  return { info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}

function scrub(text: string, key: string): string {
  return text.includes(key) ? text.split(key).join(REDACTED) : text;
}

function redactValue(v: unknown, key: string, depth: number): unknown {
  if (typeof v === 'string') return scrub(v, key);
  if (v instanceof Error && depth < 8 && mentions(v, key, 0)) {
    // Same prototype, so loggers still see the error's class (pino logs `type` from it).
    const copy = Object.create(Object.getPrototypeOf(v)) as Error & Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(v)) {
      copy[name] = redactValue((v as unknown as Record<string, unknown>)[name], key, depth + 1);
    }
    return copy;
  }
  return v;
}

function mentions(err: Error, key: string, depth: number): boolean {
  if (depth > 8) return false;
  const own = Object.getOwnPropertyNames(err).some((n) => {
    const value = (err as unknown as Record<string, unknown>)[n];
    return typeof value === 'string' && value.includes(key);
  });
  const cause = (err as { cause?: unknown }).cause;
  return own || (cause instanceof Error && mentions(cause, key, depth + 1));
}
