/**
 * The adapter conformance suite (after abstract-level's `test/index.js`): everything the kit relies
 * on from a `StoreAdapter`, as tests registered with the test functions you pass in, so it runs
 * under jest, node:test or vitest. Every test gets a fresh adapter from your factory.
 *
 * It checks paging in both sort orders and both modes (offset and keyset), every item exactly once
 * over random catalogs with many `last_updated` ties (a fast-check property), tie-breaking by `_id`,
 * `after` as strictly after, exact counts, get/upsert, `getMany` (order, ids not found, an empty
 * list; raw when the adapter has one, else the guard's fallback), the `resolveWrite` rules (`touch`, `keep`),
 * concurrent upserts of one `_id`, `upsertMany` (when the adapter has one: the same results as
 * upserts one by one, input order, repeated `_id`s, atomic per item), one item per `sku` / `orderid`
 * under concurrent creates (`DuplicateKeyError` for the others), partial (`merge`) writes, the
 * Idempotency-Key records, aborted signals, returned shapes (raw and through `guardAdapter`),
 * large documents, unicode ids and `productBySku`.
 *
 * @example jest (node:test and vitest: pass their `test` and `describe` the same way)
 * ```ts
 * import { runAdapterConformance } from 'storebridge/conformance';
 * import { MyAdapter } from '../src/my-adapter';
 *
 * runAdapterConformance({
 *   describe,
 *   test,
 *   factory: async () => new MyAdapter(await freshDatabase()),
 *   teardown: async (adapter) => adapter.close(),
 * });
 * ```
 */
import type { StoreAdapter } from '../adapter';
import { InvalidOptionError } from '../errors';
import { contentCases } from './content-cases';
import { getManyCases } from './get-many-cases';
import { idCases } from './id-cases';
import { itemCases } from './item-cases';
import { keyCases } from './key-cases';
import { pagingCases } from './paging-cases';
import { writeCases } from './write-cases';
import type { Case, Config } from './suite-helpers';

/** A test-registering function: jest's / vitest's `test`, or node:test's `test`. Called as `test(name, fn)`. */
export type TestFunction = (name: string, fn: () => Promise<void>) => unknown;
/** A grouping function: `describe` of jest, vitest or node:test. */
export type DescribeFunction = (name: string, fn: () => void) => unknown;

export interface AdapterConformanceOptions<A extends StoreAdapter = StoreAdapter> {
  /** Registers one test. */
  readonly test: TestFunction;
  /** Groups the tests (optional). */
  readonly describe?: DescribeFunction;
  /** Name of the group (default `adapter conformance`). */
  readonly name?: string;
  /** A fresh, empty adapter. Called once per test (and once per property run). */
  readonly factory: () => A | Promise<A>;
  /** Disposes of an adapter made by `factory` (default: `adapter.close()`). */
  readonly teardown?: (adapter: A) => void | Promise<void>;
  /** Runs of the exactly-once property (default 25; each run makes a fresh adapter). */
  readonly propertyRuns?: number;
  /** Size of the large-document test's product, in characters (default 2,000,000). */
  readonly largeDocumentChars?: number;
  /** Parallel upserts in the concurrency tests (default 16). */
  readonly concurrency?: number;
  /** Names of tests to leave out (say why in your test file). */
  readonly skip?: readonly string[];
}

function parseOptions<A extends StoreAdapter>(options: AdapterConformanceOptions<A>): Config<A> {
  if (typeof options?.test !== 'function') throw new InvalidOptionError('test', 'pass your test runner\'s test function');
  if (typeof options.factory !== 'function') throw new InvalidOptionError('factory', 'must be a function returning a fresh adapter');
  if (options.describe !== undefined && typeof options.describe !== 'function') throw new InvalidOptionError('describe', 'must be a function');
  const positive = (name: string, v: number | undefined, d: number) => {
    const n = v ?? d;
    if (!Number.isSafeInteger(n) || n < 1) throw new InvalidOptionError(name, 'must be a positive integer');
    return n;
  };
  return {
    factory: options.factory,
    teardown: options.teardown ?? ((a) => a.close?.()),
    propertyRuns: positive('propertyRuns', options.propertyRuns, 25),
    largeDocumentChars: positive('largeDocumentChars', options.largeDocumentChars, 2_000_000),
    concurrency: positive('concurrency', options.concurrency, 16),
  };
}

function cases<A extends StoreAdapter>(): Case<A>[] {
  return [...itemCases<A>(), ...getManyCases<A>(), ...pagingCases<A>(), ...writeCases<A>(), ...keyCases<A>(), ...contentCases<A>(), ...idCases<A>()];
}

/** Names of the tests `runAdapterConformance` registers (for `skip`). */
export const ADAPTER_CONFORMANCE_TESTS: readonly string[] = cases().map(([name]) => name);

/**
 * Registers the adapter conformance tests with your test runner.
 *
 * @example node:test
 * ```ts
 * import { describe, test } from 'node:test';
 * import { runAdapterConformance } from 'storebridge/conformance';
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 * runAdapterConformance({ describe, test, factory: () => createMemoryAdapter() });
 * ```
 */
export function runAdapterConformance<A extends StoreAdapter>(options: AdapterConformanceOptions<A>): void {
  const config = parseOptions(options);
  const skip = new Set(options.skip ?? []);
  for (const name of skip) {
    if (!ADAPTER_CONFORMANCE_TESTS.includes(name)) throw new InvalidOptionError('skip', `no test is named "${name}"`);
  }
  const register = () => {
    for (const [name, run] of cases<A>()) {
      if (skip.has(name)) continue;
      options.test(name, async () => {
        const adapter = await config.factory();
        try {
          await run(adapter, config);
        } finally {
          await config.teardown(adapter);
        }
      });
    }
  };
  if (options.describe) options.describe(options.name ?? 'adapter conformance', register);
  else register();
}
