/**
 * `--adapter` / `--into` values, through the adapter registry (`lib/adapter-registry.ts`):
 * `memory`, `sqlite:FILE`, `postgres:URL` (or a `postgres://` URL), `mysql:URL` (or a `mysql://`
 * URL), and `NAME:…` for an installed package `storebridge-adapter-NAME`.
 *
 * Bundled adapters are found by convention, not listed here: every `adapters/<name>/<name>-spec`
 * module exporting `storebridgeAdapter` is registered, so a new bundled adapter needs no edit of
 * this file. Registrations load their drivers only in `open`, so a command loads only the driver
 * of the spec it opens.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { StoreAdapter } from '../adapter';
import {
  assertAdapterRegistration,
  findAdapterSpec,
  registerAdapterSpec,
  registeredAdapterSpecs,
  specPrefix,
  type AdapterRegistration,
} from '../adapter-registry';
import { InvalidOptionError } from '../errors';

/** `adapters/` next to `lib/` (both in the sources and in `dist/`). */
const BUNDLED_DIR = resolve(__dirname, '..', '..', 'adapters');

/** Registers every bundled `adapters/<name>/<name>-spec` module, `memory` first, the rest by name. */
function registerBundledAdapters(): void {
  const names = readdirSync(BUNDLED_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort((a, b) => (a === 'memory' ? -1 : b === 'memory' ? 1 : a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    const base = join(BUNDLED_DIR, name, `${name}-spec`);
    if (!existsSync(`${base}.js`) && !existsSync(`${base}.ts`)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const registration = (require(base) as { storebridgeAdapter?: unknown }).storebridgeAdapter;
    assertAdapterRegistration(registration, `adapters/${name}/${name}-spec`);
    registerAdapterSpec(registration);
  }
}

registerBundledAdapters();

/** The bundled forms, for `--help`: `memory | sqlite:FILE | postgres:URL | mysql:URL`. */
export const ADAPTER_SPEC_HELP = registeredAdapterSpecs()
  .map((r) => r.describe)
  .join(' | ');

/** How `--help` names the default of `defaultAdapterSpec()` (which creates its file when called). */
export const DEFAULT_ADAPTER_HELP = 'a fresh SQLite file in a temp dir, removed on exit';

/** The package that provides the spec prefix `name` when no registration does. */
export function adapterPackageName(prefix: string): string {
  return `storebridge-adapter-${prefix}`;
}

/** A package name is derived only from a plain lowercase prefix (no paths, no scopes). */
const PACKAGE_PREFIX = /^[a-z][a-z0-9-]{0,50}$/;

/**
 * The registration of an installed `storebridge-adapter-<prefix>` package, resolved from the
 * current directory (the user's project) and then from storebridge's own location. Undefined when
 * no such package is installed.
 */
function loadAdapterPackage(prefix: string): AdapterRegistration | undefined {
  if (!PACKAGE_PREFIX.test(prefix)) return undefined;
  const name = adapterPackageName(prefix);
  let path: string;
  try {
    path = require.resolve(name, { paths: [process.cwd(), __dirname] });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw err;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(path) as { storebridgeAdapter?: unknown; default?: { storebridgeAdapter?: unknown } };
  const registration = mod.storebridgeAdapter ?? mod.default?.storebridgeAdapter;
  assertAdapterRegistration(registration, `the package ${name}`);
  const prefixes = typeof registration.prefix === 'string' ? [registration.prefix] : registration.prefix;
  if (!prefixes.includes(prefix)) throw new InvalidOptionError('adapter', `the package ${name} does not register the prefix "${prefix}"`);
  registerAdapterSpec(registration);
  return registration;
}

/** The spec without a URL password, safe to print. */
function redacted(spec: string): string {
  return spec.replace(/\/\/[^@/]*@/, '//***@');
}

/** The registration for a spec: a bundled one, one registered by the program, or an installed package. */
export function resolveAdapterSpec(spec: string): AdapterRegistration {
  const found = findAdapterSpec(spec) ?? loadAdapterPackage(specPrefix(spec));
  if (found) return found;
  throw new InvalidOptionError(
    'adapter',
    `unknown adapter "${redacted(spec)}": expected ${ADAPTER_SPEC_HELP}, or NAME:… with the package ${adapterPackageName('NAME')} installed`,
  );
}

let defaultSpec: string | undefined;

/**
 * The adapter `serve` and `demo` use when no `--adapter` is given: SQLite, in a fresh file in a new
 * directory under the OS temp dir (one per process, removed when the process exits). Fresh per run
 * so `--demo N` always serves exactly the demo catalog, and two runs never share data; pass
 * `--adapter sqlite:./store.db` to keep a database across runs.
 */
export function defaultAdapterSpec(): string {
  if (defaultSpec === undefined) {
    const { tmpdir } = require('node:os') as typeof import('node:os');
    const { randomBytes } = require('node:crypto') as typeof import('node:crypto');
    const { rmSync } = require('node:fs') as typeof import('node:fs');
    const dir = join(tmpdir(), `storebridge-${process.pid}-${randomBytes(4).toString('hex')}`);
    defaultSpec = `sqlite:${join(dir, 'store.db')}`;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return defaultSpec;
}

export interface OpenAdapterOptions {
  /** Where the one-line notice of a fallback goes (default: stderr). */
  readonly notice?: (line: string) => void;
}

/**
 * Opens the adapter a spec names. The default SQLite store (`defaultAdapterSpec()`) falls back to
 * the memory adapter, with a one-line notice, when SQLite cannot load on this machine (better-sqlite3
 * missing, or its native module not built for it): a newcomer's `serve --demo` or `demo` then still
 * works. A spec the user wrote is never swapped: its failure is the command's error.
 */
export async function openAdapter(spec: string, options: OpenAdapterOptions = {}): Promise<StoreAdapter> {
  const registration = resolveAdapterSpec(spec);
  try {
    return await registration.open(spec);
  } catch (err) {
    if (spec !== defaultSpec || (err as { code?: unknown })?.code !== 'SQL_DRIVER_UNAVAILABLE') throw err;
    const notice = options.notice ?? ((line: string) => void process.stderr.write(`${line}\n`));
    notice(`storebridge: SQLite is unavailable here, so the store is kept in memory (lost when this process ends): ${(err as Error).message}`);
    return resolveAdapterSpec('memory').open('memory');
  }
}
