/**
 * The daemon's push ("Fetch updates" on the service), in the deployed daemons' sequence (§2.4 of the
 * deployed-protocol notes, docs/reverse-connection.md "The daemon"):
 *
 * `strategy`, `upstreamstatus`, `entity`, `cursoroffset`; when `waiting`: `{verb}/initialize {}` and
 * one more `upstreamstatus`; when `initialized`: the products from the cursor in pages, the product
 * finish, `cursoroffset` and `entity` again; the orders likewise; the general finish and one
 * `upstreamstatus`. `{verb}` is `pingsample` when `strategy` says so, `push` otherwise.
 * A sample sends the store's first `sampleSize` items of each entity, whatever the cursor.
 *
 * Incremental: the store is read through the adapter's keyset `after`, from the `cursoroffset`
 * (the last `last_updated` the service received, as sent; a leading number in a string such as
 * `"1517360038797 - 3"` counts). A push this pass initialized starts after it (everything up to it
 * was sent by a push that finished); a push resumed mid-way starts at it (items that share that
 * `last_updated` may not all have been sent), and the service counts an item re-sent once.
 */
import { keyOf, type SortKey } from '../../adapter';
import { ConversionError } from '../../contract/converters';
import { encodeReverseItem } from '../../contract/dialects';
import type { ReverseCallName } from '../../contract/reverse-routes';
import { ENTITIES, type Entity } from '../../contract/entities';
import { entityIn, statusOf, type Session } from './daemon-session';

type PushKind = 'push' | 'pingsample';

/** The calls of each kind of push, by their names in the contract's route table. */
const CALLS = {
  push: { initialize: 'pushInitialize', page: 'pushPage', entityFinish: 'pushEntityFinish', finish: 'pushFinish' },
  pingsample: { initialize: 'pingsampleInitialize', page: 'pingsamplePage', entityFinish: 'pingsampleEntityFinish', finish: 'pingsampleFinish' },
} as const satisfies Record<PushKind, Record<string, ReverseCallName>>;

/** Where the keyset walk starts for a `cursoroffset` (undefined: from the start). */
export function startAfter(cursor: unknown, fresh: boolean): SortKey | undefined {
  const n = typeof cursor === 'number' ? cursor : typeof cursor === 'string' ? Number(/^\s*(\d{1,16})/.exec(cursor)?.[1] ?? 0) : 0;
  if (!Number.isSafeInteger(n) || n <= 0) return undefined;
  // Keyset "strictly after (t, '')" is every item with last_updated ≥ t (ids are never empty).
  return { last_updated: fresh ? n + 1 : n, _id: '' };
}

interface PageBuffer {
  items: string[];
  bytes: number;
  sent: number;
}

async function flush(s: Session, kind: PushKind, entity: Entity, buffer: PageBuffer): Promise<void> {
  const body = `{"${entity}":[${buffer.items.join(',')}]}`;
  const reply = await s.transport.call(CALLS[kind].page, { entity, body });
  // A service that does not say how many it received: count what was sent.
  const received = typeof reply.body.received === 'number' ? reply.body.received : buffer.items.length;
  const refused = Array.isArray(reply.body.refused) ? reply.body.refused.length : 0;
  if (kind === 'push') s.run.pushed[entity] += received;
  else s.run.sampled[entity] += received;
  s.run.pushRefused += refused;
  s.emit({ type: 'page-pushed', kind, entity, items: buffer.items.length, bytes: Buffer.byteLength(body), refused });
  if (buffer.items.length > 0) s.progress++;
  buffer.sent++;
  buffer.items = [];
  buffer.bytes = 0;
}

/** Encodes one store item for a page, or reports it left out (too large, not writable in reverse form). */
function encodeForPage(s: Session, entity: Entity, listed: { _id: string; doc: unknown }, overhead: number): string | undefined {
  let json: string;
  try {
    json = JSON.stringify(encodeReverseItem(s.config.dialect, entity, listed.doc as never));
  } catch (err) {
    if (!(err instanceof ConversionError)) throw err;
    s.run.pushSkipped++;
    s.emit({ type: 'push-item-skipped', entity, id: listed._id, reason: err.message });
    return undefined;
  }
  if (overhead + Buffer.byteLength(json) > s.config.maxPageBytes) {
    s.run.pushSkipped++;
    s.emit({ type: 'push-item-skipped', entity, id: listed._id, reason: `larger than the page budget of ${s.config.maxPageBytes} bytes` });
    return undefined;
  }
  return json;
}

/** Sends the entity's items from the cursor, in pages; a sample sends one page of `sampleSize`. Always at least one page, as deployed daemons do. */
async function pushEntity(s: Session, kind: PushKind, entity: Entity, cursor: unknown, fresh: boolean): Promise<void> {
  const store = s.config.adapter.entity(entity);
  const overhead = Buffer.byteLength(`{"${entity}":[]}`);
  const limit = kind === 'pingsample' ? s.config.sampleSize : s.config.pageItems;
  const buffer: PageBuffer = { items: [], bytes: overhead, sent: 0 };
  // A sample is a look at the catalog, not an increment: it starts at the beginning.
  let after = kind === 'pingsample' ? undefined : startAfter(cursor, fresh);
  for (;;) {
    s.checkStop();
    const page = await store.list({ sortorder: 'asc', limit, after, signal: AbortSignal.timeout(s.config.requestTimeoutMs) });
    for (const listed of page) {
      const json = encodeForPage(s, entity, listed, overhead);
      if (json === undefined) continue;
      const size = Buffer.byteLength(json) + (buffer.items.length > 0 ? 1 : 0);
      if (buffer.items.length > 0 && (buffer.bytes + size > s.config.maxPageBytes || buffer.items.length >= limit)) {
        if (kind === 'pingsample') break;
        await flush(s, kind, entity, buffer);
      }
      buffer.bytes += Buffer.byteLength(json) + (buffer.items.length > 0 ? 1 : 0);
      buffer.items.push(json);
    }
    if (kind === 'pingsample' || page.length < limit) break;
    after = keyOf(page[page.length - 1]);
  }
  if (buffer.items.length > 0 || buffer.sent === 0) await flush(s, kind, entity, buffer);
}

/** Runs the push the service asked for (`ping` said `fetchingremote`). */
export async function runPush(s: Session): Promise<void> {
  const kind: PushKind = (await s.transport.call('strategy')).body.strategy === 'pingsample' ? 'pingsample' : 'push';
  const calls = CALLS[kind];
  let status = statusOf(await s.transport.call('upstreamstatus'));
  let entity = entityIn(await s.transport.call('entity', { accept: [409] }));
  let cursor = (await s.transport.call('cursoroffset')).body.cursoroffset;
  const fresh = status === 'waiting';
  if (fresh) {
    await s.transport.call(calls.initialize);
    status = statusOf(await s.transport.call('upstreamstatus'));
    if (status !== 'initialized') return; // the next pass initializes again
    s.progress++;
    s.emit({ type: 'initialized', kind });
  } else if (status === 'initialized') {
    s.emit({ type: 'resumed', kind, entity: entity ?? 'finish' });
  } else return;
  // The entities in registry order from the one the service names (a resumed push starts later);
  // after each, the service names the next. After the last one, nothing is asked: the deployed
  // sequence goes straight to `finish`.
  let at = entity === undefined ? ENTITIES.length : ENTITIES.indexOf(entity);
  while (at < ENTITIES.length) {
    const current = ENTITIES[at];
    await pushEntity(s, kind, current, cursor, fresh);
    await s.transport.call(calls.entityFinish, { entity: current });
    if (at === ENTITIES.length - 1) break;
    cursor = (await s.transport.call('cursoroffset')).body.cursoroffset;
    entity = entityIn(await s.transport.call('entity', { accept: [409] }));
    // Only forward: a service naming the same entity again (or none) ends the entities here.
    const next = entity === undefined ? ENTITIES.length : ENTITIES.indexOf(entity);
    at = next > at ? next : ENTITIES.length;
  }
  await s.transport.call(calls.finish);
  statusOf(await s.transport.call('upstreamstatus'));
  s.run.transactions++;
  s.emit({ type: 'finished', kind });
}
