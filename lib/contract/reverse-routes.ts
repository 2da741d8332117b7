/**
 * The reverse connection's calls as data: every `{P}/…` call a daemon makes (the spec's, the ones
 * the deployed daemons make where the spec says "not shown", and this kit's own additions), with
 * its method, path, body and reply schemas and origin. The reverse service routes with this table,
 * the daemon builds its URLs from it and the OpenAPI document describes it.
 *
 * `{P}` is `REVERSE_BASE_PATH/{connection_key}`; paths below are relative to it. `:id` is one path
 * segment: deployed daemons put ids in paths **raw** (never percent-encoded).
 */
import type { z } from 'zod';
import { ENTITIES, ENTITY_DESCRIPTORS, EntityBodySchema, type Entity } from './entities';
import {
  AcknowledgedSchema,
  CursorOffsetSchema,
  HasMoreSchema,
  ModeSchema,
  OkSchema,
  PingSchema,
  PushReceivedSchema,
  ReadyForNextSchema,
  StorageFailureReportSchema,
  StrategySchema,
  UpstreamStatusSchema,
} from './messages';
import type { ParameterOrigin } from './query';

/** `{P}` without the host and the key: every daemon call starts with `REVERSE_BASE_PATH/{connection_key}`. */
export const REVERSE_BASE_PATH = '/api/adapters/custom/reverse/connection';

/** `{}` or `{entity}`: the body of the initialize calls (deployed daemons send `{}`). */
export const InitializeBodySchema = EntityBodySchema.partial();

export type ReverseCallName =
  | 'ping'
  | 'strategy'
  | 'mode'
  | 'upstreamstatus'
  | 'entity'
  | 'cursoroffset'
  | 'pullInitialize'
  | 'pushInitialize'
  | 'pingsampleInitialize'
  | 'pullFinish'
  | 'pushFinish'
  | 'pingsampleFinish'
  | 'hasmore'
  | 'next'
  | 'succeded'
  | 'failed'
  | 'readyfornext'
  | 'pullEntityFinish'
  | 'pushPage'
  | 'pingsamplePage'
  | 'pushEntityFinish'
  | 'pingsampleEntityFinish';

export interface ReverseRoute {
  readonly name: ReverseCallName;
  readonly method: 'GET' | 'POST';
  /** After `{P}`: `/pull/products/:id/succeded`. */
  readonly path: string;
  /** The entity of a per-entity call. */
  readonly entity?: Entity;
  /** The request body; `null`: any body is accepted and ignored (send `{}`). */
  readonly request?: z.ZodType | null;
  readonly reply: z.ZodType;
  readonly origin: ParameterOrigin;
  readonly summary: string;
  /** Depends on the connection's state (answers 409 when out of order). */
  readonly stateful: boolean;
  /** Reads or writes the service's store (answers 500 when it fails). */
  readonly store?: boolean;
}

function perEntity(entity: Entity): ReverseRoute[] {
  const d = ENTITY_DESCRIPTORS[entity];
  const e = { entity, stateful: true } as const;
  return [
    { ...e, name: 'hasmore', method: 'GET', path: `/pull/${entity}/hasmore`, reply: HasMoreSchema, origin: 'spec', summary: `Whether a ${d.noun} is ready to download` },
    { ...e, name: 'next', method: 'GET', path: `/pull/${entity}/next`, reply: d.pulledSchema, origin: 'spec', summary: `Download the next ${d.noun} (under a lease)`, store: true },
    { ...e, name: 'succeded', method: 'POST', path: `/pull/${entity}/:id/succeded`, request: d.pulledSchema, reply: AcknowledgedSchema, origin: 'spec', summary: `Report the ${d.noun} stored (the body is the ${d.noun} as stored; another id in it is the store's new id)` },
    { ...e, name: 'failed', method: 'POST', path: `/pull/${entity}/:id/failed`, request: StorageFailureReportSchema, reply: AcknowledgedSchema, origin: 'spec', summary: `Report the ${d.noun} not stored` },
    { ...e, name: 'readyfornext', method: 'GET', path: `/pull/${entity}/readyfornext`, reply: ReadyForNextSchema, origin: 'spec', summary: 'Whether the service has processed the acknowledgement' },
    { ...e, name: 'pullEntityFinish', method: 'POST', path: `/pull/${entity}/finish`, request: null, reply: AcknowledgedSchema, origin: 'deployed', summary: `End the ${d.noun} downloads (a pull of products and orders moves on to the orders)`, store: true },
    { ...e, name: 'pushPage', method: 'POST', path: `/push/${entity}`, request: d.pushPageSchema, reply: PushReceivedSchema, origin: 'deployed', summary: `Push a page of ${entity}`, store: true },
    { ...e, name: 'pingsamplePage', method: 'POST', path: `/pingsample/${entity}`, request: d.pushPageSchema, reply: PushReceivedSchema, origin: 'deployed', summary: `Push a sample page of ${entity} (never stored)` },
    { ...e, name: 'pushEntityFinish', method: 'POST', path: `/push/${entity}/finish`, request: null, reply: AcknowledgedSchema, origin: 'spec', summary: `End the ${d.noun} push` },
    { ...e, name: 'pingsampleEntityFinish', method: 'POST', path: `/pingsample/${entity}/finish`, request: null, reply: AcknowledgedSchema, origin: 'spec', summary: `End the ${d.noun} sample push` },
  ];
}

/** Every `{P}/…` call. */
export const REVERSE_ROUTES: readonly ReverseRoute[] = [
  { name: 'ping', method: 'GET', path: '/ping', reply: PingSchema, origin: 'deployed', summary: 'What the service wants: fetchingremote (push), pulling (pull) or idle', stateful: false },
  { name: 'strategy', method: 'GET', path: '/strategy', reply: StrategySchema, origin: 'deployed', summary: 'The kind of push wanted: push or pingsample', stateful: false },
  { name: 'mode', method: 'GET', path: '/mode', reply: ModeSchema, origin: 'storebridge', summary: 'What the service wants (pull, push, pingsample or idle); ping and strategy say the same the deployed way', stateful: false },
  { name: 'upstreamstatus', method: 'GET', path: '/upstreamstatus', reply: UpstreamStatusSchema, origin: 'spec', summary: 'Connection status (under both member names)', stateful: false },
  { name: 'entity', method: 'GET', path: '/entity', reply: EntityBodySchema, origin: 'spec', summary: 'The entity of the running or next transaction', stateful: true },
  { name: 'cursoroffset', method: 'GET', path: '/cursoroffset', reply: CursorOffsetSchema, origin: 'deployed', summary: 'Where an incremental push of the current entity starts', stateful: false },
  { name: 'pullInitialize', method: 'POST', path: '/pull/initialize', request: InitializeBodySchema, reply: UpstreamStatusSchema, origin: 'spec', summary: 'Start the queued pull (safe to repeat)', stateful: true, store: true },
  { name: 'pushInitialize', method: 'POST', path: '/push/initialize', request: InitializeBodySchema, reply: UpstreamStatusSchema, origin: 'deployed', summary: 'Start the queued push (safe to repeat)', stateful: true },
  { name: 'pingsampleInitialize', method: 'POST', path: '/pingsample/initialize', request: InitializeBodySchema, reply: UpstreamStatusSchema, origin: 'deployed', summary: 'Start the queued sample push (safe to repeat)', stateful: true },
  ...ENTITIES.flatMap(perEntity),
  { name: 'pullFinish', method: 'POST', path: '/pull/finish', request: null, reply: OkSchema, origin: 'deployed', summary: 'End the pull transaction', stateful: true },
  { name: 'pushFinish', method: 'POST', path: '/push/finish', request: null, reply: OkSchema, origin: 'spec', summary: 'End the push (then finishing/finished)', stateful: true },
  { name: 'pingsampleFinish', method: 'POST', path: '/pingsample/finish', request: null, reply: OkSchema, origin: 'spec', summary: 'End the sample push (then finishing/finished)', stateful: true },
];

export type ReverseRouteMatch =
  | { readonly ok: true; readonly route: ReverseRoute; /** The raw `:id` segment, as sent. */ readonly id?: string }
  | { readonly ok: false; readonly status: 404 | 405; readonly allow?: 'GET' | 'POST' };

const SPLIT = REVERSE_ROUTES.map((route) => ({ route, segments: route.path.slice(1).split('/') }));

/** Finds the call for a method and a path after `{P}` (segments as received, not decoded). */
export function matchReverseRoute(method: string, path: string): ReverseRouteMatch {
  const segments = path.replace(/^\//, '').split('/');
  let allow: 'GET' | 'POST' | undefined;
  for (const { route, segments: pattern } of SPLIT) {
    if (pattern.length !== segments.length) continue;
    let id: string | undefined;
    const same = pattern.every((p, i) => {
      if (p !== ':id') return p === segments[i];
      id = segments[i];
      return id !== '';
    });
    if (!same) continue;
    if (route.method === method.toUpperCase()) return { ok: true, route, ...(id !== undefined ? { id } : {}) };
    allow = route.method;
  }
  return allow ? { ok: false, status: 405, allow } : { ok: false, status: 404 };
}

const BY_NAME = new Map(REVERSE_ROUTES.map((route) => [route.entity ? `${route.name} ${route.entity}` : route.name, route]));

/**
 * The call of a name (a per-entity call with its entity): code that makes calls names them and
 * takes method and path from here, so no caller spells a path of its own.
 * `reverseRoute('hasmore', 'orders').path` is `/pull/orders/hasmore`. Throws a `RangeError` for a
 * name the table does not have (or a per-entity name without its entity).
 */
export function reverseRoute(name: ReverseCallName, entity?: Entity): ReverseRoute {
  const route = BY_NAME.get(entity ? `${name} ${entity}` : name);
  if (!route) throw new RangeError(`the reverse route table has no call ${JSON.stringify(name)}${entity ? ` for ${entity}` : ''}`);
  return route;
}

/** The URL of a call: `reverseUrl('https://svc', key, '/pull/orders/:id/succeded', id)` (`id` goes in as given). */
export function reverseUrl(base: string, connectionKey: string, path: string, id?: string): string {
  const filled = id === undefined ? path : path.replace(':id', id);
  return `${base.replace(/\/+$/, '')}${REVERSE_BASE_PATH}/${connectionKey}${filled}`;
}
