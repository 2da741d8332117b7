/**
 * The reverse side of the dashboard: a reverse service's loopback operator routes over HTTP.
 * `GET {URL}/connections` lists every connection by name with its status view; `POST
 * {URL}/connections/{name}/queue {"kind": "push" | "pull", "entity"?}` queues a transaction. The
 * operator routes answer loopback clients only, so the dashboard runs on the service's machine.
 *
 * Answers are read tolerantly (a list or `{connections: [...]}`, the view itself or `{name,
 * status}`), and the pulled-id → store-id map is shown when the service reports one (`idMap`).
 */
import { defineOptions, opt } from '../../options';
import { DashboardSourceError } from '../dashboard-errors';
import type { IdMapping, ReverseConnectionView, ReverseQueueRequest, ReverseSource } from '../dashboard-sources';

export interface ReverseHttpSourceOptions {
  /** Time limit of each call (ms). Default 5,000. */
  timeoutMs?: number;
  /** For tests: the fetch to use. Default the global one. */
  fetch?: typeof fetch;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const MAX_LISTED = 200;

function counts(v: unknown): ReverseConnectionView['products'] {
  if (!isObject(v)) return {};
  const out: Record<string, number> = {};
  for (const k of ['delivered', 'redelivered', 'succeeded', 'failed', 'skipped', 'received', 'refused', 'sampled', 'unacknowledged']) {
    const n = num(v[k]);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

/** `[{entity, pulledId, storeId}]`, `{products: {pulled: store}, orders: {…}}` or `{pulled: store}`. */
export function readIdMap(v: unknown): IdMapping[] | undefined {
  const out: IdMapping[] = [];
  if (Array.isArray(v)) {
    for (const m of v) {
      if (!isObject(m)) continue;
      const pulledId = str(m.pulledId) ?? str(m.pulled) ?? str(m.id);
      const storeId = str(m.storeId) ?? str(m.store) ?? (typeof m.storeId === 'number' ? String(m.storeId) : undefined);
      if (pulledId !== undefined && storeId !== undefined) out.push({ entity: str(m.entity) ?? '', pulledId, storeId });
    }
  } else if (isObject(v)) {
    const byEntity = isObject(v.products) || isObject(v.orders);
    const groups: Array<[string, unknown]> = byEntity ? [['products', v.products], ['orders', v.orders]] : [['', v]];
    for (const [entity, group] of groups) {
      if (!isObject(group)) continue;
      for (const [pulledId, storeId] of Object.entries(group)) if (typeof storeId === 'string' || typeof storeId === 'number') out.push({ entity, pulledId, storeId: String(storeId) });
    }
  } else return undefined;
  return out;
}

/** One connection of `GET /connections`, read tolerantly; undefined when it has no name. */
export function readReverseView(item: unknown): ReverseConnectionView | undefined {
  if (!isObject(item)) return undefined;
  const v: Json = isObject(item.status) ? { ...item.status, name: item.name ?? item.status.connection } : item;
  const name = str(v.name) ?? str(v.connection);
  if (!name) return undefined;
  const current = isObject(v.current) ? (v.current as ReverseConnectionView['current']) : null;
  const list = (x: unknown) => (Array.isArray(x) ? x.filter(isObject) : []);
  const idMap = readIdMap(v.idMap ?? v.storeIds ?? v.ids);
  return {
    name,
    connectionstatus: str(v.connectionstatus) ?? str(v.upstreamstatus) ?? 'unknown',
    mode: str(v.mode) ?? 'unknown',
    current,
    queue: list(v.queue).map((q) => ({ kind: str(q.kind) ?? '?', ...(str(q.entity) ? { entity: str(q.entity) } : {}) })),
    products: counts(v.products),
    orders: counts(v.orders),
    failures: list(v.failures)
      .slice(-MAX_LISTED)
      .map((f) => ({
        transaction: num(f.transaction),
        entity: str(f.entity),
        id: str(f.id),
        source: str(f.source),
        error: str(f.error) ?? '',
        reasons: list(f.reasons).map((r) => ({ message: str(r.message) ?? str(r.msg), code: str(r.code) ?? num(r.code)?.toString() })),
        at: num(f.at),
      })),
    transactions: list(v.transactions)
      .slice(-MAX_LISTED)
      .map((t) => {
        const entities = Array.isArray(t.entities) ? t.entities.filter((e): e is string => typeof e === 'string').join(', ') : undefined;
        const items = num(t.items) ?? (isObject(t.items) ? { products: num(t.items.products), orders: num(t.items.orders) } : undefined);
        return {
          transaction: num(t.transaction),
          kind: str(t.kind),
          entity: str(t.entity) ?? (entities || undefined),
          startedAt: num(t.startedAt),
          endedAt: num(t.endedAt) ?? num(t.finishedAt),
          outcome: str(t.outcome),
          remaining: num(t.remaining),
          items,
        };
      }),
    ...(idMap ? { idMap } : {}),
  };
}

const parseSourceOptions = defineOptions('createReverseHttpSource', {
  timeoutMs: opt.int({ min: 1, max: 600_000, unit: 'ms' }).default(5_000),
  fetch: opt.fn<typeof fetch>().optional(),
});

/**
 * @example
 * ```ts
 * import { createDashboardRouter, createReverseHttpSource } from 'storebridge/dashboard';
 * app.use(createDashboardRouter({ reverse: [createReverseHttpSource('http://127.0.0.1:8080')] }));
 * ```
 */
export function createReverseHttpSource(url: string, options: ReverseHttpSourceOptions = {}): ReverseSource {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new DashboardSourceError('reverse service', `"${url}" is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new DashboardSourceError('reverse service', 'the URL must be http(s)');
  if (base.username || base.password) throw new DashboardSourceError('reverse service', 'the URL must not carry credentials');
  const root = base.toString().replace(/\/+$/, '');
  const label = base.origin + base.pathname.replace(/\/+$/, '');
  const { timeoutMs, fetch: given } = parseSourceOptions(options);
  const doFetch = given ?? fetch;

  async function call(path: string, init: RequestInit = {}): Promise<unknown> {
    let res: Response;
    try {
      res = await doFetch(root + path, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const why = e.name === 'TimeoutError' ? `did not answer within ${timeoutMs} ms` : `cannot be reached (${e.cause?.code ?? 'network error'})`;
      throw new DashboardSourceError(`reverse service ${label}`, why);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const said = isObject(body) && typeof body.error === 'string' ? `: ${body.error.slice(0, 300)}` : '';
      const hint = res.status === 403 ? ' (its operator routes answer loopback clients only: run the dashboard on the same machine)' : '';
      throw new DashboardSourceError(`reverse service ${label}`, `answered HTTP ${res.status}${said}${hint}`, res.status);
    }
    if (body === undefined) throw new DashboardSourceError(`reverse service ${label}`, 'answered something that is not JSON');
    return body;
  }

  return {
    label,
    async connections() {
      const body = await call('/connections');
      const items = Array.isArray(body) ? body : isObject(body) && Array.isArray(body.connections) ? body.connections : undefined;
      if (!items) throw new DashboardSourceError(`reverse service ${label}`, 'GET /connections did not answer a list of connections');
      return items.map(readReverseView).filter((v): v is ReverseConnectionView => v !== undefined);
    },
    async queue(name, request) {
      const body = await call(`/connections/${encodeURIComponent(name)}/queue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
      });
      return isObject(body) && typeof body.position === 'number' ? body.position : 0;
    },
  };
}
