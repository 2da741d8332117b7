/**
 * A connection as the sync service sees it: a store client, a sink, a checkpoint store and a
 * schedule. One run at a time; `start()`/`stop()` drive the schedule; `pushOrder` sends an order
 * change to the store and answers with a typed result.
 */
import type { Order, Product } from '../contract/webhook';
import type { Entity, ItemOf } from '../contract/entities';
import type { StoreAdapter } from '../adapter';
import { guardAdapter, type GuardedAdapter, type GuardedEntityStore } from '../adapter-guard';
import { z } from 'zod';
import { InvalidOptionError } from '../errors';
import { defineOptions, opt } from '../options';
import { idempotencyKeyOf } from '../client/idempotency';
import { createStoreClient, type StoreClient, type WritableItem } from '../client/store-client';
import type { StoreClientOptions } from '../client/client-options';
import type { WriteMessage } from '../contract/messages';
import { MemoryCheckpointStore, type CheckpointStore } from './checkpoint-store';
import { IntervalScheduler } from './interval-scheduler';
import { runSync, type SyncEvent, type SyncMode, type SyncReport } from './sync-run';
import { notifyObservers, runObservation, type SyncObserver } from './sync-observer';

export interface SyncConnectionOptions {
  /** The connection's name (its key in the checkpoint store). */
  id: string;
  /** A client, or the options to create one. */
  client: StoreClient | StoreClientOptions;
  sink: StoreAdapter | GuardedAdapter;
  /** Default: in memory (state is lost on restart). */
  checkpoints?: CheckpointStore;
  /** The connection's synchronization interval, for `start()`. */
  intervalMs?: number;
  mode?: SyncMode;
  entities?: readonly Entity[];
  strategy?: 'auto' | 'offset' | 'cursor';
  concurrency?: number;
  onEvent?: (event: SyncEvent) => void;
  /** Called with every scheduled run's report. */
  onReport?: (report: SyncReport) => void;
  /** Told about every run (scheduled or not) and skipped tick: `createSyncMetrics()`, `MemorySyncHealth`… */
  observers?: readonly SyncObserver[];
}

/** The outcome of pushing a change to the store: never an exception. */
export type PushResult<T> =
  /** `item` is the store's: for a create, with the `_id` the store assigned. */
  | { status: 'accepted'; item: T; warnings: unknown[] }
  | { status: 'rejected'; error: string; reasons: WriteMessage[]; warnings: unknown[] }
  /** `idempotencyKey`: the key a create was sent with; push it again with that key to retry it without creating the item twice. */
  | { status: 'failed'; error: { name: string; code?: string; message: string; status?: number }; idempotencyKey?: string };

/** Options of a push: the `jobid` (default: the connection's current one) and, for a create, its `Idempotency-Key` (default: a new one). */
export interface PushOptions {
  jobid?: number;
  signal?: AbortSignal;
  idempotencyKey?: string;
}

export interface SyncConnection {
  readonly id: string;
  readonly client: StoreClient;
  /** Runs a sync now, or joins the one in progress. */
  run(options?: { signal?: AbortSignal; mode?: SyncMode }): Promise<SyncReport>;
  /** Starts the schedule (first run immediately). */
  start(): void;
  /** Stops the schedule; `abort: true` also aborts a run in progress (it resumes next time). */
  stop(options?: { abort?: boolean }): Promise<void>;
  readonly lastReport: SyncReport | undefined;
  /** Updates the order in the store (with `_id`) or creates it (without: the store assigns the id, which the result and the sink keep). */
  pushOrder(order: WritableItem<'orders'>, options?: PushOptions): Promise<PushResult<Order>>;
  pushProduct(product: WritableItem<'products'>, options?: PushOptions): Promise<PushResult<Product>>;
}

/** Declared once (`lib/options.ts`); what each run takes (`entities`, `strategy`, `concurrency`) `runSync` checks. */
const parseOptions = defineOptions('createSyncConnection', {
  id: opt.text(),
  client: opt.object<StoreClient | StoreClientOptions>('a StoreClient or its options'),
  sink: opt.object<StoreAdapter | GuardedAdapter>('a store adapter'),
  checkpoints: opt.object<CheckpointStore>('a CheckpointStore', (c) => typeof (c as Partial<CheckpointStore>).load === 'function' && typeof (c as Partial<CheckpointStore>).save === 'function').optional(),
  intervalMs: z.custom<number>(() => true).optional(), // the scheduler's (`IntervalScheduler`), checked there
  mode: opt.oneOf(['full', 'incremental']).optional(),
  entities: z.custom<readonly Entity[]>(() => true).optional(),
  strategy: z.custom<SyncConnectionOptions['strategy']>(() => true).optional(),
  concurrency: z.custom<number>(() => true).optional(),
  onEvent: opt.fn<(event: SyncEvent) => void>().optional(),
  onReport: opt.fn<(report: SyncReport) => void>().optional(),
  observers: z.array(opt.object<SyncObserver>('a sync observer'), { error: 'must be an array of sync observers' }).optional(),
});

/**
 * @example
 * ```ts
 * import { createSyncConnection, JsonFileCheckpointStore } from 'storebridge/sync';
 * const conn = createSyncConnection({
 *   id: 'shop-1',
 *   client: { baseUrl: 'https://shop.example/webhooks', svcKey: process.env.SVC_KEY! },
 *   sink: myAdapter,
 *   checkpoints: new JsonFileCheckpointStore('./sync-state.json'),
 *   intervalMs: 15 * 60_000,
 *   onReport: (r) => console.log(r.ok, r.products.count, r.orders.count),
 * });
 * conn.start();
 * process.on('SIGTERM', () => void conn.stop());
 * ```
 */
export function createSyncConnection(options: SyncConnectionOptions): SyncConnection {
  parseOptions(options);
  const client = 'walk' in options.client ? options.client : createStoreClient(options.client);
  const sink = guardAdapter(options.sink);
  const checkpoints = options.checkpoints ?? new MemoryCheckpointStore();
  let inFlight: Promise<SyncReport> | undefined;
  let controller: AbortController | undefined;
  let lastReport: SyncReport | undefined;

  const run = (o: { signal?: AbortSignal; mode?: SyncMode } = {}): Promise<SyncReport> => {
    if (inFlight) return inFlight;
    controller = new AbortController();
    const stats0 = { ...client.stats };
    const startedAt = Date.now();
    const onAbort = () => controller!.abort(o.signal!.reason);
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    inFlight = runSync({
      connectionId: options.id,
      client,
      sink,
      checkpoints,
      mode: o.mode ?? options.mode,
      entities: options.entities,
      strategy: options.strategy,
      concurrency: options.concurrency,
      signal: controller.signal,
      onEvent: options.onEvent,
    }).finally(() => {
      o.signal?.removeEventListener('abort', onAbort);
      inFlight = undefined;
      controller = undefined;
    });
    return inFlight.then(async (r) => {
      lastReport = r;
      if (options.observers?.length) {
        const measured = { startedAt, endedAt: Date.now(), requests: client.stats.requests - stats0.requests, retries: client.stats.retries - stats0.retries };
        await notifyObservers(options.observers, runObservation(r, measured));
      }
      return r;
    });
  };

  let scheduler: IntervalScheduler | undefined;
  if (options.intervalMs !== undefined) {
    scheduler = new IntervalScheduler({
      intervalMs: options.intervalMs,
      task: async () => options.onReport?.(await run()),
      onSkip: () => void notifyObservers(options.observers, { type: 'skipped', connection: options.id, at: Date.now(), reason: 'busy' }),
    });
  }

  return {
    id: options.id,
    client,
    run,
    get lastReport() {
      return lastReport;
    },
    start() {
      if (!scheduler) throw new InvalidOptionError('intervalMs', 'is required to start a schedule');
      scheduler.start();
    },
    async stop(o = {}) {
      if (o.abort) controller?.abort(new Error('stopped'));
      await scheduler?.stop();
      await inFlight?.catch(() => undefined);
    },
    pushOrder: (order, o) => pushItem({ client, sink, checkpoints, id: options.id }, 'orders', order, o),
    pushProduct: (product, o) => pushItem({ client, sink, checkpoints, id: options.id }, 'products', product, o),
  };
}

/**
 * Sends one change to the store and, when it is accepted, keeps the service's copy in step with the
 * item as the store now holds it — for a create, under the `_id` the store assigned, so a later
 * update of it reaches the same store item. A create carries an `Idempotency-Key`, the same on every
 * retry (and in a failed result, to retry it later), so a retry after a lost reply creates nothing
 * twice. Never throws: the result says what happened.
 */
async function pushItem<E extends Entity>(
  conn: { client: StoreClient; sink: GuardedAdapter; checkpoints: CheckpointStore; id: string },
  entity: E,
  item: WritableItem<E>,
  o: PushOptions = {},
): Promise<PushResult<ItemOf<E>>> {
  let idempotencyKey: string | undefined;
  try {
    idempotencyKey = idempotencyKeyOf(item, o.idempotencyKey);
    const jobid = o.jobid ?? ((await conn.checkpoints.load(conn.id))?.jobid ?? 0);
    const r = await conn.client.write(entity, item, { jobid, signal: o.signal, idempotencyKey });
    if (!r.ok) return { status: 'rejected', error: r.error, reasons: r.reasons, warnings: r.warnings };
    const store: GuardedEntityStore<E> = conn.sink.entity(entity);
    await store.upsert(r.item, { lastUpdated: 'keep', now: Date.now(), signal: o.signal ?? new AbortController().signal });
    return { status: 'accepted', item: r.item, warnings: r.warnings };
  } catch (err) {
    const e = err as Error & { code?: string; status?: number };
    const error = { name: e.name ?? 'Error', code: e.code, message: e.message ?? String(err), status: e.status };
    return idempotencyKey === undefined ? { status: 'failed', error } : { status: 'failed', error, idempotencyKey };
  }
}
