/**
 * The checks judged on full walks of an entity: paging (each order), sort order, desc reversing
 * asc, page limits, item types and ids (all `must`), and stable reads (`should`).
 */
import { jsonEqual } from '../adapter';
import { INTERFACE_LIMITS } from '../contract/limits';
import type { Entity } from '../contract/entities';
import { StoreResponseTooLargeError, StoreTimeoutError } from '../client/client-errors';
import type { InvalidItem } from '../client/store-reply';
import { NORMALISATION_KINDS } from '../contract/item-reader';
import { capture, failed, plural, type Capture, type CheckContext } from './check-context';

/** The spec's page limits. */
export const PAGE_BYTES_LIMIT = INTERFACE_LIMITS.maxPageBytes;
export const PAGE_TIME_LIMIT_MS = INTERFACE_LIMITS.requestTimeMs;

export interface Walks {
  readonly asc: Capture<Entity>;
  readonly desc: Capture<Entity>;
}

/** The walks in both orders. */
export async function readWalks(ctx: CheckContext, entity: Entity): Promise<Walks> {
  return { asc: await capture(ctx, entity, 'asc'), desc: await capture(ctx, entity, 'desc') };
}

const firstFailed = (w: Walks) => (w.asc.error ? w.asc : w.desc);

/**
 * Each walk ends, without duplicates, with `itemsTotal` a real count (not a placeholder, not
 * something else: php-mysql sends its count row `{"0":"310","count(*)":"310"}`), unchanged and
 * equal to the distinct items.
 */
export function checkPaging(ctx: CheckContext, entity: Entity, walks: Walks): void {
  for (const [order, c] of [['asc', walks.asc], ['desc', walks.desc]] as const) {
    const name = `${entity}.paging-${order}`;
    if (c.error) {
      ctx.add(name, 'must', false, failed(c));
      continue;
    }
    const s = c.summary;
    const problems: string[] = [];
    if (s.duplicates) problems.push(`${plural(s.duplicates, 'duplicate')} across pages`);
    for (const a of s.anomalies) {
      if (a.kind === 'items-total-changed') problems.push(`itemsTotal changed from ${a.from} to ${a.to}`);
      if (a.kind === 'items-total-mismatch') problems.push(`itemsTotal says ${a.itemsTotal}, the pages held ${a.received} distinct items`);
      if (a.kind === 'offset-moved') problems.push(`asked for offset ${a.requested}, the page started at ${a.answered}`);
    }
    const placeholder = s.normalisations['items-total-placeholder'] ? `itemsTotal is a placeholder (${s.itemsTotal})` : undefined;
    if (placeholder) problems.push(placeholder);
    const unusable = s.normalisations['items-total-unusable'];
    if (unusable) problems.push(`itemsTotal is not a count on ${plural(unusable, 'page')} (sent ${s.unusableItemsTotal ?? 'something else'}): the total is unknown`);
    ctx.add(name, 'must', problems.length === 0, problems.length ? problems.join('; ') : `${plural(s.pages, 'page')}, ${s.items + s.invalid} distinct items = itemsTotal`);
  }
}

/** Both walks follow `(last_updated, _id)` in their order, and desc is asc reversed. */
export function checkOrder(ctx: CheckContext, entity: Entity, walks: Walks): void {
  const { asc, desc } = walks;
  if (asc.error || desc.error) {
    ctx.add(`${entity}.sort-order`, 'must', false, failed(firstFailed(walks)));
    ctx.add(`${entity}.desc-reverses-asc`, 'must', false, failed(firstFailed(walks)));
    return;
  }
  const bad = [...asc.summary.anomalies.map((a) => ['asc', a] as const), ...desc.summary.anomalies.map((a) => ['desc', a] as const)].flatMap(([o, a]) => (a.kind === 'sort-order' ? [[o, a] as const] : []));
  // Counted on the distinct items read (quarantined ones have no sort key to judge).
  const missing = [...asc.items, ...asc.stubs].filter((x) => x.last_updated === undefined).length;
  const orderDetail = bad.length
    ? `${plural(bad.length, 'item')} out of order, first: "${bad[0][1]._id}" after "${bad[0][1].previousId}" (${bad[0][0]}; key is (last_updated, _id))`
    : missing
      ? `${plural(missing, 'item')} without last_updated: no sort key to follow${asc.invalid.length ? ` (and ${plural(asc.invalid.length, 'quarantined item')} not judged)` : ''}`
      : 'asc and desc follow (last_updated, _id)';
  ctx.add(`${entity}.sort-order`, 'must', bad.length === 0 && !missing, orderDetail);
  // An ids-only list is judged on its stubs (a list mixing both is judged on its whole items).
  const listed = (c: Capture<Entity>) => (c.items.length > 0 ? c.items : c.stubs).map((x) => x._id);
  const a = listed(asc);
  const d = listed(desc).reverse();
  const at = a.findIndex((id, i) => id !== d[i]);
  const same = a.length === d.length && at === -1;
  ctx.add(`${entity}.desc-reverses-asc`, 'must', same, same ? `${a.length} items` : a.length !== d.length ? `asc has ${a.length} items, desc ${d.length}` : `first difference at position ${at}: "${a[at]}" vs "${d[at]}"`);
}

/** Every page at most 10,000,000 bytes and within 60 s. */
export function checkPageLimits(ctx: CheckContext, entity: Entity, walks: Walks): void {
  const name = `${entity}.page-limits`;
  const { asc, desc } = walks;
  const err = asc.error ?? desc.error;
  if (err instanceof StoreResponseTooLargeError) return ctx.add(name, 'must', false, `a page is larger than ${PAGE_BYTES_LIMIT.toLocaleString('en')} bytes`);
  if (err instanceof StoreTimeoutError) return ctx.add(name, 'must', false, `a page took longer than ${err.limitMs} ms`);
  if (err) return ctx.add(name, 'must', false, failed(firstFailed(walks)));
  const maxBytes = Math.max(asc.summary.maxPageBytes, desc.summary.maxPageBytes);
  const maxMs = Math.max(asc.summary.maxPageMs, desc.summary.maxPageMs);
  const ok = maxBytes <= PAGE_BYTES_LIMIT && maxMs <= PAGE_TIME_LIMIT_MS;
  ctx.add(name, 'must', ok, `largest page ${maxBytes.toLocaleString('en')} bytes (limit ${PAGE_BYTES_LIMIT.toLocaleString('en')}), slowest ${maxMs} ms (limit ${PAGE_TIME_LIMIT_MS.toLocaleString('en')} ms)`);
}

/**
 * Items in the webhook form and with an `_id`. What the tolerant reader had to normalise (numbers
 * as strings, numeric ids, epoch-ms dates, a missing `_id`) is not the webhook form either: the
 * caller reads it, a check names it.
 */
export function checkItems(ctx: CheckContext, entity: Entity, walks: Walks): void {
  const { asc, desc } = walks;
  if (asc.error && !asc.summary.pages) {
    ctx.add(`${entity}.whole-items`, 'should', false, failed(asc));
    ctx.add(`${entity}.types`, 'must', false, failed(asc));
    ctx.add(`${entity}.ids`, 'must', false, failed(asc));
    return;
  }
  const invalid = distinctInvalid(asc.invalid, desc.invalid);
  const noId = invalid.filter((x) => /^_id\b/.test(x.error));
  const typeErrors = invalid.filter((x) => !/^_id\b/.test(x.error));
  const n = asc.summary.normalisations;
  // Whatever the item reader changed but keying an item by its natural key (the `ids` check's).
  const converted = Object.entries(n).filter(([k]) => k !== 'id-from-natural-key' && (NORMALISATION_KINDS as readonly string[]).includes(k));
  const stubs = asc.summary.stubs;
  // An ids-only list is the deployed "list by id" mode: callers read each item by ?id= (checked by
  // the by-id group), so it is a `should` against the interface's text, not a broken list.
  ctx.add(
    `${entity}.whole-items`,
    'should',
    stubs === 0,
    stubs ? `an ids-only list: ${plural(stubs, 'stub')} with only an id and last_updated; the interface's text lists whole items, deployed callers read each by ?id=` : 'the list carries whole items',
  );
  const typeProblems = [
    ...(typeErrors.length ? [`${plural(typeErrors.length, 'item')} with wrong types, first ${typeErrors[0]._id ? `"${typeErrors[0]._id}"` : `#${typeErrors[0].index}`}: ${typeErrors[0].error}`] : []),
    ...(converted.length ? [`values the caller had to convert: ${converted.map(([k, c]) => `${k} ${c}`).join(', ')}`] : []),
  ];
  ctx.add(`${entity}.types`, 'must', typeProblems.length === 0, typeProblems.length ? typeProblems.join('; ') : `${plural(asc.items.length, 'item')} in the webhook form${stubs ? ` (and ${plural(stubs, 'stub')})` : ''}`);
  const natural = n['id-from-natural-key'] ? [`${plural(n['id-from-natural-key'], 'item')} without _id (keyed by its natural key)`] : [];
  const idProblems = [...(noId.length ? [`${plural(noId.length, 'item')} without a valid _id: ${noId[0].error}`] : []), ...natural];
  ctx.add(`${entity}.ids`, 'must', idProblems.length === 0, idProblems.length ? idProblems.join('; ') : 'every item has an _id');
}

/**
 * The quarantined items of both walks, each once: the asc walk's, and those of the desc walk with
 * an `_id` the asc walk did not quarantine (an item without an id cannot be matched across walks,
 * and the asc walk read the same list).
 */
function distinctInvalid(asc: readonly InvalidItem[], desc: readonly InvalidItem[]): InvalidItem[] {
  const ids = new Set<string>();
  const fresh = (x: InvalidItem) => x._id !== undefined && !ids.has(x._id) && Boolean(ids.add(x._id));
  return [...asc.filter((x) => x._id === undefined || fresh(x)), ...desc.filter(fresh)];
}

/** A second full asc read, right after, returns the same items in the same order. */
export async function checkStableReads(ctx: CheckContext, entity: Entity, asc: Capture<Entity>): Promise<void> {
  const again = await capture(ctx, entity, 'asc');
  if (asc.error || again.error) return ctx.add(`${entity}.stable-reads`, 'should', false, failed(asc.error ? asc : again));
  const diff = asc.items.length !== again.items.length ? `${asc.items.length} items, then ${again.items.length}` : asc.items.findIndex((x, i) => !jsonEqual(x, again.items[i]));
  const ok = diff === -1;
  ctx.add(`${entity}.stable-reads`, 'should', ok, ok ? 'two sequential full reads agree' : typeof diff === 'string' ? diff : `item ${diff} ("${asc.items[diff]._id}") differs between two reads`);
}
