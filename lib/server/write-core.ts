/**
 * The framework-agnostic core of the two write webhooks (Add/Update order, Add/Update product):
 * query and body validation, built-in and adapter business checks, and the upsert. The Express
 * binding (auth, rate limit, body limit, JSON parsing, mapping thrown errors to 500) wraps it.
 *
 * Rules (spec "Webhooks" 4–6, DESIGN.md "Writes"; every message is listed in `docs/writes.md`):
 * `id` and `jobid` are required; the body is a JSON object; a body `_id` must equal `id` (a missing
 * one takes it); the body is checked against the contract schema (unknown members stripped and
 * warned about, `__proto__`/`constructor`/`prototype` refused); any reason refuses the write and
 * nothing is stored; otherwise the item is upserted with `last_updated: 'touch'`, so an unchanged
 * repeat stores nothing and answers the same item.
 *
 * @example
 * ```ts
 * import { guardAdapter } from 'storebridge';
 * import { createMemoryAdapter } from 'storebridge/adapters/memory';
 * import { handleWrite } from 'storebridge/server';
 *
 * const adapter = guardAdapter(createMemoryAdapter({ products: [{ _id: 'p1', sku: 'MUG-1' }] }));
 * const config = { allowedOrderStatuses: new Set(['pending', 'paid']), now: () => Date.now() };
 * const res = await handleWrite(adapter, 'orders', { jobid: '7', id: 'o1' },
 *   { status: 'paid', orderItems: [{ id: 'MUG-1', quantity: 2 }] }, config, AbortSignal.timeout(55_000));
 * // res.status === 200, res.body.order.last_updated is now
 * ```
 */
import type { GuardedAdapter } from '../adapter-guard';
import { deeperThan, MAX_JSON_DEPTH } from '../contract/limits';
import { findForbiddenKey, findUnknownFields } from '../contract/parse';
import { ITEM_SCHEMAS, MAX_ID_LENGTH, SINGULAR, type Entity } from '../contract/webhook';
import { maxListableItemBytes } from './read-core';
import { checkOrder, checkProduct, type Findings } from './write-checks';
import { capMessages, clip, issueReason, quote } from './write-messages';

export interface WriteConfig {
  /** Order statuses a write may carry; `null` accepts any (uncommon ones are warned about). */
  allowedOrderStatuses: ReadonlySet<string> | null;
  /** The clock (Unix ms) that `last_updated` is set from. */
  now(): number;
  /**
   * The list page budget (the router's `maxPageBytes`). When given, an item too large to fit on a
   * list page by itself is refused: stored, it would stop every walk of the list at its position.
   */
  maxPageBytes?: number;
}

export interface CoreResponse {
  status: number;
  body: unknown;
}

const NOUN = { orders: 'order', products: 'product' } as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value of a query parameter the client sent once, as a string, or a reason why not. */
function singleParam(query: Record<string, unknown>, name: string): { value?: string; reason?: string } {
  const raw = isObject(query) && Object.prototype.hasOwnProperty.call(query, name) ? query[name] : undefined;
  if (raw === undefined) return { reason: `${name}: query parameter is required` };
  if (Array.isArray(raw)) return { reason: `${name}: query parameter must be given once, got ${raw.length} values` };
  if (typeof raw !== 'string') return { reason: `${name}: query parameter must be a plain value, not an object` };
  return { value: raw };
}

function readId(query: Record<string, unknown>, reasons: string[]): string | undefined {
  const { value, reason } = singleParam(query, 'id');
  if (reason) reasons.push(reason);
  else if (value === '') reasons.push('id: query parameter must not be empty');
  else if (value!.length > MAX_ID_LENGTH) reasons.push(`id: query parameter must be at most ${MAX_ID_LENGTH} characters, got ${value!.length}`);
  else return value;
  return undefined;
}

function readJobId(query: Record<string, unknown>, reasons: string[]): void {
  const { value, reason } = singleParam(query, 'jobid');
  if (reason) reasons.push(reason);
  else if (!/^-?\d{1,16}$/.test(value!) || !Number.isSafeInteger(Number(value))) {
    reasons.push(`jobid: query parameter must be an integer, got ${quote(value)}`);
  }
}

/** The spec's write failure structure (400): also used by the binding for unreadable bodies. */
export function writeFailure(entity: Entity, reasons: readonly string[], warnings: readonly string[]): CoreResponse {
  const more = reasons.length > 1 ? ` (and ${reasons.length - 1} more)` : '';
  return {
    status: 400,
    body: {
      success: false,
      code: 400,
      error: `${NOUN[entity]} not stored: ${clip(reasons[0])}${more}`,
      reasons: capMessages(reasons),
      warnings: capMessages(warnings),
    },
  };
}

/**
 * Validates and performs one Add/Update write. Resolves to the spec's success (200) or failure
 * (400) structure; rejects with the adapter's error (`AdapterError`, `AdapterContractError`, or
 * the signal's reason when aborted), which the binding answers as 500.
 */
export async function handleWrite(
  adapter: GuardedAdapter,
  entity: Entity,
  query: Record<string, unknown>,
  body: unknown,
  config: WriteConfig,
  signal: AbortSignal,
): Promise<CoreResponse> {
  signal.throwIfAborted();
  const noun = NOUN[entity];
  const reasons: string[] = [];
  const warnings: string[] = [];
  const id = readId(query, reasons);
  readJobId(query, reasons);

  if (!isObject(body)) {
    reasons.push(`body: must be a JSON object (the complete ${noun}), got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`);
    return writeFailure(entity, reasons, warnings);
  }
  if (deeperThan(body, MAX_JSON_DEPTH)) {
    reasons.push(`body: nested more than ${MAX_JSON_DEPTH} levels deep`);
    return writeFailure(entity, reasons, warnings);
  }
  const forbidden = findForbiddenKey(body);
  if (forbidden) {
    reasons.push(`${forbidden}: this key name is not allowed`);
    return writeFailure(entity, reasons, warnings);
  }

  const bodyId = body._id;
  if (bodyId !== undefined && id !== undefined && bodyId !== id) {
    reasons.push(`_id: ${quote(bodyId)} does not match the id query parameter ${quote(id)}`);
  }
  // With a valid `id` the item is exactly that one; otherwise the write fails anyway and the
  // body's own `_id` is still checked so every problem is reported at once.
  const input: Record<string, unknown> = { ...body, _id: id ?? bodyId };
  if (id === undefined && bodyId === undefined) delete input._id;

  const schema = ITEM_SCHEMAS[entity];
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (input._id === undefined && issue.path.length === 1 && issue.path[0] === '_id') continue;
      reasons.push(issueReason(issue, input));
    }
  }
  for (const path of findUnknownFields(schema, input)) warnings.push(`${path}: unknown field, ignored`);

  const ctx = { adapter, signal, allowedOrderStatuses: config.allowedOrderStatuses };
  const builtIn: Findings = entity === 'orders' ? await checkOrder(input, ctx) : await checkProduct(input, id, ctx);
  reasons.push(...builtIn.reasons);
  warnings.push(...builtIn.warnings);

  if (parsed.success && id !== undefined && config.maxPageBytes !== undefined) {
    // The item as it will be listed: `last_updated` (13 digits until the year 2286) is the store's.
    const bytes = Buffer.byteLength(JSON.stringify({ ...parsed.data, last_updated: 9_999_999_999_999 }), 'utf8');
    const limit = maxListableItemBytes(entity, config.maxPageBytes, id.length);
    if (bytes > limit) {
      reasons.push(`body: the ${noun} is ${bytes} bytes as JSON, more than the ${limit} bytes one list page can hold (page budget ${config.maxPageBytes} bytes); it could never be listed`);
    }
  }

  if (reasons.length > 0 || !parsed.success || id === undefined) return writeFailure(entity, reasons, warnings);

  // The adapter's own checks see only items that passed everything else (see StoreAdapter.checkOrder).
  const store = adapter.entity(entity);
  const own = await store.check(parsed.data as never, { signal });
  if (own.length > 0) return writeFailure(entity, own, warnings);

  // The binding may already have answered a timed-out request: never write after that.
  signal.throwIfAborted();
  const { item } = await store.upsert(parsed.data as never, { lastUpdated: 'touch', now: config.now(), signal });
  return {
    status: 200,
    body: { success: true, code: 200, warnings: capMessages(warnings), [SINGULAR[entity]]: item },
  };
}
