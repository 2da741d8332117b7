/**
 * The store's daemon: from inside the store's network it starts every call of the reverse
 * connection. It asks the service what it wants (`GET {P}/mode`), runs that transaction against
 * the store's adapter, and backs off when idle.
 *
 * Restart-safe: the daemon keeps no state of its own between calls. Where it is in a transaction
 * is always read back from the service (`upstreamstatus`, `entity`, `hasmore`), so a daemon that
 * died anywhere resumes where the service says: the item it held is handed out again, an
 * acknowledged item is not, a push resumes at the entity the service expects.
 */
import type { StoreAdapter, SortKey } from '../../adapter';
import { keyOf } from '../../adapter';
import { guardAdapter, type GuardedAdapter } from '../../adapter-guard';
import { CONVERTERS, ConversionError } from '../../contract/converters';
import {
  EntityBodySchema,
  HasMoreSchema,
  ModeSchema,
  PulledOrderSchema,
  PulledProductSchema,
  PushReceivedSchema,
  ReadyForNextSchema,
  UpstreamStatusSchema,
  type ConnectionStatus,
  type Mode,
  type StorageFailureReport,
} from '../../contract/messages';
import { parseWire } from '../../contract/parse';
import type { ReverseOrder, ReverseProduct } from '../../contract/reverse';
import type { Entity, Order, Product } from '../../contract/webhook';
import { InvalidOptionError } from '../../errors';
import { networkFailure } from '../../http/network-failure';
import { fetchExchange, nodeExchange, type Exchange, type ExchangeRequest, type ExchangeResponse } from '../../http/exchange';
import { REVERSE_BASE_PATH } from '../../contract/reverse-routes';
import { ReverseServiceError, ReverseTransportError } from '../reverse-errors';
import type { z } from 'zod';

/** Reason codes of the storage failure reports the daemon sends (`reasons[].code`). */
export const FAILURE_CODES = {
  /** The adapter's `checkProduct` / `checkOrder` refused the item; one reason per message. */
  REFUSED_BY_STORE: 1001,
  /** The adapter threw while reading or writing the item. */
  STORE_FAILED: 1002,
  /** The item cannot be converted to the store's (webhook) form. */
  NOT_CONVERTIBLE: 1003,
} as const;

export type DaemonEvent =
  | { readonly type: 'mode'; readonly mode: Mode }
  | { readonly type: 'initialized'; readonly kind: 'pull' | 'push' | 'pingsample'; readonly entity?: Entity }
  | { readonly type: 'resumed'; readonly kind: 'pull' | 'push' | 'pingsample'; readonly entity?: Entity | 'finish' }
  | { readonly type: 'item-stored'; readonly entity: Entity; readonly id: string }
  | { readonly type: 'item-failed'; readonly entity: Entity; readonly id: string; readonly error: string }
  | { readonly type: 'page-pushed'; readonly kind: 'push' | 'pingsample'; readonly entity: Entity; readonly items: number; readonly bytes: number }
  | { readonly type: 'push-item-skipped'; readonly entity: Entity; readonly id: string; readonly reason: string }
  | { readonly type: 'finished'; readonly kind: 'pull' | 'push' | 'pingsample'; readonly entity?: Entity }
  | { readonly type: 'idle'; readonly nextPollMs: number }
  | { readonly type: 'error'; readonly error: string };

export interface DaemonOptions {
  /** The service's base URL (`{base_url}`), e.g. `https://sync.example.com`. */
  readonly serviceUrl: string;
  /** The connection key. Only ever sent in paths; never logged, never in errors or events. */
  readonly connectionKey: string;
  /** The store's adapter: pulls are written into it, pushes are read from it. */
  readonly adapter: StoreAdapter | GuardedAdapter;
  /** Wait between polls (ms). Default 1000. */
  readonly pollIntervalMs?: number;
  /** When idle, the wait doubles up to this (ms). Default 30 000. */
  readonly idlePollMaxMs?: number;
  /** Time-out of each call to the service (ms). Default 30 000. */
  readonly requestTimeoutMs?: number;
  /** Byte budget of one push page's body. Default 10 000 000. */
  readonly maxPageBytes?: number;
  /** Most items in one push page. Default 500. */
  readonly pageItems?: number;
  /** Items of each entity a sample push sends (one page). Default 10. */
  readonly sampleSize?: number;
  /** `runOnce` gives up (report `ok: false`) after this many failed attempts in a row (at once on a 404: unknown key). Default 5. */
  readonly maxConsecutiveErrors?: number;
  /** A `fetch` to call instead of the default transport (`node:http` / `node:https`, keep-alive). */
  readonly fetch?: typeof fetch;
  /** Progress and errors, for logs or a progress bar. Events never hold the key. */
  readonly onEvent?: (event: DaemonEvent) => void;
  /** The clock (Unix ms), used for `touch`-free writes. Default `Date.now`. */
  readonly now?: () => number;
}

/** What a run did. */
export interface DaemonReport {
  /** `false` when the run gave up on repeated errors. Items refused by the store do not make it false. */
  ok: boolean;
  /** Items pulled and stored (acknowledged `succeded`). */
  pulled: { products: number; orders: number };
  /** Items pulled that the store refused (acknowledged `failed`). */
  failed: number;
  /** Items the service acknowledged receiving in normal push pages. */
  pushed: { products: number; orders: number };
  /** Items sent in sample pushes. */
  sampled: { products: number; orders: number };
  /** Items of the store left out of a push (larger than the page budget, or not convertible). */
  pushSkipped: number;
  /** Transactions finished. */
  transactions: number;
  /** Errors met (each retried from `mode`), oldest first, at most 20. */
  errors: string[];
}

export interface Daemon {
  /** Does what `mode` asks until the service is idle, then returns what was done. */
  runOnce(): Promise<DaemonReport>;
  /** Runs until `stop()`: works while there is work, polls with back-off while idle. */
  start(): void;
  /** Stops between items (an item being stored is finished and acknowledged first). */
  stop(): Promise<void>;
  /** Totals since the daemon was created. */
  report(): DaemonReport;
}

interface DaemonConfig {
  readonly base: string;
  readonly adapter: GuardedAdapter;
  readonly pollIntervalMs: number;
  readonly idlePollMaxMs: number;
  readonly requestTimeoutMs: number;
  readonly maxPageBytes: number;
  readonly pageItems: number;
  readonly sampleSize: number;
  readonly maxConsecutiveErrors: number;
  /** The injected fetch's exchange, or the default one over node:http. */
  readonly exchange: Exchange;
  readonly onEvent: (event: DaemonEvent) => void;
  readonly now: () => number;
}

/** Thrown inside a run when `stop()` was asked for, at a point where stopping is clean. */
class StopRequested extends Error {
  override readonly name = 'StopRequested';
}

function positiveInteger(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new InvalidOptionError(option, `expected a positive integer, got ${String(value)}`);
  return value;
}

function parseOptions(options: DaemonOptions): DaemonConfig {
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  let url: URL;
  try {
    url = new URL(options.serviceUrl);
  } catch {
    throw new InvalidOptionError('serviceUrl', 'expected an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidOptionError('serviceUrl', 'expected an http or https URL');
  if (typeof options.connectionKey !== 'string' || options.connectionKey === '') throw new InvalidOptionError('connectionKey', 'expected a non-empty string');
  if (!options.adapter) throw new InvalidOptionError('adapter', 'the store\'s adapter is required');
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new InvalidOptionError('fetch', 'must be a function');
  const pollIntervalMs = positiveInteger('pollIntervalMs', options.pollIntervalMs, 1000);
  const idlePollMaxMs = positiveInteger('idlePollMaxMs', options.idlePollMaxMs, 30_000);
  if (idlePollMaxMs < pollIntervalMs) throw new InvalidOptionError('idlePollMaxMs', 'must not be smaller than pollIntervalMs');
  const base = url.href.replace(/\/+$/, '') + REVERSE_BASE_PATH + '/' + encodeURIComponent(options.connectionKey);
  return {
    base,
    adapter: guardAdapter(options.adapter),
    pollIntervalMs,
    idlePollMaxMs,
    requestTimeoutMs: positiveInteger('requestTimeoutMs', options.requestTimeoutMs, 30_000),
    maxPageBytes: positiveInteger('maxPageBytes', options.maxPageBytes, 10_000_000),
    pageItems: positiveInteger('pageItems', options.pageItems, 500),
    sampleSize: positiveInteger('sampleSize', options.sampleSize, 10),
    maxConsecutiveErrors: positiveInteger('maxConsecutiveErrors', options.maxConsecutiveErrors, 5),
    exchange: options.fetch ? fetchExchange(options.fetch) : nodeExchange,
    onEvent: options.onEvent ?? (() => undefined),
    now: options.now ?? Date.now,
  };
}

function emptyReport(): DaemonReport {
  return { ok: true, pulled: { products: 0, orders: 0 }, failed: 0, pushed: { products: 0, orders: 0 }, sampled: { products: 0, orders: 0 }, pushSkipped: 0, transactions: 0, errors: [] };
}

const SINGULAR = { products: 'product', orders: 'order' } as const;

/**
 * Keeps what only the store's (webhook) form has — product `properties` and `variationid`s, order
 * `shipments`, `rating`, `feedback`, `messages`, buyer addresses — when a pulled item (reverse form,
 * which lacks them) replaces a stored one. Everything both forms carry comes from the service.
 */
export function keepStoreOnlyFields<E extends Entity>(entity: E, existing: Product | Order | undefined, incoming: Product | Order): Product | Order {
  if (!existing) return incoming;
  if (entity === 'products') {
    const before = existing as Product;
    const out: Product = { ...(incoming as Product) };
    if (out.properties === undefined && before.properties !== undefined) out.properties = before.properties;
    if (out.variations && before.variations && out.variations.length === before.variations.length) {
      out.variations = out.variations.map((v, i) => (v.variationid === undefined && before.variations![i].variationid !== undefined ? { variationid: before.variations![i].variationid, ...v } : v));
    }
    return out;
  }
  const before = existing as Order;
  const out: Order = { ...(incoming as Order) };
  for (const k of ['shipments', 'rating', 'feedback', 'messages'] as const) {
    if (out[k] === undefined && before[k] !== undefined) (out as Record<string, unknown>)[k] = before[k];
  }
  if (out.buyer && before.buyer) {
    const buyer = { ...out.buyer };
    if (buyer.billingaddress === undefined && before.buyer.billingaddress !== undefined) buyer.billingaddress = before.buyer.billingaddress;
    if (buyer.shipmentaddress === undefined && before.buyer.shipmentaddress !== undefined) buyer.shipmentaddress = before.buyer.shipmentaddress;
    out.buyer = buyer;
  }
  return out;
}

/**
 * Creates the store's daemon.
 *
 * @example
 * ```ts
 * import { createDaemon } from 'storebridge/reverse';
 * import { openSqlAdapter } from 'storebridge/adapters/sql';
 *
 * const daemon = createDaemon({
 *   serviceUrl: 'https://sync.example.com',
 *   connectionKey: process.env.CONNECTION_KEY!,
 *   adapter: await openSqlAdapter('sqlite:store.db'),
 *   onEvent: (e) => console.log(e.type),
 * });
 * const report = await daemon.runOnce(); // or daemon.start() … await daemon.stop()
 * ```
 */
export function createDaemon(options: DaemonOptions): Daemon {
  const config = parseOptions(options);
  const totals = emptyReport();
  let stopping = false;
  let wake: AbortController = new AbortController();
  let loop: Promise<void> | undefined;

  const emit = (event: DaemonEvent) => {
    try {
      config.onEvent(event);
    } catch {
      // A failing listener must not stop the daemon.
    }
  };

  function sleep(ms: number): Promise<void> {
    if (stopping) return Promise.resolve();
    const signal = wake.signal;
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done);
    });
  }

  function checkStop(): void {
    if (stopping) throw new StopRequested('stop requested');
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  async function call<S extends z.ZodType>(method: 'GET' | 'POST', path: string, schema: S | undefined, body?: unknown): Promise<z.infer<S>> {
    const request: ExchangeRequest =
      method === 'POST'
        ? { method, headers: { accept: 'application/json', 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body ?? {}), signal: AbortSignal.timeout(config.requestTimeoutMs) }
        : { method, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(config.requestTimeoutMs) };
    let res: ExchangeResponse;
    let text: string;
    try {
      res = await config.exchange(config.base + path, request);
      const chunks: Uint8Array[] = [];
      if (res.body) for await (const chunk of res.body) chunks.push(chunk);
      text = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      const timedOut = (err as Error)?.name === 'TimeoutError' || (err as Error)?.name === 'AbortError';
      throw new ReverseTransportError(method, path, timedOut ? `no answer within ${config.requestTimeoutMs} ms` : `the service could not be reached${networkFailure(err, config.base).detail}`, { cause: err });
    }
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (res.status < 200 || res.status > 299) {
      const detail = typeof (json as { error?: unknown })?.error === 'string' ? (json as { error: string }).error : '';
      throw new ReverseServiceError(method, path, res.status, detail.slice(0, 500));
    }
    if (!schema) return undefined as z.infer<S>;
    const parsed = parseWire(schema, json);
    if (!parsed.ok) throw new ReverseTransportError(method, path, `unexpected reply: ${parsed.error}`);
    return parsed.value;
  }

  const upstreamStatus = async (): Promise<ConnectionStatus> => (await call('GET', '/upstreamstatus', UpstreamStatusSchema)).connectionstatus;

  /** Polls `upstreamstatus` while it is `from`; returns the first other value. */
  async function pollWhile(from: ConnectionStatus): Promise<ConnectionStatus> {
    for (;;) {
      const s = await upstreamStatus();
      if (s !== from) return s;
      checkStop();
      await sleep(config.pollIntervalMs);
    }
  }

  /** After a general finish: waits until `finished` (or `waiting`: finished, and the next transaction already queued). */
  async function waitFinished(): Promise<void> {
    let s = await upstreamStatus();
    while (s === 'finishing') {
      checkStop();
      await sleep(config.pollIntervalMs);
      s = await upstreamStatus();
    }
  }

  /** A transaction is asked for while the previous one is still closing: wait, then ask `mode` again. */
  async function settle(status: ConnectionStatus): Promise<void> {
    if (status === 'finishing') return waitFinished();
    await sleep(config.pollIntervalMs);
  }

  // ---- pull ---------------------------------------------------------------------------------

  async function storeItem(entity: Entity, wire: ReverseProduct | ReverseOrder, run: DaemonReport): Promise<void> {
    const id = wire._id;
    const itemPath = `/pull/${entity}/${encodeURIComponent(id)}`;
    const fail = async (report: StorageFailureReport) => {
      await call('POST', `${itemPath}/failed`, undefined, report);
      run.failed++;
      totals.failed++;
      emit({ type: 'item-failed', entity, id, error: report.error });
    };
    let doc: Product | Order;
    try {
      doc = entity === 'products' ? CONVERTERS.products.toWebhook(wire as ReverseProduct) : CONVERTERS.orders.toWebhook(wire as ReverseOrder);
    } catch (err) {
      if (!(err instanceof ConversionError)) throw err;
      return fail({ error: `the ${SINGULAR[entity]} cannot be converted to the store's form`, reasons: [{ message: err.message, code: FAILURE_CODES.NOT_CONVERTIBLE }] });
    }
    const store = config.adapter.entity(entity);
    const signal = AbortSignal.timeout(config.requestTimeoutMs);
    let stored: Product | Order;
    try {
      const merged = keepStoreOnlyFields(entity, await store.get(id, { signal }), doc);
      const reasons = await store.check(merged as never, { signal });
      if (reasons.length > 0) {
        return fail({ error: `the store refused the ${SINGULAR[entity]}`, reasons: reasons.map((message) => ({ message, code: FAILURE_CODES.REFUSED_BY_STORE })) });
      }
      stored = (await store.upsert(merged as never, { lastUpdated: 'keep', now: config.now(), signal })).item;
    } catch (err) {
      // AdapterError / AdapterContractError messages name the operation, never the adapter's internals.
      const message = err instanceof Error ? err.message : 'the data adapter failed';
      return fail({ error: `the store could not save the ${SINGULAR[entity]}`, reasons: [{ message, code: FAILURE_CODES.STORE_FAILED }] });
    }
    const reverse = entity === 'products' ? CONVERTERS.products.toReverse(stored as Product) : CONVERTERS.orders.toReverse(stored as Order);
    await call('POST', `${itemPath}/succeded`, undefined, { [SINGULAR[entity]]: reverse });
    run.pulled[entity]++;
    totals.pulled[entity]++;
    emit({ type: 'item-stored', entity, id });
  }

  async function pullItems(entity: Entity, run: DaemonReport): Promise<void> {
    const nextSchema = entity === 'products' ? PulledProductSchema : PulledOrderSchema;
    for (;;) {
      checkStop();
      const { hasmore } = await call('GET', `/pull/${entity}/hasmore`, HasMoreSchema);
      if (hasmore === 'done') return;
      if (hasmore === 'waiting') {
        // An acknowledgement is still open (e.g. we restarted right after sending it): close it.
        const { ready } = await call('GET', `/pull/${entity}/readyfornext`, ReadyForNextSchema);
        if (!ready) await sleep(config.pollIntervalMs);
        continue;
      }
      let body: Record<string, ReverseProduct | ReverseOrder>;
      try {
        body = (await call('GET', `/pull/${entity}/next`, nextSchema)) as Record<string, ReverseProduct | ReverseOrder>;
      } catch (err) {
        // The service skipped what was left (gone from its store): ask hasmore again.
        if (err instanceof ReverseServiceError && err.status === 409) continue;
        throw err;
      }
      await storeItem(entity, body[SINGULAR[entity]], run);
      for (;;) {
        const { ready } = await call('GET', `/pull/${entity}/readyfornext`, ReadyForNextSchema);
        if (ready) break;
        checkStop();
        await sleep(config.pollIntervalMs);
      }
    }
  }

  async function runPull(run: DaemonReport): Promise<void> {
    let status = await upstreamStatus();
    if (status === 'finishing' || status === 'finished') return settle(status);
    // Rule 2 (b): the entity the service is about to hand out.
    const { entity } = await call('GET', '/entity', EntityBodySchema);
    if (status === 'waiting') {
      await call('POST', '/pull/initialize', undefined, { entity });
      status = await pollWhile('waiting');
      if (status !== 'initialized') return;
      emit({ type: 'initialized', kind: 'pull', entity });
    } else {
      emit({ type: 'resumed', kind: 'pull', entity });
    }
    await pullItems(entity, run);
    await call('POST', `/pull/${entity}/finish`, undefined, {});
    await call('POST', '/pull/finish', undefined, {});
    await waitFinished();
    run.transactions++;
    totals.transactions++;
    emit({ type: 'finished', kind: 'pull', entity });
  }

  // ---- push ---------------------------------------------------------------------------------

  async function pushEntity(kind: 'push' | 'pingsample', entity: Entity, run: DaemonReport): Promise<void> {
    const store = config.adapter.entity(entity);
    const open = `{"${entity}":[`;
    const overhead = Buffer.byteLength(open) + 2;
    const limit = kind === 'pingsample' ? config.sampleSize : config.pageItems;
    let items: string[] = [];
    let bytes = overhead;
    const flush = async () => {
      if (items.length === 0) return;
      const body = open + items.join(',') + ']}';
      const { received } = await call('POST', `/${kind}/${entity}`, PushReceivedSchema, body);
      if (kind === 'push') {
        run.pushed[entity] += received;
        totals.pushed[entity] += received;
      } else {
        run.sampled[entity] += received;
        totals.sampled[entity] += received;
      }
      emit({ type: 'page-pushed', kind, entity, items: items.length, bytes });
      items = [];
      bytes = overhead;
    };
    let after: SortKey | undefined;
    for (;;) {
      checkStop();
      const page = await store.list({ sortorder: 'asc', limit, after, signal: AbortSignal.timeout(config.requestTimeoutMs) });
      for (const listed of page) {
        let json: string;
        try {
          json = JSON.stringify(entity === 'products' ? CONVERTERS.products.toReverse(listed.doc as Product) : CONVERTERS.orders.toReverse(listed.doc as Order));
        } catch (err) {
          if (!(err instanceof ConversionError)) throw err;
          run.pushSkipped++;
          totals.pushSkipped++;
          emit({ type: 'push-item-skipped', entity, id: listed._id, reason: err.message });
          continue;
        }
        const size = Buffer.byteLength(json) + (items.length > 0 ? 1 : 0);
        if (overhead + Buffer.byteLength(json) > config.maxPageBytes) {
          run.pushSkipped++;
          totals.pushSkipped++;
          emit({ type: 'push-item-skipped', entity, id: listed._id, reason: `larger than the page budget of ${config.maxPageBytes} bytes` });
          continue;
        }
        if (bytes + size > config.maxPageBytes || items.length >= limit) {
          if (kind === 'pingsample') break;
          await flush();
        }
        bytes += Buffer.byteLength(json) + (items.length > 0 ? 1 : 0);
        items.push(json);
      }
      // A sample push sends one page of each entity at most.
      if (kind === 'pingsample' || page.length < limit) break;
      after = keyOf(page[page.length - 1]);
    }
    await flush();
  }

  async function runPush(kind: 'push' | 'pingsample', run: DaemonReport): Promise<void> {
    let status = await upstreamStatus();
    if (status === 'finishing' || status === 'finished') return settle(status);
    let from: Entity | 'finish' = 'products';
    if (status === 'waiting') {
      await call('POST', '/push/initialize', undefined, {});
      status = await pollWhile('waiting');
      if (status !== 'initialized') return;
      emit({ type: 'initialized', kind });
    } else {
      try {
        from = (await call('GET', '/entity', EntityBodySchema)).entity;
      } catch (err) {
        // 409 on entity during a push: both entities are finished, only the general finish is left.
        if (!(err instanceof ReverseServiceError && err.status === 409)) throw err;
        from = 'finish';
      }
      emit({ type: 'resumed', kind, entity: from });
    }
    if (from === 'products') {
      await pushEntity(kind, 'products', run);
      await call('POST', `/${kind}/products/finish`, undefined, {});
    }
    if (from !== 'finish') {
      await pushEntity(kind, 'orders', run);
      await call('POST', `/${kind}/orders/finish`, undefined, {});
    }
    await call('POST', `/${kind}/finish`, undefined, {});
    await waitFinished();
    run.transactions++;
    totals.transactions++;
    emit({ type: 'finished', kind });
  }

  // ---- the loop -----------------------------------------------------------------------------

  /** One pass: asks `mode`, runs that transaction. Returns the mode seen. */
  async function pass(run: DaemonReport): Promise<Mode> {
    const { mode } = await call('GET', '/mode', ModeSchema);
    emit({ type: 'mode', mode });
    if (mode === 'pull') await runPull(run);
    else if (mode === 'push' || mode === 'pingsample') await runPush(mode, run);
    return mode;
  }

  function recordError(run: DaemonReport, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    for (const r of [run, totals]) {
      r.errors.push(message);
      if (r.errors.length > 20) r.errors.shift();
    }
    emit({ type: 'error', error: message });
  }

  async function runOnce(): Promise<DaemonReport> {
    stopping = false;
    wake = new AbortController();
    const run = emptyReport();
    let failures = 0;
    for (;;) {
      if (stopping) break;
      try {
        if ((await pass(run)) === 'idle') break;
        failures = 0;
      } catch (err) {
        if (err instanceof StopRequested) break;
        recordError(run, err);
        // 404: the service does not know this key (or this is not its URL); retrying cannot help.
        const unknown = err instanceof ReverseServiceError && err.status === 404;
        if (unknown || ++failures >= config.maxConsecutiveErrors) {
          run.ok = false;
          break;
        }
        await sleep(Math.min(config.idlePollMaxMs, config.pollIntervalMs * 2 ** failures));
      }
    }
    return run;
  }

  async function forever(): Promise<void> {
    let wait = config.pollIntervalMs;
    while (!stopping) {
      try {
        const mode = await pass(emptyReport());
        if (mode !== 'idle') {
          wait = config.pollIntervalMs;
          continue;
        }
        emit({ type: 'idle', nextPollMs: wait });
      } catch (err) {
        if (err instanceof StopRequested) break;
        recordError(emptyReport(), err);
      }
      await sleep(wait);
      wait = Math.min(config.idlePollMaxMs, wait * 2);
    }
  }

  return {
    runOnce,
    start() {
      if (loop) return;
      stopping = false;
      wake = new AbortController();
      loop = forever().finally(() => {
        loop = undefined;
      });
    },
    async stop() {
      stopping = true;
      wake.abort();
      await loop;
    },
    report: () => ({ ...totals, pulled: { ...totals.pulled }, pushed: { ...totals.pushed }, sampled: { ...totals.sampled }, errors: [...totals.errors] }),
  };
}
