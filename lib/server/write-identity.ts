/**
 * Which item a write is, across retries: the `Idempotency-Key` header (a repeat is answered from
 * the first request's record) and the `orderid` of an order create (a create whose `orderid` an
 * order already has is that order). docs/writes.md "Creates" and "Idempotency-Key" have the rules.
 */
import { createHash } from 'node:crypto';
import type { GuardedAdapter } from '../adapter-guard';
import type { IdempotencyOutcome, IdempotencyRecord, IdempotencyStore } from '../adapter';
import { entityOf } from '../contract/entities';
import { AdapterContractError } from '../errors';
import { IDEMPOTENCY_KEY_HEADER, IdempotencyKeySchema } from '../contract/webhook';
import type { Entity } from '../contract/entities';
import { capMessages } from './write-messages';

/** How long a completed write's record answers repeats of its key (Stripe keeps keys 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a claim of a request still running blocks its key (409 meanwhile): longer than any
 * write may run (the 1-minute limit), so a claim left by a crashed process frees itself.
 */
export const IN_FLIGHT_TTL_MS = 2 * 60 * 1000;

/** What one write did, for the record of its key: `undefined` when it stored nothing (refused). */
export interface WriteOutcome {
  readonly response: { status: number; body: unknown; headers?: Record<string, string> };
  readonly outcome?: IdempotencyOutcome;
}

export interface IdempotencyContext {
  readonly adapter: GuardedAdapter;
  /** The adapter's records, or the router's own. */
  readonly records: IdempotencyStore;
  readonly entity: Entity;
  /** The header as received. */
  readonly header: string;
  /** Who sent it (the key's digest): keys are scoped per caller. */
  readonly caller: string;
  /** The request as sent: the `id` parameter and the body (a repeat must carry the same). */
  readonly request: { readonly id: string | undefined; readonly body: unknown };
  readonly now: number;
  readonly signal: AbortSignal;
}

type Refusal = (status: number, reason: string, headers?: Record<string, string>) => WriteOutcome['response'];

/**
 * Runs `write` once per key: the first request claims the key and records what it wrote; a repeat
 * with the same request is answered from the record (the item as stored now, the first answer's
 * warnings, `Idempotent-Replayed: true`), stores nothing, and never runs `write`. A repeat while the
 * first still runs is a 409; the key with another request is a 422 (IETF draft "The
 * Idempotency-Key HTTP Header Field"). A write that stored nothing (a 400, a failure) frees the key.
 */
export async function idempotentWrite(ctx: IdempotencyContext, refuse: Refusal, write: () => Promise<WriteOutcome>): Promise<WriteOutcome['response']> {
  const parsed = IdempotencyKeySchema.safeParse(unquote(ctx.header));
  if (!parsed.success) return refuse(400, `${IDEMPOTENCY_KEY_HEADER}: ${parsed.error.issues[0].message}`);
  const key = digest(`${ctx.caller}\n${parsed.data}`);
  const fingerprint = digest(canonicalJson([ctx.entity, ctx.request.id ?? null, ctx.request.body]));
  const opts = { signal: ctx.signal };
  const live = await ctx.records.claim(key, { fingerprint, expiresAt: ctx.now + IN_FLIGHT_TTL_MS }, { ...opts, now: ctx.now });
  if (live) return answerRepeat(ctx, live, fingerprint, refuse);
  let done: WriteOutcome;
  try {
    done = await write();
  } catch (err) {
    await ctx.records.release(key, fingerprint, opts).catch(() => undefined);
    throw err;
  }
  if (done.outcome) await ctx.records.settle(key, { fingerprint, expiresAt: ctx.now + IDEMPOTENCY_TTL_MS, outcome: done.outcome }, opts);
  else await ctx.records.release(key, fingerprint, opts);
  return done.response;
}

async function answerRepeat(ctx: IdempotencyContext, live: IdempotencyRecord, fingerprint: string, refuse: Refusal): Promise<WriteOutcome['response']> {
  if (live.fingerprint !== fingerprint) {
    return refuse(422, `${IDEMPOTENCY_KEY_HEADER}: this key was already used for another request (another body, id or entity); send a new key with a new request`);
  }
  if (!live.outcome) return refuse(409, `${IDEMPOTENCY_KEY_HEADER}: the first request with this key is still being processed; retry in a moment`, { 'retry-after': '1' });
  const { entity, id, warnings } = live.outcome;
  const item = await ctx.adapter.entity(entity).get(id, { signal: ctx.signal });
  // Nothing in the kit deletes items: one gone was removed behind the store's back.
  if (!item) throw new AdapterContractError('get', `the ${entityOf(entity).noun} ${JSON.stringify(id)} written under an ${IDEMPOTENCY_KEY_HEADER} is gone`);
  const body = { success: true, code: 200, warnings: capMessages(warnings), [entityOf(entity).noun]: item };
  return { status: 200, body, headers: { 'idempotent-replayed': 'true' } };
}

/** A Structured Field string (`"abc"`, the draft's form) or a bare value (Stripe's form). */
function unquote(header: string): string {
  const v = header.trim();
  return v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1).replace(/\\(["\\])/g, '$1') : v;
}

function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** JSON with object members in code-unit order at every depth: one text per value, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
