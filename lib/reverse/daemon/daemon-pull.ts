/**
 * The daemon's pull ("Send updates" on the service): the deployed daemons' sequence (§2.5 of the
 * deployed-protocol notes, docs/reverse-connection.md "The daemon"):
 *
 * `upstreamstatus`, `entity`; when `waiting`: `pull/initialize {}` and one more `upstreamstatus`;
 * when `initialized`: per entity, `hasmore` → `next` → store → `succeded` / `failed` → `readyfornext`
 * until `hasmore` is neither `ready` nor `waiting`; `pull/{entity}/finish`, `entity` again (a pull
 * may go on to orders); at the end `pull/finish` and one `upstreamstatus`.
 *
 * Every wait is bounded: `hasmore` `waiting` at most `maxWaits` times in a row (then the entity is
 * over, as the deployed daemons do), `readyfornext` `false` at most `maxReadyPolls` times (then the
 * pass fails). An item that cannot be stored is reported `failed` and the pull goes on.
 */
import { ackIdOf } from '../../contract/dialects';
import { encodeReverseItem } from '../../contract/dialects';
import { entityOf } from '../../contract/entities';
import type { Entity } from '../../contract/entities';
import { ReverseTransportError } from '../reverse-errors';
import { storePulledItem } from './daemon-store';
import { entityIn, member, statusOf, type Session } from './daemon-session';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A pulled item's id for the acknowledgement path: `_id` (spec) or `sku`/`orderid` (click2sync), the other when missing. */
function ackPathId(s: Session, entity: Entity, raw: Record<string, unknown>): string | undefined {
  const text = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' && v !== '' ? v : undefined);
  const ids = { _id: text(raw._id), sku: text(raw.sku), orderid: text(raw.orderid) };
  const preferred = ackIdOf(s.config.dialect, entity, ids);
  return preferred ?? ids[entityOf(entity).naturalKey];
}

/**
 * A storebridge service hands an item whose natural key is not safe in a raw URL (an order number
 * such as `#100000`) out under its own key, the store's value in `otherids` (`connectiontype`: the
 * dialect's `otheridsType`; `dialects.ts` adds them to orders): the store keeps its own value.
 */
function restoredNaturalKey(s: Session, entity: Entity, raw: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(raw.otherids)) return raw;
  const type = s.config.dialect.pulled.otheridsType;
  const mine = raw.otherids.find((o: unknown) => isObject(o) && o.connectiontype === type && typeof o.id === 'string');
  return mine ? { ...raw, [entityOf(entity).naturalKey]: (mine as { id: string }).id } : raw;
}

/** Stores one pulled item and acknowledges it (`succeded` with the item as stored, or `failed` with the reasons). */
async function handleItem(s: Session, entity: Entity, raw: unknown): Promise<void> {
  const noun = entityOf(entity).noun;
  const unexpected = (what: string) => new ReverseTransportError('GET', s.transport.pathOf('next', { entity }), `unexpected reply: ${what}`);
  if (!isObject(raw)) throw unexpected(`no ${noun} object`);
  const pathId = ackPathId(s, entity, raw);
  if (pathId === undefined) throw unexpected(`the ${noun} has no _id, ${entityOf(entity).naturalKey}`);
  const outcome = await storePulledItem(s.config.adapter, entity, restoredNaturalKey(s, entity, raw), { now: s.config.now(), signal: AbortSignal.timeout(s.config.requestTimeoutMs) });
  if (outcome.ok) {
    await s.transport.call('succeded', { entity, id: pathId, body: { [noun]: encodeReverseItem(s.config.dialect, entity, outcome.item) } });
    s.run.pulled[entity]++;
    s.emit({ type: 'item-stored', entity, id: pathId, ...(outcome.storeId ? { storeId: outcome.storeId } : {}) });
  } else {
    await s.transport.call('failed', { entity, id: pathId, body: outcome.report });
    s.run.failed++;
    s.run.failedByEntity[entity]++;
    s.emit({ type: 'item-failed', entity, id: pathId, error: outcome.report.error });
  }
  s.progress++;
}

/** Polls `readyfornext` until `true`, at most `maxReadyPolls` times. */
async function waitReady(s: Session, entity: Entity): Promise<void> {
  for (let polls = 1; ; polls++) {
    const reply = await s.transport.call('readyfornext', { entity });
    if (reply.body.ready === true) return;
    if (polls >= s.config.maxReadyPolls) throw new ReverseTransportError('GET', s.transport.pathOf('readyfornext', { entity }), `still not ready after ${polls} polls`);
    s.checkStop();
    await s.sleep(s.config.pollIntervalMs);
  }
}

/** The item cycle of one entity, until `hasmore` says there is no more. */
async function pullEntity(s: Session, entity: Entity): Promise<void> {
  const noun = entityOf(entity).noun;
  let waits = 0;
  for (;;) {
    s.checkStop();
    const hasmore = member(await s.transport.call('hasmore', { entity }), 'hasmore');
    if (hasmore === 'ready') {
      waits = 0;
      const next = await s.transport.call('next', { entity });
      await handleItem(s, entity, next.body[noun]);
      await waitReady(s, entity);
    } else if (hasmore === 'waiting') {
      // The service is not ready yet (or an acknowledgement of ours is still open: close it).
      if (++waits > s.config.maxWaits) return;
      await s.transport.call('readyfornext', { entity });
      s.checkStop();
      await s.sleep(s.config.pollIntervalMs);
    } else {
      return; // `done`, or anything else: the end, as the deployed daemons read it
    }
  }
}

/** Runs the pull the service asked for (`ping` said `pulling`). */
export async function runPull(s: Session): Promise<void> {
  let status = statusOf(await s.transport.call('upstreamstatus'));
  let entity = entityIn(await s.transport.call('entity', { accept: [409] }));
  if (status === 'waiting') {
    await s.transport.call('pullInitialize');
    status = statusOf(await s.transport.call('upstreamstatus'));
    if (status !== 'initialized') return; // the next pass initializes again
    s.progress++;
    s.emit({ type: 'initialized', kind: 'pull', ...(entity ? { entity } : {}) });
  } else if (status === 'initialized') {
    s.emit({ type: 'resumed', kind: 'pull', ...(entity ? { entity } : {}) });
  } else return;
  const done = new Set<Entity>();
  while (entity && !done.has(entity)) {
    await pullEntity(s, entity);
    await s.transport.call('pullEntityFinish', { entity });
    done.add(entity);
    entity = entityIn(await s.transport.call('entity', { accept: [409] }));
  }
  await s.transport.call('pullFinish');
  statusOf(await s.transport.call('upstreamstatus'));
  s.run.transactions++;
  s.emit({ type: 'finished', kind: 'pull' });
}
