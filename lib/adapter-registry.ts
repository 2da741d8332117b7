/**
 * The adapter registry: how a spec string (`--adapter sqlite:./store.db`) becomes an adapter.
 *
 * An adapter registers the spec prefixes it answers (`sqlite`, `postgres`, …), one line for
 * `--help`, and an `open(spec)` that creates the adapter. A spec matches a prefix when it is the
 * prefix alone (`memory`) or starts with `prefix:` (`sqlite:FILE`, `postgres://…`). `open` is the
 * only place a registration may load a database driver, so listing or matching registrations never
 * loads one (`storebridge sync` with the memory sink loads no driver).
 *
 * The CLI fills the registry itself (`lib/cli/adapter-spec.ts`): every bundled
 * `adapters/<name>/<name>-spec` module, and, for a spec `NAME:…` no registration answers, an
 * installed package `storebridge-adapter-NAME`. Both export their registration as
 * `storebridgeAdapter`. A program embedding the CLI can also call `registerAdapterSpec` directly.
 *
 * @example A package `storebridge-adapter-erp` makes `--adapter erp:https://erp.example` work:
 * ```ts
 * import type { AdapterRegistration } from 'storebridge';
 * import { ErpAdapter } from './erp-adapter';
 *
 * export const storebridgeAdapter: AdapterRegistration = {
 *   prefix: 'erp',
 *   describe: 'erp:URL',
 *   open: async (spec) => ErpAdapter.connect(spec.slice('erp:'.length)),
 * };
 * ```
 */
import type { StoreAdapter } from './adapter';
import { InvalidOptionError } from './errors';

/** What an adapter registers for spec strings. */
export interface AdapterRegistration {
  /**
   * The prefix (or prefixes) of the specs this adapter opens, without the colon: lowercase
   * letters, digits, `+`, `-`, `.`, starting with a letter (the characters of a URL scheme).
   */
  readonly prefix: string | readonly string[];
  /** The accepted forms for `--help`, e.g. `sqlite:FILE` or `memory`. */
  readonly describe: string;
  /**
   * Creates the adapter for a spec that matched one of the prefixes. Load drivers here (lazily),
   * never when the module is imported. Throw `InvalidOptionError` for a malformed spec; never put a
   * password from the spec into a message.
   */
  open(spec: string): StoreAdapter | Promise<StoreAdapter>;
}

const PREFIX = /^[a-z][a-z0-9+.-]*$/;

const byPrefix = new Map<string, AdapterRegistration>();
const registered: AdapterRegistration[] = [];

function prefixesOf(registration: AdapterRegistration): readonly string[] {
  return typeof registration.prefix === 'string' ? [registration.prefix] : registration.prefix;
}

/** Checks the shape of a registration (it may come from a third-party package). */
export function assertAdapterRegistration(registration: unknown, from: string): asserts registration is AdapterRegistration {
  const r = registration as Partial<AdapterRegistration> | undefined;
  if (!r || typeof r !== 'object') throw new InvalidOptionError('adapter', `${from} does not export an adapter registration (storebridgeAdapter)`);
  const prefixes = typeof r.prefix === 'string' ? [r.prefix] : r.prefix;
  if (!Array.isArray(prefixes) || prefixes.length === 0 || !prefixes.every((p) => typeof p === 'string' && PREFIX.test(p))) {
    throw new InvalidOptionError('adapter', `${from}: prefix must be one or more of lowercase letters, digits, "+", "-", ".", starting with a letter`);
  }
  if (typeof r.describe !== 'string' || r.describe === '') throw new InvalidOptionError('adapter', `${from}: describe must be a non-empty string`);
  if (typeof r.open !== 'function') throw new InvalidOptionError('adapter', `${from}: open must be a function`);
}

/**
 * Adds a registration. Registering the same object again is a no-op; a prefix another
 * registration already claims is refused.
 */
export function registerAdapterSpec(registration: AdapterRegistration): void {
  assertAdapterRegistration(registration, 'the registration');
  if (registered.includes(registration)) return;
  const prefixes = prefixesOf(registration);
  for (const p of prefixes) {
    const other = byPrefix.get(p);
    if (other) throw new InvalidOptionError('adapter', `the spec prefix "${p}" is already registered (by "${other.describe}")`);
  }
  for (const p of prefixes) byPrefix.set(p, registration);
  registered.push(registration);
}

/** The prefix of a spec: what comes before the first `:`, or the whole spec when it has none. */
export function specPrefix(spec: string): string {
  const colon = spec.indexOf(':');
  return colon < 0 ? spec : spec.slice(0, colon);
}

/** The registration that opens this spec, if any. */
export function findAdapterSpec(spec: string): AdapterRegistration | undefined {
  return byPrefix.get(specPrefix(spec));
}

/** Every registration, in the order they were registered. */
export function registeredAdapterSpecs(): readonly AdapterRegistration[] {
  return [...registered];
}
