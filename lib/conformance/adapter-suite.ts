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
import { z } from 'zod';
import { defineOptions, opt } from '../options';
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

function cases<A extends StoreAdapter>(): Case<A>[] {
  return [...itemCases<A>(), ...getManyCases<A>(), ...pagingCases<A>(), ...writeCases<A>(), ...keyCases<A>(), ...contentCases<A>(), ...idCases<A>()];
}

/** Names of the tests `runAdapterConformance` registers (for `skip`). */
export const ADAPTER_CONFORMANCE_TESTS: readonly string[] = cases().map(([name]) => name);

/** Declared once (`lib/options.ts`): a bad value or an unknown name throws `InvalidOptionError` naming it. */
const parseSuiteOptions = defineOptions('runAdapterConformance', {
  test: opt.fn<TestFunction>("your test runner's test function"),
  describe: opt.fn<DescribeFunction>().optional(),
  name: z.string({ error: 'must be a string' }).optional(),
  factory: opt.fn<() => StoreAdapter | Promise<StoreAdapter>>('a function returning a fresh adapter'),
  teardown: opt.fn<(adapter: StoreAdapter) => void | Promise<void>>().optional(),
  propertyRuns: opt.int({ min: 1 }).default(25),
  largeDocumentChars: opt.int({ min: 1 }).default(2_000_000),
  concurrency: opt.int({ min: 1 }).default(16),
  skip: z
    .array(z.string(), { error: 'must be an array of test names' })
    .superRefine((names, ctx) => {
      const unknown = names.find((n) => !ADAPTER_CONFORMANCE_TESTS.includes(n));
      if (unknown !== undefined) ctx.addIssue({ code: 'custom', message: `no test is named "${unknown}"` });
    })
    .default([]),
});

function parseOptions<A extends StoreAdapter>(options: AdapterConformanceOptions<A>): Config<A> & { skip: readonly string[] } {
  const o = parseSuiteOptions(options);
  return {
    factory: o.factory as () => A | Promise<A>,
    teardown: (o.teardown as ((adapter: A) => void | Promise<void>) | undefined) ?? ((a) => a.close?.()),
    propertyRuns: o.propertyRuns,
    largeDocumentChars: o.largeDocumentChars,
    concurrency: o.concurrency,
    skip: o.skip,
  };
}

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
  const skip = new Set(config.skip);
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
