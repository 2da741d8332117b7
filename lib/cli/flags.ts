/**
 * The CLI's flag toolkit: each command declares its flags once, and the declaration gives the help
 * text, the parsing (with one message per mistake) and the TypeScript type of the parsed values.
 *
 * - Unknown flags are refused (exit 2, the message and a pointer to the help), like unknown factory
 *   options (`lib/options.ts`).
 * - A `secret` flag (`--key`) can also be given as `--key-file FILE` or through its environment
 *   variable, and the help says to prefer those: a value on the command line is visible in `ps` and
 *   shell history. Secrets are never echoed in any message.
 * - Values come back camel-cased: `--page-size` is `values.pageSize`.
 *
 * @example
 * ```ts
 * const command = defineCommand({
 *   name: 'check', usage: 'URL --key K [options]', summary: 'Checks a store against the interface.',
 *   positionals: { name: 'URL', min: 1, max: 1 },
 *   flags: {
 *     key: { type: 'secret', env: 'STOREBRIDGE_KEY', required: true, help: 'the key the store expects' },
 *     'page-size': { type: 'int', min: 0, max: 100_000, default: 100, help: 'items per page' },
 *     json: { type: 'boolean', help: 'print one JSON line last' },
 *   },
 * });
 * export const run = (args: string[], io: CliIO) => runCommand(command, args, io, async ({ values, positionals }) => {
 *   values.key; values.pageSize; values.json; // string, number, boolean
 *   return 0;
 * });
 * ```
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { InvalidOptionError } from '../errors';
import type { CliIO } from './io';

interface FlagBase {
  /** One line (or a few): what it does. Defaults and choices are added to it. */
  readonly help: string;
  /** The value's name in the help (`--port P`). */
  readonly metavar?: string;
  /** Help section title (flags without one are listed under "options"). */
  readonly section?: string;
}

export type FlagSpec =
  | (FlagBase & { readonly type: 'string'; readonly default?: string; readonly choices?: readonly string[]; readonly required?: boolean })
  | (FlagBase & { readonly type: 'int'; readonly min: number; readonly max: number; readonly default?: number; readonly unit?: string })
  | (FlagBase & { readonly type: 'boolean' })
  /** Repeatable: `--jwt-key A=ENV --jwt-key B=ENV`. */
  | (FlagBase & { readonly type: 'list' })
  /** `--NAME V`, `--NAME-file FILE` or the environment variable `env`; never echoed. */
  | (FlagBase & { readonly type: 'secret'; readonly env: string; readonly required?: boolean });

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

type ValueOf<F extends FlagSpec> = F extends { type: 'boolean' }
  ? boolean
  : F extends { type: 'list' }
    ? string[]
    : F extends { type: 'int' }
      ? F extends { default: number }
        ? number
        : number | undefined
      : F extends { choices: readonly (infer C)[] }
        ? F extends { default: string } | { required: true }
          ? C
          : C | undefined
        : F extends { default: string } | { required: true }
          ? string
          : string | undefined;

export type FlagValues<F extends FlagSpecs> = { -readonly [K in keyof F & string as Camel<K>]: ValueOf<F[K]> };

export interface CommandSpec<F extends FlagSpecs> {
  /** `serve`, `sync`, …: messages start with `storebridge NAME:`. */
  readonly name: string;
  /** After `storebridge NAME` in the usage line: `URL --key K [options]`. */
  readonly usage: string;
  /** A paragraph under the usage line. */
  readonly summary: string;
  readonly flags: F;
  /** Positional arguments allowed (default: none). */
  readonly positionals?: { readonly name: string; readonly min: number; readonly max: number };
  /** Text after the flags: exit statuses, an example. */
  readonly epilogue?: string;
}

export type ParsedArgs<F extends FlagSpecs> = { readonly values: FlagValues<F>; readonly positionals: readonly string[] };

export interface Command<F extends FlagSpecs> {
  readonly spec: CommandSpec<F>;
  /** The `--help` text. */
  help(): string;
  /** The parsed arguments, or the usage message of the first mistake. */
  parse(args: readonly string[], env?: NodeJS.ProcessEnv): { ok: true; args: ParsedArgs<F> } | { ok: false; message: string };
}

const camel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export function defineCommand<const F extends FlagSpecs>(spec: CommandSpec<F>): Command<F> {
  for (const name of Object.keys(spec.flags)) {
    if (name === 'help' || (spec.flags[name].type === 'secret' && Object.prototype.hasOwnProperty.call(spec.flags, `${name}-file`))) {
      throw new Error(`flag --${name} of "${spec.name}" clashes with a generated flag`);
    }
  }
  return { spec, help: () => helpOf(spec), parse: (args, env = process.env) => parseWith(spec, args, env) };
}

/**
 * Runs a command: `--help` prints the help (exit 0); a usage mistake prints the message and where
 * the help is, on stderr (exit 2); otherwise `body` runs with the parsed arguments.
 */
export async function runCommand<F extends FlagSpecs>(command: Command<F>, args: string[], io: CliIO, body: (parsed: ParsedArgs<F>) => Promise<number>): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(command.help());
    return 0;
  }
  const parsed = command.parse(args);
  if (!parsed.ok) return usageError(command, io, parsed.message);
  return body(parsed.args);
}

/**
 * Prints `storebridge NAME: message` and one line saying where the help is, on stderr; returns the
 * usage exit status 2. Not the whole help: 30 lines of options bury the one line that matters.
 */
export function usageError(command: Command<FlagSpecs>, io: CliIO, message: string): number {
  io.err(`storebridge ${command.spec.name}: ${message}\n${helpPointer(command.spec.name)}`);
  return 2;
}

/**
 * The usage message for a factory's `InvalidOptionError` about an option that a flag set, else
 * `undefined`. `flags` maps an option's name (`connection`, or a nested one such as `retry.limit`;
 * the top-level name covers its members) to the flag's words (`--redis`). So a value a factory's
 * options check (`lib/options.ts`) is checked there only, and a bad one is still a usage error
 * (exit 2) that names the flag: `--redis must be a redis:// or rediss:// URL, …`.
 */
export function flagProblem(err: unknown, flags: Readonly<Record<string, string>>): string | undefined {
  if (!(err instanceof InvalidOptionError)) return undefined;
  const flag = flags[err.option] ?? flags[err.option.split('.')[0]];
  if (flag === undefined) return undefined;
  return `${flag} ${err.message.slice(`invalid option "${err.option}": `.length)}`;
}

/** The line under every usage message: where the command's options are listed. */
export function helpPointer(name?: string): string {
  return name ? `Run "storebridge help ${name}" for its options.` : 'Run "storebridge help" for the commands.';
}

function parseWith<F extends FlagSpecs>(spec: CommandSpec<F>, args: readonly string[], env: NodeJS.ProcessEnv): { ok: true; args: ParsedArgs<F> } | { ok: false; message: string } {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const [name, flag] of Object.entries(spec.flags)) {
    options[name] = { type: flag.type === 'boolean' ? 'boolean' : 'string', ...(flag.type === 'list' ? { multiple: true } : {}) };
    if (flag.type === 'secret') options[`${name}-file`] = { type: 'string' };
  }
  let raw: { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
  try {
    raw = parseArgs({ args: [...args], options, strict: true, allowPositionals: spec.positionals !== undefined }) as typeof raw;
  } catch (err) {
    // node:util's messages name the flag and never hold a value ("Unknown option '--x'").
    return { ok: false, message: (err as Error).message.replace(/\. To specify a positional argument.*$/, '') };
  }
  const p = spec.positionals;
  if (p && (raw.positionals.length < p.min || raw.positionals.length > p.max)) {
    const count = p.min === p.max ? `exactly ${p.min}` : `${p.min} to ${p.max}`;
    return { ok: false, message: `expected ${count} ${p.name} argument${p.max === 1 ? '' : 's'}, got ${raw.positionals.length}` };
  }
  const values: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(spec.flags)) {
    const result = valueOf(name, flag, raw.values, env);
    if (isProblem(result)) return { ok: false, message: result.problem };
    values[camel(name)] = result;
  }
  return { ok: true, args: { values: values as FlagValues<F>, positionals: raw.positionals } };
}

type Problem = { problem: string };

const isProblem = (v: unknown): v is Problem => typeof v === 'object' && v !== null && !Array.isArray(v) && 'problem' in v;

function valueOf(name: string, flag: FlagSpec, raw: Record<string, string | boolean | string[] | undefined>, env: NodeJS.ProcessEnv): unknown {
  const given = raw[name];
  switch (flag.type) {
    case 'boolean':
      return given === true;
    case 'list':
      return (given as string[] | undefined) ?? [];
    case 'int': {
      if (given === undefined) return flag.default;
      const text = given as string;
      const n = Number(text);
      if (!/^-?\d+$/.test(text) || n < flag.min || n > flag.max) {
        return { problem: `--${name} must be an integer from ${flag.min} to ${flag.max}${flag.unit ? ` (${flag.unit})` : ''}, got ${shorten(text)}` } satisfies Problem;
      }
      return n;
    }
    case 'string': {
      const text = (given as string | undefined) ?? flag.default;
      if (text === undefined) return flag.required ? ({ problem: `--${name}${flag.metavar ? ` ${flag.metavar}` : ''} is required` } satisfies Problem) : undefined;
      if (flag.choices && !flag.choices.includes(text)) return { problem: `--${name} must be ${flag.choices.join(' or ')}, got ${shorten(text)}` } satisfies Problem;
      return text;
    }
    case 'secret':
      return secretOf(name, flag, raw, env);
  }
}

function secretOf(name: string, flag: Extract<FlagSpec, { type: 'secret' }>, raw: Record<string, unknown>, env: NodeJS.ProcessEnv): string | undefined | Problem {
  const inline = raw[name] as string | undefined;
  const file = raw[`${name}-file`] as string | undefined;
  if (inline !== undefined && file !== undefined) return { problem: `give --${name} or --${name}-file, not both` };
  let value = inline;
  if (file !== undefined) {
    try {
      value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      return { problem: `--${name}-file: cannot read ${JSON.stringify(file)} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})` };
    }
    if (value === '') return { problem: `--${name}-file: ${JSON.stringify(file)} is empty` };
  }
  value ??= env[flag.env] || undefined;
  if (value !== undefined && /[\r\n]/.test(value)) return { problem: `the ${name} must be one line (check --${name}-file or ${flag.env})` };
  if (value === undefined && flag.required) return { problem: `a ${name} is required: --${name}-file FILE, the ${flag.env} environment variable, or --${name} ${flag.metavar ?? 'V'}` };
  return value;
}

function shorten(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

const WIDTH = 100;
const COLUMN = 27;

function helpOf(spec: CommandSpec<FlagSpecs>): string {
  const sections = new Map<string, string[]>();
  const add = (section: string | undefined, left: string, text: string) => {
    const key = section ?? 'options';
    if (!sections.has(key)) sections.set(key, []);
    sections.get(key)!.push(...formatRow(left, text));
  };
  for (const [name, flag] of Object.entries(spec.flags)) {
    const metavar = flag.type === 'boolean' ? '' : ` ${flag.metavar ?? (flag.type === 'int' ? 'N' : 'V')}`;
    if (flag.type === 'secret') {
      add(flag.section, `--${name}-file FILE`, `${flag.help}: read from FILE (preferred), or set ${flag.env}; never printed`);
      add(flag.section, `--${name}${metavar}`, `the same on the command line (visible in ps and shell history: prefer the file or ${flag.env})`);
      continue;
    }
    add(flag.section, `--${name}${metavar}`, `${flag.help}${extrasOf(flag)}`);
  }
  add(undefined, '-h, --help', 'this text');
  const body = [...sections].map(([title, rows]) => `${title}:\n${rows.join('\n')}`).join('\n\n');
  return [`usage: storebridge ${spec.name} ${spec.usage}`, '', wrap(spec.summary, WIDTH).join('\n'), '', body, ...(spec.epilogue ? ['', spec.epilogue] : [])].join('\n');
}

function extrasOf(flag: FlagSpec): string {
  const parts: string[] = [];
  if (flag.type === 'string' && flag.choices && !flag.help.includes(flag.choices[0])) parts.push(flag.choices.join(' | '));
  if ((flag.type === 'string' || flag.type === 'int') && flag.default !== undefined) parts.push(`default ${flag.default}${flag.type === 'int' && flag.unit ? ` ${flag.unit}` : ''}`);
  if (flag.type === 'list') parts.push('repeatable');
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

function formatRow(left: string, text: string): string[] {
  const lines = wrap(text, WIDTH - COLUMN);
  const head = `  ${left}`;
  const first = head.length < COLUMN - 1 ? `${head.padEnd(COLUMN)}${lines[0]}` : `${head}\n${' '.repeat(COLUMN)}${lines[0]}`;
  return [first, ...lines.slice(1).map((l) => `${' '.repeat(COLUMN)}${l}`)];
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line);
  }
  return lines;
}
