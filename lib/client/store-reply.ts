/**
 * The tolerant reader of store replies: list pages, by-ID answers and write results as this kit's
 * stores send them, and as real-world stores do (the deployed Click2Sync examples: text bodies at
 * HTTP 200, `next: ""`, offsets and totals as strings, placeholder totals, ids-only lists, bare
 * by-ID objects, `{success:true}` alone). Items go through the contract's `readItem`, so an item is
 * kept only when it is valid after its lossless normalisations. Every normalisation is counted by
 * kind, for the caller to report as a warning; nothing is changed silently.
 */
import { entityOf } from '../contract/entities';
import { readItem, type NormalisationKind } from '../contract/item-reader';
import type { Paging, WriteMessage } from '../contract/messages';
import { parseWire } from '../contract/parse';
import { MAX_BY_IDS } from '../contract/limits';
import { BY_IDS_HEADER, hasForbiddenCharacter, MAX_ID_LENGTH } from '../contract/webhook';
import type { Entity, ItemOf } from '../contract/entities';
import { StoreAuthError, StoreContractError, type StoreErrorContext } from './client-errors';
import type { HttpResponse } from './client-transport';

/** What the reader changed or noted in a reply, beyond the items' own normalisations. */
export const REPLY_NORMALISATION_KINDS = [
  /** `paging.next` was `""` or `null`: read as absent (the deployed cursor stores end a walk so). */
  'next-empty',
  /** `paging.next` was a number: read as its text. */
  'next-from-number',
  /** `paging.offset` was a numeric string (PHP echoing `$_GET`). */
  'offset-from-string',
  /** `paging.offset` was not a count (`null`, an array): ignored (the walk counts what it received). */
  'offset-unusable',
  /** `paging.pageSize` was a numeric string. */
  'page-size-from-string',
  /** `paging.pageSize` was missing or not a count: read as 0 (the walk never relies on it). */
  'page-size-unusable',
  /** `paging.itemsTotal` was a numeric string. */
  'items-total-from-string',
  /** `paging.itemsTotal` was missing or not a count (a row array): the walk ends on an empty page. */
  'items-total-unusable',
  /** `paging.itemsTotal` was a placeholder (999, 9999, …) that the items received did not match. */
  'items-total-placeholder',
  /** An item member this kit does not know: dropped (never stored). */
  'unknown-member-dropped',
  /** A JSON body labelled with another content type (`text/html`: PHP's default). */
  'content-type-not-json',
  /** A by-ID answer that was a one-item list instead of the item. */
  'by-id-from-list',
  /** A write answered `{success:true}` without the item (or with only its `_id`): the item sent is taken as stored. */
  'write-success-without-item',
  /** A write failure in the deployed form (`reasons[].message`, `code` 403, `message` for `error`). */
  'write-failure-deployed-form',
  /** Items without `last_updated` (deployed cursor stores send none): their sort order is not checked. */
  'last-updated-missing',
] as const;
export type ReplyNormalisationKind = (typeof REPLY_NORMALISATION_KINDS)[number];
/** Every kind of warning a read can count: the item reader's and the reply reader's. */
export type NormalisationCountKind = NormalisationKind | ReplyNormalisationKind;
/** How many times each normalisation happened. */
export type NormalisationCounts = Partial<Record<NormalisationCountKind, number>>;

/** Adds `n` of `kind` to `counts`. */
export function countNormalisation(counts: NormalisationCounts, kind: NormalisationCountKind, n = 1): void {
  if (n > 0) counts[kind] = (counts[kind] ?? 0) + n;
}

/** Adds every count of `from` to `into`. */
export function addNormalisations(into: NormalisationCounts, from: NormalisationCounts | undefined): NormalisationCounts {
  if (from) for (const [kind, n] of Object.entries(from)) countNormalisation(into, kind as NormalisationCountKind, n);
  return into;
}

/** The sum of all counts. */
export const totalNormalisations = (counts: NormalisationCounts): number => Object.values(counts).reduce<number>((a, n) => a + (n ?? 0), 0);

/** An item of an ids-only list: only its id and `last_updated` (its content is fetched by ID). */
export interface ItemStub {
  readonly _id: string;
  readonly last_updated?: number;
  /** Position in its page. */
  readonly index: number;
}

/** An item that failed the contract schema: quarantined, never yielded. */
export interface InvalidItem {
  readonly entity: Entity;
  /** Position in its page. */
  readonly index: number;
  readonly _id?: string;
  readonly error: string;
}

/** One list reply, read. */
export interface ReadPage<E extends Entity> {
  readonly paging: Paging;
  /** False when `itemsTotal` is a placeholder (999, 9999, …) or unusable: only an empty page ends an offset walk. */
  readonly totalKnown: boolean;
  /** What the store sent for `itemsTotal` when it was not a count (JSON text, cut at 80 characters); `paging.itemsTotal` is then 0 and means nothing. */
  readonly unusableItemsTotal?: string;
  readonly items: ItemOf<E>[];
  readonly stubs: ItemStub[];
  readonly invalid: InvalidItem[];
  readonly normalisations: NormalisationCounts;
}

const excerpt = (text: string) => {
  const t = text.trim().replace(/\s+/g, ' ');
  return t.length > 80 ? `${t.slice(0, 80)}…` : t;
};

/** A text a store answers instead of JSON to refuse a key (`401 Unauthorized`, `Unauthorized`, `401 Unauthorized in this example`). */
const REFUSED_KEY_TEXT = /^(?:HTTP\/\S+\s+)?(?:401\b|unauthori[sz]ed\b|access denied\b|forbidden\b)/i;

/**
 * The JSON body of a reply (any 2xx, or a status the caller accepted). A text body that refuses
 * the key is a `StoreAuthError`; any other text is a `StoreContractError` quoting it.
 */
export function replyJson(res: HttpResponse, ctx: StoreErrorContext, counts?: NormalisationCounts): unknown {
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    const text = excerpt(res.text);
    if (REFUSED_KEY_TEXT.test(text)) {
      throw new StoreAuthError(ctx, `the store refused the key: it answered with the text "${text}" instead of JSON (deployed PHP stores refuse a key so, at HTTP 200)`);
    }
    throw new StoreContractError(ctx, text === '' ? 'the body is empty, not JSON' : `the body is not JSON: "${text}"`);
  }
  const type = res.headers.get('content-type');
  if (counts && type !== null && !/\bjson\b/i.test(type)) countNormalisation(counts, 'content-type-not-json');
  return body;
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const NON_NEGATIVE_INTEGER_TEXT = /^\s*\d{1,15}\s*$/;

/** A count as a store wrote it: an integer, or a numeric string (`kind` counted). `undefined`: not a count. */
function countOf(value: unknown, kind: NormalisationCountKind, counts: NormalisationCounts): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && NON_NEGATIVE_INTEGER_TEXT.test(value)) {
    countNormalisation(counts, kind);
    return Number(value);
  }
  return undefined;
}

/** 999, 9999, 99999…: the totals deployed stores send when they do not know theirs. */
export const isPlaceholderTotal = (n: number): boolean => n >= 999 && /^9+$/.test(String(n));

/** `paging`, tolerantly; a string says what makes it unreadable. */
function readPaging(raw: unknown, counts: NormalisationCounts): { paging: Paging; totalKnown: boolean; unusableItemsTotal?: string } | string {
  if (!isRecord(raw)) return 'paging is missing or not an object';
  let pageSize = countOf(raw.pageSize, 'page-size-from-string', counts);
  if (pageSize === undefined) {
    countNormalisation(counts, 'page-size-unusable');
    pageSize = 0;
  }
  let itemsTotal = countOf(raw.itemsTotal, 'items-total-from-string', counts);
  const totalKnown = itemsTotal !== undefined && !isPlaceholderTotal(itemsTotal);
  let unusableItemsTotal: string | undefined;
  if (itemsTotal === undefined) {
    countNormalisation(counts, 'items-total-unusable');
    itemsTotal = 0;
    unusableItemsTotal = raw.itemsTotal === undefined ? '(missing)' : excerpt(JSON.stringify(raw.itemsTotal));
  }
  const paging: { -readonly [K in keyof Paging]: Paging[K] } = { pageSize, itemsTotal };
  if (raw.offset !== undefined) {
    const offset = countOf(raw.offset, 'offset-from-string', counts);
    if (offset === undefined) countNormalisation(counts, 'offset-unusable');
    else paging.offset = offset;
  }
  const next = raw.next;
  if (typeof next === 'string' && next !== '') paging.next = next;
  else if (typeof next === 'number' && Number.isFinite(next)) {
    paging.next = String(next);
    countNormalisation(counts, 'next-from-number');
  } else if (next === '' || next === null) countNormalisation(counts, 'next-empty');
  else if (next !== undefined) return `paging.next must be a string, got ${Array.isArray(next) ? 'an array' : typeof next}`;
  return unusableItemsTotal === undefined ? { paging, totalKnown } : { paging, totalKnown, unusableItemsTotal };
}

/**
 * Whether a listed object is a stub of an ids-only list: nothing but the id (`_id` and/or the
 * natural key, `sku` / `orderid`) and `last_updated`. Decided on the members as sent, before any
 * unknown member is stripped, so a full item is never mistaken for a stub.
 */
export function isStubShape(entity: Entity, raw: unknown): boolean {
  if (!isRecord(raw)) return false;
  const natural = entityOf(entity).naturalKey;
  let id = false;
  for (const key in raw) {
    if (key === '_id' || key === natural) id = true;
    else if (key !== 'last_updated') return false;
  }
  return id;
}

function countItemNormalisations(counts: NormalisationCounts, normalisations: ReadonlyArray<{ kind: NormalisationKind }>, unknownFields: readonly string[]): void {
  for (const n of normalisations) countNormalisation(counts, n.kind);
  countNormalisation(counts, 'unknown-member-dropped', unknownFields.length);
}

const idOf = (entity: Entity, x: unknown): string | undefined => {
  if (!isRecord(x)) return undefined;
  const id = x._id ?? x[entityOf(entity).naturalKey];
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
};

/**
 * Reads one item as a store sent it: the schema first (an item in the webhook form needs nothing
 * else), else the contract's tolerant `readItem`. Valid afterwards, or an error.
 */
export function readStoreItem<E extends Entity>(entity: E, raw: unknown, label: string, counts: NormalisationCounts): { ok: true; item: ItemOf<E> } | { ok: false; error: string } {
  const schema = entityOf(entity).schema;
  const fast = parseWire(schema, raw, label);
  if (fast.ok) {
    countNormalisation(counts, 'unknown-member-dropped', fast.unknownFields.length);
    return { ok: true, item: fast.value as ItemOf<E> };
  }
  const read = readItem(entity, raw, label);
  if (!read.ok) return { ok: false, error: read.error };
  countItemNormalisations(counts, read.normalisations, read.unknownFields);
  return { ok: true, item: read.item };
}

/**
 * A stub exactly as the kit's store sends it (`{_id, last_updated}`: a valid id, a valid timestamp,
 * nothing else), read without the schema: a re-sync of 100,000 items reads 100,000 of them, and
 * the zod pass was most of the caller's parsing time. Anything else (false) takes the schema
 * and the tolerant reader, as before; the result is the same.
 */
function isPlainStub(x: unknown): x is { _id: string; last_updated?: number } {
  if (!isRecord(x)) return false;
  let id = false;
  for (const key in x) {
    const v = x[key];
    if (key === '_id' && typeof v === 'string' && v !== '' && v.length <= MAX_ID_LENGTH && !hasForbiddenCharacter(v)) id = true;
    else if (key !== 'last_updated' || typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return false;
  }
  return id;
}

/** Reads a list reply's body: paging, items, stubs and quarantined items. Throws `StoreContractError` when the envelope is unreadable. */
export function readListReply<E extends Entity>(entity: E, body: unknown, ctx: StoreErrorContext, counts: NormalisationCounts): ReadPage<E> {
  if (!isRecord(body)) throw new StoreContractError(ctx, 'the body is not a JSON object');
  const raw = body[entity];
  if (!Array.isArray(raw)) {
    const said = typeof body.error === 'string' ? body.error : typeof body.msg === 'string' ? body.msg : undefined;
    throw new StoreContractError(ctx, said === undefined ? `"${entity}" is not an array` : `no "${entity}" array; the store said "${excerpt(said)}"`);
  }
  const paging = readPaging(body.paging, counts);
  if (typeof paging === 'string') throw new StoreContractError(ctx, paging);
  const items: ItemOf<E>[] = [];
  const stubs: ItemStub[] = [];
  const invalid: InvalidItem[] = [];
  raw.forEach((x: unknown, index: number) => {
    if (isPlainStub(x)) {
      stubs.push(x.last_updated === undefined ? { _id: x._id, index } : { _id: x._id, last_updated: x.last_updated, index });
      return;
    }
    const read = readStoreItem(entity, x, '', counts);
    if (!read.ok) invalid.push({ entity, index, _id: idOf(entity, x), error: read.error });
    else if (isStubShape(entity, x)) stubs.push({ _id: read.item._id, last_updated: read.item.last_updated, index });
    else items.push(read.item);
  });
  return { ...paging, items, stubs, invalid, normalisations: counts };
}

/**
 * Reads a by-ID answer: the bare item (the deployed form, and this kit's `?id=`), the envelope
 * `{product}` / `{order}` (this kit's `/products/{id}`), or a one-item list (`[item]` or
 * `{products: [item]}`). The item must be valid and carry the id asked for.
 */
export function readByIdReply<E extends Entity>(entity: E, body: unknown, id: string, counts: NormalisationCounts): { ok: true; item: ItemOf<E> } | { ok: false; error: string } {
  const d = entityOf(entity);
  let raw: unknown = body;
  let label = '';
  const list = Array.isArray(body) ? body : isRecord(body) && Array.isArray(body[entity]) ? (body[entity] as unknown[]) : undefined;
  if (list) {
    if (list.length !== 1) return { ok: false, error: `expected one ${d.noun}, got a list of ${list.length}` };
    raw = list[0];
    countNormalisation(counts, 'by-id-from-list');
  } else if (isRecord(body) && isRecord(body[d.noun])) {
    raw = body[d.noun];
    label = d.noun;
  }
  if (!isRecord(raw)) return { ok: false, error: `expected a ${d.noun} object` };
  if (isStubShape(entity, raw)) return { ok: false, error: `the answer is a stub (only its id and last_updated), not the ${d.noun}` };
  const read = readStoreItem(entity, raw, label, counts);
  if (!read.ok) return read;
  if (read.item._id !== id) return { ok: false, error: `asked for "${id}", got "${read.item._id}"` };
  return read;
}

/**
 * Reads a batched by-ID answer (`?ids=`): `{"<entity>": [items], "missing": [ids]}`. Items come
 * back in the order asked; an item that fails the contract, or an id answered neither way, is
 * `unanswered` (to be read on its own). An item or a missing id that was not asked for, or one
 * answered twice, makes the whole answer unreadable: the store is not doing what was asked.
 */
export function readByIdsReply<E extends Entity>(
  entity: E,
  body: unknown,
  ids: readonly string[],
  counts: NormalisationCounts,
): { ok: true; value: { items: ItemOf<E>[]; missing: string[]; unanswered: string[] } } | { ok: false; error: string } {
  const shape = `expected {"${entity}": [...], "missing": [...]}`;
  if (!isRecord(body)) return { ok: false, error: `${shape}, got ${Array.isArray(body) ? 'an array' : typeof body}` };
  const raw = body[entity];
  const missingRaw = body.missing;
  if (!Array.isArray(raw) || !Array.isArray(missingRaw)) {
    const why = body.paging !== undefined ? ': the store answered a list page (it does not serve the batched by-ID read)' : '';
    return { ok: false, error: `${shape}${why}` };
  }
  const position = new Map(ids.map((id, i) => [id, i]));
  const answered = new Set<string>();
  const note = (id: string, as: string): string | undefined => {
    if (!position.has(id)) return `answered ${JSON.stringify(id)} as ${as}, which was not asked for`;
    if (answered.has(id)) return `answered ${JSON.stringify(id)} twice`;
    answered.add(id);
    return undefined;
  };
  const missing: string[] = [];
  for (const id of missingRaw) {
    if (typeof id !== 'string') return { ok: false, error: 'missing must hold ids (strings)' };
    const wrong = note(id, 'missing');
    if (wrong) return { ok: false, error: wrong };
    missing.push(id);
  }
  const items: ItemOf<E>[] = [];
  for (const x of raw) {
    const id = idOf(entity, x);
    if (id !== undefined) {
      const wrong = note(id, 'an item');
      if (wrong) return { ok: false, error: wrong };
    }
    if (isStubShape(entity, x)) {
      answered.delete(id!);
      continue;
    }
    const read = readStoreItem(entity, x, '', counts);
    if (read.ok && read.item._id === id) items.push(read.item);
    else if (id !== undefined) answered.delete(id); // read again on its own: that read says what is wrong
  }
  items.sort((a, b) => position.get(a._id)! - position.get(b._id)!);
  // Answered: the valid items and the missing ids (`answered` has lost the others above).
  const unanswered = ids.filter((id) => !answered.has(id));
  return { ok: true, value: { items, missing, unanswered } };
}

/**
 * The batch size a list reply advertises (`BY_IDS_HEADER`), capped at `MAX_BY_IDS`; `undefined`
 * when the header is absent or not a positive integer (then the caller reads one id per request).
 */
export function advertisedByIds(headers: Headers): number | undefined {
  const text = headers.get(BY_IDS_HEADER);
  if (text === null || !/^\s*[1-9]\d{0,8}\s*$/.test(text)) return undefined;
  return Math.min(Number(text), MAX_BY_IDS);
}

/** The outcome of an add/update: the store's failure structure is a result, not an exception. */
export type WriteResult<T> = (
  | { readonly ok: true; readonly item: T; readonly warnings: unknown[] }
  | { readonly ok: false; readonly error: string; readonly reasons: WriteMessage[]; readonly warnings: unknown[]; readonly status: number }
) & {
  /** What the reader normalised in the answer (deployed forms), by kind. */
  readonly normalisations?: NormalisationCounts;
};

function readFailure(body: Record<string, unknown>, status: number, counts: NormalisationCounts): WriteResult<never> {
  let deployed = body.code !== 400 || !Array.isArray(body.warnings);
  // The deployed cs-cart example swaps the members: `error: 403, message: "Could not create product"`.
  const error = typeof body.error === 'string' ? body.error : typeof body.message === 'string' ? body.message : 'the store refused the write';
  if (typeof body.error !== 'string') deployed = true;
  const reasons: WriteMessage[] = [];
  for (const r of Array.isArray(body.reasons) ? body.reasons : []) {
    if (isRecord(r) && typeof r.msg === 'string') reasons.push({ msg: r.msg });
    else {
      deployed = true;
      reasons.push({ msg: isRecord(r) && typeof r.message === 'string' ? r.message : JSON.stringify(r) });
    }
  }
  if (deployed) countNormalisation(counts, 'write-failure-deployed-form');
  return { ok: false, error, reasons, warnings: Array.isArray(body.warnings) ? body.warnings : [], status, normalisations: counts };
}

/**
 * Reads a write answer: this kit's success and failure structures, and the deployed forms
 * (`{success:true}` alone, `{success:true, product:{_id}}` for a create, failures with `message` and
 * `code` 403 at HTTP 200). `undefined`: neither structure (the caller decides what that is).
 */
export function readWriteReply<E extends Entity>(
  entity: E,
  sent: Omit<ItemOf<E>, '_id'> & { readonly _id?: string },
  body: unknown,
  status: number,
  counts: NormalisationCounts,
): WriteResult<ItemOf<E>> | { ok: 'unreadable'; error: string } | undefined {
  if (!isRecord(body) || typeof body.success !== 'boolean') return undefined;
  if (!body.success) return readFailure(body, status, counts);
  const d = entityOf(entity);
  const warnings = Array.isArray(body.warnings) ? body.warnings : [];
  const member = body[d.noun];
  if (member === undefined || (isRecord(member) && Object.keys(member).every((k) => k === '_id'))) {
    countNormalisation(counts, 'write-success-without-item');
    const id = (isRecord(member) ? idOf(entity, member) : undefined) ?? sent._id;
    // A create answered without the id the store assigned: the caller could never find it again.
    if (id === undefined) return { ok: 'unreadable', error: `a create was answered without the ${d.noun}'s new _id` };
    return { ok: true, item: { ...sent, _id: id } as ItemOf<E>, warnings, normalisations: counts };
  }
  const read = readStoreItem(entity, member, d.noun, counts);
  return read.ok ? { ok: true, item: read.item, warnings, normalisations: counts } : { ok: 'unreadable', error: read.error };
}
