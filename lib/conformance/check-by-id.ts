/**
 * By-ID reads: items spread over the list read back through the configured by-ID URL (`must`), the
 * same through `?id=` on the list URL, the deployed form (`should`), and 404 for an unknown id
 * (`should`).
 */
import { jsonEqual } from '../adapter';
import { entityOf } from '../contract/entities';
import type { Entity, ItemOf } from '../contract/entities';
import { readByIdReply, replyJson } from '../client/store-reply';
import { failed, plural, type Capture, type CheckContext } from './check-context';

/** Up to `n` positions spread over `count` (first, last, between). */
function samplePositions(count: number, n: number): number[] {
  const k = Math.min(n, count);
  return [...new Set(Array.from({ length: k }, (_, i) => Math.floor((i * (count - 1)) / Math.max(1, k - 1))))];
}

/** Reads `item` by ID through `read`; a problem as text, or undefined when it equals the list item. */
async function readBack<E extends Entity>(item: ItemOf<E>, read: (id: string) => Promise<ItemOf<E>>): Promise<string | undefined> {
  try {
    const got = await read(item._id);
    return jsonEqual(got, item) ? undefined : `"${item._id}" differs from its list item`;
  } catch (err) {
    return `"${item._id}": ${(err as Error).message}`;
  }
}

/** `GET {list URL}?id=X`, read like the sync engine reads it (bare item, envelope or one-item list). */
async function readByQuery<E extends Entity>(ctx: CheckContext, entity: E, id: string): Promise<ItemOf<E>> {
  const operation = entityOf(entity).operations.list;
  const url = ctx.client.urlOf(operation, {}, id);
  const res = await ctx.client.probe({ operation, method: 'GET', url, signal: ctx.signal });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} for ?id=`);
  const ctxInfo = { operation, method: 'GET', url, status: res.status };
  const read = readByIdReply(entity, replyJson(res, ctxInfo), id, {});
  if (!read.ok) throw new Error(read.error);
  return read.item;
}

/**
 * Whether the configured by-ID read is itself `?id=` on the list URL (a connection configured per
 * entity, with no by-ID URL of its own): then `by-id` makes the same request as `by-id-query`, the
 * deployed form, and is graded like it (a `should` on a list of whole items). The interface's text
 * shows no by-ID shape, so a store that follows it is not failed twice for the deployed one.
 */
function byIdIsQuery(ctx: CheckContext, entity: Entity): boolean {
  const ops = entityOf(entity).operations;
  const probe = 'storebridge-check-probe';
  return ctx.client.urlOf(ops.get, {}, probe) === ctx.client.urlOf(ops.list, {}, probe);
}

export async function checkById<E extends Entity>(ctx: CheckContext, entity: E, asc: Capture<E>): Promise<void> {
  const byIdLevel = byIdIsQuery(ctx, entity) ? 'should' : 'must';
  if (asc.error) {
    ctx.add(`${entity}.by-id`, byIdLevel, false, failed(asc));
    ctx.add(`${entity}.by-id-query`, 'should', false, failed(asc));
  } else if (asc.items.length === 0 && asc.stubs.length > 0) {
    await checkStubsById(ctx, entity, asc);
  } else if (asc.items.length === 0) {
    ctx.add(`${entity}.by-id`, byIdLevel, true, 'no items to read back');
    ctx.add(`${entity}.by-id-query`, 'should', true, 'no items to read back');
  } else {
    const picks = samplePositions(asc.items.length, ctx.byIdSamples).map((i) => asc.items[i]);
    const configured: string[] = [];
    const query: string[] = [];
    for (const item of picks) {
      const a = await readBack(item, (id) => ctx.client.get(entity, id, { signal: ctx.signal }));
      const b = await readBack(item, (id) => readByQuery(ctx, entity, id));
      if (a) configured.push(a);
      if (b) query.push(b);
    }
    const equal = `${plural(picks.length, 'item')} read by ID equal their list items`;
    ctx.add(`${entity}.by-id`, byIdLevel, configured.length === 0, configured.length ? configured.join('; ') : equal);
    ctx.add(`${entity}.by-id-query`, 'should', query.length === 0, query.length ? `?id= on the list URL, as the deployed service reads one item: ${query.join('; ')}` : `${equal} (?id= on the list URL)`);
  }
  await checkUnknownId(ctx, entity);
}

/**
 * An ids-only list: every listed stub must be readable whole through `?id=` (the only way a
 * caller gets the item), with the stub's `last_updated`. Through the configured by-ID URL too is
 * a `should` (the deployed stores serve `?id=` only).
 */
async function checkStubsById<E extends Entity>(ctx: CheckContext, entity: E, asc: Capture<E>): Promise<void> {
  const picks = samplePositions(asc.stubs.length, ctx.byIdSamples).map((i) => asc.stubs[i]);
  const viaQuery: string[] = [];
  const viaConfigured: string[] = [];
  const judge = async (stub: (typeof picks)[number], read: (id: string) => Promise<ItemOf<E>>, out: string[]) => {
    try {
      const item = await read(stub._id);
      if (item._id !== stub._id) out.push(`"${stub._id}" answered item "${item._id}"`);
      else if (stub.last_updated !== undefined && item.last_updated !== stub.last_updated) out.push(`"${stub._id}" has last_updated ${item.last_updated}, its stub ${stub.last_updated}`);
    } catch (err) {
      out.push(`"${stub._id}": ${(err as Error).message}`);
    }
  };
  for (const stub of picks) {
    await judge(stub, (id) => readByQuery(ctx, entity, id), viaQuery);
    await judge(stub, (id) => ctx.client.get(entity, id, { signal: ctx.signal }), viaConfigured);
  }
  const read = `${plural(picks.length, 'stub')} of the ids-only list read whole by ID`;
  ctx.add(`${entity}.by-id-query`, 'must', viaQuery.length === 0, viaQuery.length ? `an ids-only list must serve each item by ?id= on the list URL: ${viaQuery.join('; ')}` : `${read} (?id= on the list URL)`);
  ctx.add(`${entity}.by-id`, 'should', viaConfigured.length === 0, viaConfigured.length ? viaConfigured.join('; ') : `${read} (the by-ID URL)`);
}

async function checkUnknownId(ctx: CheckContext, entity: Entity): Promise<void> {
  const operation = entityOf(entity).operations.get;
  const url = ctx.client.urlOf(operation, {}, `storebridge-check-missing-${Date.now().toString(36)}`);
  try {
    const res = await ctx.client.probe({ operation, method: 'GET', url, signal: ctx.signal });
    ctx.add(`${entity}.by-id-unknown`, 'should', res.status === 404, res.status === 404 ? 'HTTP 404 for an unknown id' : `expected HTTP 404 for an unknown id, got ${res.status}`);
  } catch (err) {
    ctx.add(`${entity}.by-id-unknown`, 'should', false, `request failed: ${(err as Error).message}`);
  }
}
