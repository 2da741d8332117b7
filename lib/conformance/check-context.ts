/**
 * What the endpoint checks share: the caller they use (no retries), the list of results, and the
 * full walks they read once and judge several times.
 */
import type { Entity, ItemOf } from '../contract/entities';
import type { SortOrder } from '../contract/messages';
import type { StoreClient } from '../client/store-client';
import type { WalkSummary } from '../client/catalog-walk';
import type { InvalidItem, ItemStub } from '../client/store-reply';
import { redact } from '../client/client-transport';

/**
 * `must`: a rule the interface's text states (401 on a bad key, the list shape, the sort order, no
 * duplicates or skips, pages ≤ 10 MB, the write structures). `should`: hardening (400 on a bad
 * parameter) and compatibility with deployed peers (`C2SKey`, `?id=`, optional `sortorder` and
 * `jobid`). Only `must` failures fail a check run, unless it is strict.
 */
export type CheckLevel = 'must' | 'should';

export interface CheckResult {
  /** Stable identifier, e.g. `products.paging-asc`. */
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly level: CheckLevel;
}

/** A full walk of one entity in one order, kept for several checks. */
export interface Capture<E extends Entity> {
  items: ItemOf<E>[];
  /** Entries of an ids-only list (`{_id, last_updated}`): the items are read by ID. */
  stubs: ItemStub[];
  invalid: InvalidItem[];
  summary: WalkSummary;
  error?: Error;
}

export interface CheckContext {
  readonly client: StoreClient;
  readonly key: string;
  readonly jobid: number;
  readonly byIdSamples: number;
  readonly signal: AbortSignal | undefined;
  readonly checks: CheckResult[];
  /** Records a result (the key redacted from its detail) and reports it. */
  add(name: string, level: CheckLevel, ok: boolean, detail: string): void;
}

export function createCheckContext(client: StoreClient, options: { key: string; jobid: number; byIdSamples: number; signal?: AbortSignal; onCheck?: (c: CheckResult) => void }): CheckContext {
  const checks: CheckResult[] = [];
  return {
    client,
    key: options.key,
    jobid: options.jobid,
    byIdSamples: options.byIdSamples,
    signal: options.signal,
    checks,
    add(name, level, ok, detail) {
      const c: CheckResult = { name, ok, detail: redact(detail, options.key), level };
      checks.push(c);
      options.onCheck?.(c);
    },
  };
}

/** Walks the whole entity in one order, keeping what it read; a failure is kept, not thrown. */
export async function capture<E extends Entity>(ctx: CheckContext, entity: E, sortorder: SortOrder): Promise<Capture<E>> {
  const walk = ctx.client.walk(entity, { jobid: ctx.jobid, sortorder, signal: ctx.signal });
  const out: Capture<E> = { items: [], stubs: [], invalid: [], summary: walk.summary };
  try {
    for await (const page of walk.pages()) {
      out.items.push(...page.fresh);
      out.stubs.push(...page.freshStubs);
      out.invalid.push(...page.invalid);
    }
  } catch (err) {
    out.error = err as Error;
  }
  return out;
}

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The detail of a check that could not run because a walk failed. */
export const failed = (c: Capture<Entity>): string => `could not be checked: the ${c.summary.pages ? 'walk stopped' : 'first page failed'} (${c.error!.message})`;

/** Whether a body is a JSON object with a string `error`. */
export function hasErrorMember(text: string): boolean {
  try {
    return typeof (JSON.parse(text) as { error?: unknown }).error === 'string';
  } catch {
    return false;
  }
}

/** What a body that is not JSON said, for a detail: ` with the text "401 Unauthorized"`, or nothing. */
export function textOf(text: string): string {
  try {
    JSON.parse(text);
    return '';
  } catch {
    const t = text.trim().replace(/\s+/g, ' ');
    return t === '' ? ' with an empty body' : ` with the text ${JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t)}`;
  }
}
