/**
 * The options toolkit every factory uses (`createStoreRouter`, `createStoreClient`,
 * `createReverseService`, `createDaemon`, the sync engine, …): a factory declares its options once,
 * as a zod object built from the readers below, and parses what it is given once into a config.
 * The declaration is the option's type, its check and its message at the same time.
 *
 * One policy for every factory:
 * - a bad value throws `InvalidOptionError` naming the option by its dotted path (`retry.limit`) and
 *   saying what was expected;
 * - an unknown option throws too, with the closest known name when there is one: a misspelt
 *   `ratelimit: false` must not leave rate limiting silently on (the CLI refuses unknown flags the
 *   same way, `lib/cli/flags.ts`).
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { defineOptions, opt } from '../options'; // inside the kit: factories parse with it
 *
 * const parseWidgetOptions = defineOptions('createWidget', {
 *   adapter: opt.object<StoreAdapter>('a store adapter'),
 *   pageSize: opt.int({ min: 1, max: 10_000 }).default(100),
 *   logger: opt.logger().optional(),
 * });
 * const config = parseWidgetOptions(options); // { adapter, pageSize: number, logger?: Logger }
 * ```
 */
import { z } from 'zod';
import { InvalidOptionError } from './errors';
import type { Logger } from './logger';
import { retryPolicy, type RetryOptions, type RetryPolicy } from './http/retry';

/** A parser of one factory's options: throws `InvalidOptionError`, returns the typed config. */
export type OptionsParser<S extends z.ZodRawShape> = (options: unknown) => z.output<z.ZodObject<S>>;

/**
 * Declares a factory's options. `factory` names it in messages (`… is not an option of
 * createStoreRouter`). Members left `undefined` count as absent.
 */
export function defineOptions<S extends z.ZodRawShape>(factory: string, shape: S): OptionsParser<S> {
  const schema = z.strictObject(shape);
  return (options) => {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new InvalidOptionError('options', `${factory} expects an options object`);
    const parsed = schema.safeParse(options);
    if (parsed.success) return parsed.data;
    throw optionError(factory, '', schema, parsed.error.issues);
  };
}

/**
 * Reads one value that is not in an options object (a positional argument, a per-call id, a
 * member another reader hands on) with the same readers, so the same messages: throws
 * `InvalidOptionError` naming `option` (and the member at fault below it; `option` `''`: the member
 * alone, for some members of a per-call argument whose other members are someone else's).
 */
export function readOption<T extends z.ZodType>(option: string, reader: T, value: unknown): z.output<T> {
  const parsed = reader.safeParse(value);
  if (parsed.success) return parsed.data;
  throw optionError(option || 'this call', option, reader, parsed.error.issues);
}

/** The error for the first issue, named by its path below `prefix`; `owner` is who the options belong to. */
function optionError(owner: string, prefix: string, schema: z.ZodType, issues: readonly z.core.$ZodIssue[]): InvalidOptionError {
  // An unknown name first: a misspelt required option is then told as a misspelling, not as missing.
  const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0];
  const at = [prefix, ...issue.path.map(String)].filter(Boolean);
  if (issue.code !== 'unrecognized_keys') return new InvalidOptionError(at.join('.') || 'options', issue.message);
  const key = issue.keys[0];
  const near = closest(key, membersAt(schema, issue.path));
  return new InvalidOptionError([...at, key].join('.'), `is not an option of ${owner}${near ? ` (did you mean "${near}"?)` : ''}`);
}

/** The member names of the object schema at `path` (through optional, default, pipe, array and union), for a nested did-you-mean. */
function membersAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let here: unknown = schema;
  for (let i = 0; ; ) {
    const def = (here as { _zod?: { def?: Record<string, unknown> } })?._zod?.def;
    if (!def) return [];
    if (def.type === 'object') {
      const shape = def.shape as Record<string, unknown>;
      if (i === path.length) return Object.keys(shape);
      here = shape[String(path[i++])];
    } else if (def.type === 'optional' || def.type === 'default' || def.type === 'nullable' || def.type === 'prefault') here = def.innerType;
    else if (def.type === 'pipe') here = (def.in as { _zod: { def: { type: string } } })._zod.def.type === 'transform' ? def.out : def.in;
    else if (def.type === 'array' && i < path.length) (here = def.element), i++;
    else if (def.type === 'union') here = (def.options as unknown[]).find((o) => (o as { _zod: { def: { type: string } } })._zod.def.type === 'object');
    else return [];
  }
}

/** The known name within edit distance 2 of `name` (case-insensitive), if one is. */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length];
}

/** What is wrong with an http(s) URL option, rule by rule (the CLI's flags tell them apart too). */
function httpUrlProblem(v: string): string | undefined {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an http(s) URL';
  if (u.username || u.password) return 'must not carry credentials (they would end up in logs; the key has its own option)';
  return undefined;
}

/** Readers for the kinds of options factories take, each with a message that completes "<option> …". */
export const opt = {
  /** A safe integer in `[min, max]`. */
  int({ min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER, unit = '' }: { min?: number; max?: number; unit?: string } = {}) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : min === Number.MIN_SAFE_INTEGER ? `≤ ${max}` : `from ${min} to ${max}`;
    const message = `must be an integer ${range}${unit ? ` (${unit})` : ''}`;
    return z.number({ error: message }).int(message).min(min, message).max(max, message);
  },
  /** A non-empty string without control characters (names, URLs, prefixes). */
  text(what = 'a non-empty string') {
    return z.string({ error: `must be ${what}` }).min(1, `must be ${what}`).regex(/^[^\u0000-\u001f]*$/, 'must not contain control characters');
  },
  /** One of fixed values. */
  oneOf<const T extends readonly [string, ...string[]]>(values: T) {
    return z.enum(values, { error: `must be ${values.map((v) => JSON.stringify(v)).join(' or ')}` });
  },
  boolean() {
    return z.boolean({ error: 'must be true or false' });
  },
  /** A function (callbacks, hooks, an injected `fetch` or clock). */
  fn<F extends (...args: never[]) => unknown>(what = 'a function') {
    return z.custom<F>((v) => typeof v === 'function', { error: `must be ${what}` });
  },
  /** An object the kit only passes on or calls into (an adapter, a Redis client, a registry). */
  object<T extends object>(what: string, check: (v: object) => boolean = () => true) {
    return z.custom<T>((v) => typeof v === 'object' && v !== null && !Array.isArray(v) && check(v), { error: `must be ${what}` });
  },
  /** A pino-like logger: an object with `info`, `warn` and `error` methods (`child` optional). */
  logger() {
    return opt.object<Logger>('a pino-like logger (an object with info, warn and error methods)', (v) => {
      const l = v as Record<string, unknown>;
      return ['info', 'warn', 'error'].every((m) => typeof l[m] === 'function') && (l.child === undefined || typeof l.child === 'function');
    });
  },
  /** An absolute http(s) URL without credentials (they would end up in logs). */
  httpUrl() {
    return z.string({ error: 'must be an http(s) URL' }).superRefine((v, ctx) => {
      const problem = httpUrlProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
  },
  /**
   * A retry policy's options (`lib/http/retry.ts`, ky's shape): a number (the limit) or the options,
   * checked and read as `RetryOptions` (a number `n` as `{ limit: n }`). A member at fault is named
   * by its path (`retry.limit`). Use `retry` unless the defaults depend on other options.
   */
  retryOptions() {
    const count = opt.int({ min: 0 }).optional();
    const statuses = z
      .custom<readonly number[]>((v) => Array.isArray(v) && v.every((s) => Number.isInteger(s) && s >= 100 && s <= 599), { error: 'must be an array of HTTP statuses (100–599)' })
      .optional();
    const members = z.strictObject(
      {
        limit: count,
        statusCodes: statuses,
        afterStatusCodes: statuses,
        maxRetryAfter: count,
        backoffLimit: count,
        delay: opt.fn<(attemptCount: number) => number>('a function of the attempt count').optional(),
        jitter: z.union([z.boolean(), opt.fn<(delay: number) => number>()], { error: 'must be a boolean or a function' }).optional(),
        retryOnTimeout: opt.boolean().optional(),
      },
      { error: 'must be a number (the retry limit) or an object' },
    );
    return z.preprocess((v) => (typeof v === 'number' ? { limit: v } : v), members).optional();
  },
  /**
   * A retry policy, read into the full `RetryPolicy`: `defaults` are one factory's own (the daemon's
   * limit is 2); absent, the policy is the defaults.
   */
  retry(defaults: RetryOptions = {}) {
    return opt.retryOptions().transform((r): RetryPolicy => retryPolicy(r as RetryOptions | undefined, defaults));
  },
  /** A `redis://` or `rediss://` URL (credentials allowed: messages show it through `redisUrlForDisplay`). */
  redisUrl() {
    const rule = 'must be a redis:// or rediss:// URL';
    return z.string({ error: rule }).regex(/^rediss?:\/\/./, rule);
  },
  /**
   * A Redis connection as the Redis-backed sync takes it: a `redis://` or `rediss://` URL,
   * connection options, or a connected client (both objects; the client is told apart when used).
   */
  redis<T>() {
    return z.custom<T>((v) => (typeof v === 'string' && /^rediss?:\/\/./.test(v)) || (typeof v === 'object' && v !== null && !Array.isArray(v)), {
      error: 'must be a redis:// or rediss:// URL, ioredis options, or an ioredis client',
    });
  },
};
