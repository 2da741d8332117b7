/**
 * The framework-agnostic core of the two write webhooks (Add/Update order, Add/Update product):
 * query and body validation, built-in and adapter business checks, and the upsert. The Express
 * binding (auth, rate limit, body limit, JSON parsing, mapping thrown errors to 500) wraps it.
 *
 * Rules (spec "Webhooks" 4–6 and the deployed service's creates; every message is listed in
 * `docs/writes.md`): the query is parsed with the contract's `WRITE_QUERY` (`id` and `jobid` both
 * optional); the body is a JSON object; a body `_id` must equal `id` (a missing one takes it; with
 * no `id`, the body's `_id` is the id; with neither, the write **creates** the item and the store
 * assigns its id: the adapter's `newId`, else a random `<noun>-<uuid>`); the body is checked
 * against the contract schema (unknown members stripped and warned about,
 * `__proto__`/`constructor`/`prototype` refused); any reason refuses the write and nothing is
 * stored; otherwise the item is upserted with `last_updated: 'touch'`, so an unchanged repeat
 * stores nothing and answers the same item.
 *
 * @example
 * ```ts
 * import { guardAdapter } from 'storebridge/adapter';
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
import { randomUUID } from 'node:crypto';
import { mergeMembers, uniqueKeyOf, type IdempotencyStore } from '../adapter';
import type { GuardedAdapter } from '../adapter-guard';
import { entityOf } from '../contract/entities';
import { deeperThan, MAX_JSON_DEPTH } from '../contract/limits';
import { findForbiddenKey, findUnknownFields } from '../contract/parse';
import { parseQuery, WRITE_QUERY } from '../contract/query';
import { FORBIDDEN_CHARACTERS, hasUnpairedSurrogate } from '../contract/webhook';
import type { Entity, ItemOf } from '../contract/entities';
import { AdapterContractError, DuplicateKeyError } from '../errors';
import { urlUnsafeCharacters } from './ids';
import { maxListableItemBytes } from './read-core';
import { alreadyUsed, checkOrder, checkProduct, type CheckContext, type Findings } from './write-checks';
import { idempotentWrite, type WriteOutcome } from './write-identity';
import { capMessages, capReasons, clip, issueReason, quote } from './write-messages';

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
  /** Where Idempotency-Key records are kept when the adapter keeps none (the router's own, in memory). */
  idempotency?: IdempotencyStore;
}

/** What a write knows of its request beyond query and body. */
export interface WriteRequest {
  /** The `Idempotency-Key` header as received (absent: none was sent). */
  readonly idempotencyKey?: string;
  /** Who sent it (the key's digest, `AuthResult.keyHash`): Idempotency-Keys are scoped per caller. */
  readonly caller?: string;
}

export interface CoreResponse {
  status: number;
  body: unknown;
  /** Headers to answer with besides the JSON ones (`Retry-After`, `Idempotent-Replayed`). */
  headers?: Record<string, string>;
}

/**
 * A write's query: the raw query string (with or without `?`), or a record of its parameters as a
 * host parsed them (a repeated parameter as an array; anything else is refused).
 */
export type WriteQuery = string | Readonly<Record<string, unknown>>;

type Json = Record<string, unknown>;

const NO_FINDINGS: Findings = { reasons: [], warnings: [] };

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The kit's own business checks, for the entities that have them (an entity registered besides these
 * has only its schema's checks and the adapter's hook).
 */
const BUILT_IN_CHECKS: { readonly [E in Entity]?: (item: Json, id: string | undefined, ctx: CheckContext) => Promise<Findings> } = {
  products: checkProduct,
  orders: checkOrder,
};

/**
 * The `id` and `jobid` of a write, each checked with its schema in `WRITE_QUERY`; every problem is
 * a reason (`id: query parameter must not be empty`), so one answer reports them all.
 */
function readWriteQuery(query: WriteQuery, reasons: string[]): { id?: string; jobid?: number } {
  let raw: string;
  if (typeof query === 'string') raw = query;
  else {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(isObject(query) ? query : {})) {
      if (value === undefined) continue;
      const values = typeof value === 'string' ? [value] : Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;
      if (!values) {
        if (Object.prototype.hasOwnProperty.call(WRITE_QUERY, name)) reasons.push(`${name}: query parameter must be a plain value, not an object`);
        continue;
      }
      // URLSearchParams would silently turn an unpaired surrogate into U+FFFD: another id than the one asked for.
      if (values.some(hasUnpairedSurrogate)) reasons.push(`${name}: query parameter must not contain ${FORBIDDEN_CHARACTERS}, got ${quote(values.find(hasUnpairedSurrogate))}`);
      else for (const v of values) params.append(name, v);
    }
    raw = params.toString();
  }
  const out: { id?: string; jobid?: number } = {};
  for (const name of Object.keys(WRITE_QUERY) as (keyof typeof WRITE_QUERY)[]) {
    const one = parseQuery({ [name]: WRITE_QUERY[name] }, raw);
    if (one.ok) (out as Record<string, unknown>)[name] = one.values[name];
    else if (!reasons.some((r) => r.startsWith(`${name}: `))) reasons.push(`${name}: query parameter ${one.error.slice(name.length + 1)}`);
  }
  return out;
}

/**
 * The spec's write failure structure (400): also used by the bindings for unreadable bodies, and
 * with 409 / 422 for an Idempotency-Key in use or used for another request.
 */
export function writeFailure(entity: Entity, reasons: readonly string[], warnings: readonly string[], status = 400, headers?: Record<string, string>): CoreResponse {
  const more = reasons.length > 1 ? ` (and ${reasons.length - 1} more)` : '';
  return {
    status,
    ...(headers ? { headers } : {}),
    body: {
      success: false,
      code: status,
      error: `${entityOf(entity).noun} not stored: ${clip(reasons[0])}${more}`,
      reasons: capReasons(reasons, status),
      warnings: capMessages(warnings),
    },
  };
}

/**
 * Validates and performs one Add/Update write. Resolves to the spec's success (200) or failure
 * (400; 409 / 422 for an Idempotency-Key in use or reused) structure; rejects with the adapter's
 * error (`AdapterError`, `AdapterContractError`, or the signal's reason when aborted), which the
 * binding answers as 500.
 */
export async function handleWrite(
  adapter: GuardedAdapter,
  entity: Entity,
  query: WriteQuery,
  body: unknown,
  config: WriteConfig,
  signal: AbortSignal,
  request: WriteRequest = {},
): Promise<CoreResponse> {
  signal.throwIfAborted();
  const reasons: string[] = [];
  const { id: queryId } = readWriteQuery(query, reasons);
  const bodyProblem = checkBodyShape(body, entityOf(entity).noun);
  if (bodyProblem) return writeFailure(entity, [...reasons, bodyProblem], []);
  const write = async () => writeItem(adapter, entity, queryId, body as Json, reasons, config, signal);
  const records = adapter.idempotency ?? config.idempotency;
  if (request.idempotencyKey === undefined || !records) return (await write()).response;
  const ctx = { adapter, records, entity, header: request.idempotencyKey, caller: request.caller ?? '', request: { id: queryId, body }, now: config.now(), signal };
  return idempotentWrite(ctx, (status, reason, headers) => writeFailure(entity, [reason], [], status, headers), write);
}

/** A write that passed every check: the item as parsed, what it removes, whether it creates. */
interface CheckedWrite<E extends Entity> {
  readonly item: ItemOf<E>;
  readonly input: Json;
  readonly removed: readonly string[];
  readonly creating: boolean;
  readonly warnings: string[];
}

/** One write after the query and the body's shape passed: checks, the item it is, the upsert. */
async function writeItem(adapter: GuardedAdapter, entity: Entity, queryId: string | undefined, body: Json, reasons: string[], config: WriteConfig, signal: AbortSignal): Promise<WriteOutcome> {
  const checked = await checkWrite(adapter, entity, queryId, body, reasons, config, signal);
  if ('response' in checked) return checked;
  const { item, input, removed, creating, warnings } = checked;
  let target = creating ? await createTarget(adapter, entity, input, signal) : { id: item._id, matched: false };
  for (let idTries = 1; ; ) {
    try {
      return await upsertItem(adapter, entity, { ...item, _id: target.id }, removed, target.matched, creating && !target.matched, warnings, config, signal);
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      if (err.field === '_id' && creating && !target.matched && idTries++ < ID_TRIES) {
        // Another process created an item under the id assigned to this one (ids such as max + 1): take another.
        target = { id: await assignId(adapter, entity, input, signal), matched: false };
        continue;
      }
      // A concurrent create of the same orderid won: this create is that order (once; then it is an update).
      const holder = creating && !target.matched && entity === 'orders' ? ((await adapter.orderByOrderId(err.value, { signal }))?._id ?? err.holder) : undefined;
      if (holder === undefined) return { response: writeFailure(entity, [alreadyUsed(entity, err.value, err.holder)], warnings) };
      target = { id: holder, matched: true };
    }
  }
}

/** Steps 3–5 of docs/writes.md "Order of checks": the id, the schema, the built-in checks. */
async function checkWrite(
  adapter: GuardedAdapter,
  entity: Entity,
  queryId: string | undefined,
  body: Json,
  reasons: string[],
  config: WriteConfig,
  signal: AbortSignal,
): Promise<CheckedWrite<Entity> | WriteOutcome> {
  const warnings: string[] = [];
  const bodyId = body._id;
  if (bodyId !== undefined && queryId !== undefined && bodyId !== queryId) {
    reasons.push(`_id: ${quote(bodyId)} does not match the id query parameter ${quote(queryId)}`);
  }
  // With a valid `id` the item is exactly that one; without, the body's own `_id` is the id (and is
  // checked like any member); with neither, the write creates the item and the store assigns its id.
  const creating = queryId === undefined && bodyId === undefined && !reasons.some((r) => r.startsWith('id: '));
  const removed = nullMembers(entity, body);
  const input: Json = withoutMembers({ ...body, _id: queryId ?? bodyId }, removed);
  if (input._id === undefined) delete input._id;

  const schema = entityOf(entity).schema;
  const parsed = schema.safeParse(creating ? { ...input, _id: 'x' } : input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      // A refused `id` parameter has its own reason already.
      if (input._id === undefined && issue.path.length === 1 && issue.path[0] === '_id') continue;
      reasons.push(issueReason(issue, input));
    }
  }
  for (const path of findUnknownFields(schema, input)) warnings.push(`${path}: unknown field, ignored`);

  const id = parsed.success && !creating ? parsed.data._id : queryId;
  const ctx = { adapter, signal, allowedOrderStatuses: config.allowedOrderStatuses };
  const builtIn = (await BUILT_IN_CHECKS[entity]?.(input, creating ? undefined : id, ctx)) ?? NO_FINDINGS;
  reasons.push(...builtIn.reasons);
  warnings.push(...builtIn.warnings);
  if (id !== undefined && !creating) {
    const unsafe = urlUnsafeCharacters(id);
    if (unsafe) warnings.push(`_id: ${quote(id)} holds ${unsafe}, which deployed peers put into URLs unencoded; prefer ids without # ? / % or spaces`);
  }
  if (reasons.length > 0 || !parsed.success) return { response: writeFailure(entity, reasons, warnings) };
  return { item: parsed.data as ItemOf<Entity>, input, removed, creating, warnings };
}

/**
 * Stores `ready` as a partial write (members the body left out are kept, those sent as `null` are
 * removed) after the checks that need the item as it will be: its size on a list page and the
 * adapter's own `checkOrder` / `checkProduct`. Answers what was stored and which members were kept.
 */
async function upsertItem<E extends Entity>(
  adapter: GuardedAdapter,
  entity: E,
  ready: ItemOf<E>,
  removed: readonly string[],
  matched: boolean,
  create: boolean,
  findings: readonly string[],
  config: WriteConfig,
  signal: AbortSignal,
): Promise<WriteOutcome> {
  const d = entityOf(entity);
  const warnings = [...findings];
  const store = adapter.entity(entity);
  const existing = await store.get(ready._id, { signal });
  const whole = existing ? mergeMembers(existing, ready, removed) : ready;
  const tooLarge = listableProblem(whole, entity, config.maxPageBytes);
  if (tooLarge) return { response: writeFailure(entity, [tooLarge], warnings) };
  // The adapter's own checks see only items that passed everything else (see StoreAdapter.checkOrder).
  const own = await store.check(whole, { signal });
  if (own.length > 0) return { response: writeFailure(entity, own, warnings) };

  // The binding may already have answered a timed-out request: never write after that.
  signal.throwIfAborted();
  const result = await store.upsert(ready, { lastUpdated: 'touch', now: config.now(), signal, merge: { remove: removed }, ...(create ? { create } : {}) });
  const kept = Object.keys(result.item).filter((m) => !Object.prototype.hasOwnProperty.call(ready, m) && m !== 'last_updated');
  if (kept.length > 0) warnings.push(`body: members the body leaves out were kept from the stored ${d.noun}: ${kept.join(', ')} (a write replaces only the members it carries; send a member as null to remove it)`);
  if (matched && result.changed) {
    warnings.push(`orderid: ${quote((ready as { orderid?: string }).orderid)} already names order ${quote(ready._id)}: this create was written to that order instead of making a second one`);
  }
  const body = { success: true, code: 200, warnings: capMessages(warnings), [d.noun]: result.item };
  return { response: { status: 200, body }, outcome: { entity, id: ready._id, warnings } };
}

/**
 * The item a create writes: for an order whose `orderid` an order already has, that order (a
 * repeat of the create, e.g. a retry after a lost reply); otherwise a new id.
 */
async function createTarget(adapter: GuardedAdapter, entity: Entity, item: Json, signal: AbortSignal): Promise<{ id: string; matched: boolean }> {
  const orderid = entity === 'orders' ? uniqueKeyOf(entity, item) : undefined;
  const holder = orderid === undefined ? undefined : await adapter.orderByOrderId(orderid, { signal });
  return holder ? { id: holder._id, matched: true } : { id: await assignId(adapter, entity, item, signal), matched: false };
}

/** Top-level members the body sends as `null`: a write removes them from the stored item (not `_id` or `last_updated`). */
function nullMembers(entity: Entity, item: Json): string[] {
  return Object.keys(entityOf(entity).schema.shape).filter((m) => m !== '_id' && m !== 'last_updated' && Object.prototype.hasOwnProperty.call(item, m) && item[m] === null);
}

function withoutMembers(item: Json, members: readonly string[]): Json {
  for (const m of members) delete item[m];
  return item;
}

/** Why a body cannot be an item at all (not an object, too deep, a forbidden key), or nothing. */
function checkBodyShape(body: unknown, noun: string): string | undefined {
  if (!isObject(body)) return `body: must be a JSON object (the complete ${noun}), got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`;
  if (deeperThan(body, MAX_JSON_DEPTH)) return `body: nested more than ${MAX_JSON_DEPTH} levels deep`;
  const forbidden = findForbiddenKey(body);
  return forbidden ? `${forbidden}: this key name is not allowed` : undefined;
}

/** Tries of a generated id before giving up (each is a random UUID: one retry is already a miracle). */
const ID_TRIES = 3;

/**
 * The id of an item being created: the adapter's `newId`, else `<noun>-<random UUID>` that no
 * stored item has. Either way it is safe in a raw URL (docs/wire-decisions.md "Ids").
 */
async function assignId(adapter: GuardedAdapter, entity: Entity, item: Json, signal: AbortSignal): Promise<string> {
  const own = await adapter.newId(entity, item as Omit<ItemOf<typeof entity>, '_id'>, { signal });
  if (own !== undefined) {
    const unsafe = urlUnsafeCharacters(own);
    if (unsafe) throw new AdapterContractError('newId', `returned ${JSON.stringify(own.slice(0, 80))}, which holds ${unsafe}: the ids the store assigns must be safe in a raw URL`);
    return own;
  }
  const store = adapter.entity(entity);
  for (let i = 0; i < ID_TRIES; i++) {
    const id = `${entityOf(entity).noun}-${randomUUID()}`;
    if ((await store.get(id, { signal })) === undefined) return id;
  }
  throw new AdapterContractError('get', `every generated id was taken (${ID_TRIES} random UUIDs): the store answers get() for ids it does not hold`);
}

/** The item as it will be listed must fit an empty page: `last_updated` (13 digits until 2286) is the store's. */
function listableProblem(item: { _id: string }, entity: Entity, maxPageBytes: number | undefined): string | undefined {
  if (maxPageBytes === undefined) return undefined;
  const bytes = Buffer.byteLength(JSON.stringify({ ...item, last_updated: 9_999_999_999_999 }), 'utf8');
  const limit = maxListableItemBytes(entity, maxPageBytes, item._id.length);
  if (bytes <= limit) return undefined;
  return `body: the ${entityOf(entity).noun} is ${bytes} bytes as JSON, more than the ${limit} bytes one list page can hold (page budget ${maxPageBytes} bytes); it could never be listed`;
}
