/**
 * Endpoint conformance checks: run them against any store (this kit's or one written in another
 * language) before it goes live. Modelled on connector acceptance tests: each check has a stable
 * name, a level, passes or fails, and says why. `docs/check.md` describes every check.
 *
 * Levels: `must` checks are the interface's own rules; `should` checks are hardening and
 * compatibility with the deployed Click2Sync peers. A store that fails only `should` checks passes
 * with warnings (`strict` makes those fail too).
 *
 * The checks are strict about transport on purpose: the caller they use does not retry, so a store
 * that drops connections, answers 5xx, rate limits or stalls fails the reads it broke.
 */
import type { Entity } from '../contract/entities';
import { InvalidOptionError } from '../errors';
import { defineOptions, opt } from '../options';
import { createStoreClient } from '../client/store-client';
import type { StoreClientOptions } from '../client/client-options';
import { createCheckContext, type Capture, type CheckContext, type CheckResult } from './check-context';
import { checkAuth, checkParameters } from './check-requests';
import { checkItems, checkOrder, checkPageLimits, checkPaging, checkStableReads, readWalks } from './check-walks';
import { checkById } from './check-by-id';
import { checkWrites } from './check-writes';

export type { CheckLevel, CheckResult } from './check-context';
export { PAGE_BYTES_LIMIT, PAGE_TIME_LIMIT_MS } from './check-walks';

export interface CheckReport {
  /** No `must` check failed (with `strict`: no check failed at all). */
  readonly ok: boolean;
  readonly checks: CheckResult[];
}

export interface EndpointCheckOptions extends Omit<StoreClientOptions, 'retry' | 'hooks'> {
  /** Also probe add/update order (creates, then updates, one test order in the store). */
  writes?: boolean;
  /** Failing `should` checks fail the run too (default false: they are warnings). */
  strict?: boolean;
  /** The `jobid` sent (default 1; writes use `jobid` and `jobid + 1`). */
  jobid?: number;
  /** Called as each check finishes (for live output). */
  onCheck?: (check: CheckResult) => void;
  /** How many items are read back by ID per entity (default 5). */
  byIdSamples?: number;
  signal?: AbortSignal;
}

/** The checker's own options (`lib/options.ts`); the others are the client's, which `createStoreClient` reads. */
const parseCheckOptions = defineOptions('checkEndpoints', {
  writes: opt.boolean().default(false),
  strict: opt.boolean().default(false),
  jobid: opt.int({ min: 0 }).default(1),
  onCheck: opt.fn<(check: CheckResult) => void>().optional(),
  byIdSamples: opt.int({ min: 0 }).default(5),
  signal: opt.object<AbortSignal>('an AbortSignal', (s) => s instanceof AbortSignal).optional(),
});

/** Every check of one entity, in order; returns its asc walk (the write checks pick a product from it). */
async function checkEntity(ctx: CheckContext, entity: Entity): Promise<Capture<Entity>> {
  await checkAuth(ctx, entity);
  await checkParameters(ctx, entity);
  const walks = await readWalks(ctx, entity);
  checkPaging(ctx, entity, walks);
  checkOrder(ctx, entity, walks);
  checkPageLimits(ctx, entity, walks);
  checkItems(ctx, entity, walks);
  await checkById(ctx, entity, walks.asc);
  await checkStableReads(ctx, entity, walks.asc);
  return walks.asc;
}

/** Whether a report passes: no `must` failure (strict: no failure). */
export function passes(checks: readonly CheckResult[], strict = false): boolean {
  return checks.every((c) => c.ok || (!strict && c.level === 'should'));
}

/**
 * Runs every endpoint check against a store.
 *
 * @example
 * ```ts
 * import { checkEndpoints } from 'storebridge/conformance';
 * const report = await checkEndpoints({ baseUrl: 'http://127.0.0.1:8080', svcKey: process.env.SVC_KEY!, writes: true });
 * for (const c of report.checks) console.log(c.ok ? 'PASS' : c.level === 'must' ? 'FAIL' : 'WARN', c.name, c.detail);
 * ```
 */
export async function checkEndpoints(options: EndpointCheckOptions): Promise<CheckReport> {
  if (options === null || typeof options !== 'object') parseCheckOptions(options); // refused: not an options object
  const { writes: w, strict: s, jobid: j, onCheck: c, byIdSamples: b, signal: sig, ...clientOptions } = options;
  const { writes, strict, jobid, onCheck, byIdSamples, signal } = parseCheckOptions({ writes: w, strict: s, jobid: j, onCheck: c, byIdSamples: b, signal: sig });
  const client = createStoreClient({ ...clientOptions, retry: 0 });
  if (writes && !client.config.entities.includes('orders')) throw new InvalidOptionError('writes', 'probes order writes: the connection needs an orders URL (or a base URL)');
  const ctx = createCheckContext(client, { key: options.svcKey, jobid, byIdSamples, signal, onCheck });
  const walks: Partial<Record<Entity, Capture<Entity>>> = {};
  // A connection may cover a subset of the entities (a products-only store): those are checked.
  for (const entity of client.config.entities) walks[entity] = await checkEntity(ctx, entity);
  if (writes) await checkWrites(ctx, walks.products as Capture<'products'> | undefined);
  return { ok: passes(ctx.checks, strict), checks: ctx.checks };
}
