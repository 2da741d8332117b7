/**
 * Shared Prometheus helpers (prom-client) for the store router and the sync service. Nothing here
 * registers anything globally: each embedder creates (or passes) its own `Registry`, and metrics
 * are exposed only where the owner mounts `metricsHandler`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Label values of one observation: `{ outcome: 'ok' }`. */
export type LabelValues<L extends string> = Partial<Record<L, string | number>>;

// The types below are prom-client's, declared structurally (the part storebridge uses), so that the
// published types never import prom-client: it is an optional peer, and a TypeScript user without it
// (skipLibCheck off) would otherwise get "Cannot find module 'prom-client'" from storebridge's own
// .d.ts. prom-client's classes are assignable to them; the test suite checks that against the real
// package (test/server/observability.test.ts).

/** A prom-client `Registry` (`new Registry()` from prom-client, or `createMetrics().registry`). */
export interface Registry {
  metrics(): Promise<string>;
  readonly contentType: string;
  registerMetric(metric: unknown): void;
  getSingleMetric(name: string): unknown;
}

/** A prom-client `Counter`. */
export interface Counter<L extends string = string> {
  inc(labels: LabelValues<L>, value?: number): void;
  inc(value?: number): void;
}

/** A prom-client `Gauge`. */
export interface Gauge<L extends string = string> {
  set(labels: LabelValues<L>, value: number): void;
  set(value: number): void;
  inc(labels: LabelValues<L>, value?: number): void;
  inc(value?: number): void;
  dec(labels: LabelValues<L>, value?: number): void;
  dec(value?: number): void;
}

/** A prom-client `Histogram`. */
export interface Histogram<L extends string = string> {
  observe(labels: LabelValues<L>, value: number): void;
  observe(value: number): void;
  /** Starts a timer; the returned function observes the seconds elapsed (and returns them). */
  startTimer(labels?: LabelValues<L>): (labels?: LabelValues<L>) => number;
}

/** What a metric is created with (prom-client's configuration, without `registers`). */
export interface MetricConfiguration<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
}

export interface HistogramConfiguration<L extends string> extends MetricConfiguration<L> {
  /** Upper bounds of the buckets (prom-client's defaults when absent). */
  readonly buckets?: number[];
}

type PromClient = typeof import('prom-client');

/**
 * prom-client, loaded on first use: importing storebridge never requires it, only asking for
 * metrics does (then it must be installed beside storebridge).
 */
function loadPromClient(): PromClient {
  try {
    return require('prom-client') as PromClient;
  } catch (err) {
    throw new Error('storebridge metrics need the prom-client package: npm install prom-client', { cause: err });
  }
}

export interface MetricsOptions {
  /** The registry to register into. Default: a new, private `Registry` (never prom-client's global one). */
  readonly registry?: Registry;
  /** Prefix of every metric name. Default `storebridge_`. */
  readonly prefix?: string;
  /** Also collect Node.js process metrics (event loop lag, heap…) into this registry. Default `false`. */
  readonly defaultMetrics?: boolean;
}

/**
 * A registry plus get-or-create constructors: asking twice for the same name returns the same
 * metric, so several components (or two routers) can share one registry without a
 * "metric already registered" error. A name registered with another type or labels throws.
 *
 * @example
 * ```ts
 * import { createMetrics, metricsHandler } from 'storebridge/metrics';
 * const metrics = createMetrics();
 * const runs = metrics.counter({ name: 'sync_runs_total', help: 'Sync runs by outcome', labelNames: ['outcome'] });
 * runs.inc({ outcome: 'ok' });
 * app.get('/metrics', metricsHandler(metrics.registry));
 * ```
 */
export interface Metrics {
  readonly registry: Registry;
  readonly prefix: string;
  counter<L extends string>(config: MetricConfiguration<L>): Counter<L>;
  gauge<L extends string>(config: MetricConfiguration<L>): Gauge<L>;
  histogram<L extends string>(config: HistogramConfiguration<L>): Histogram<L>;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Creates a `Metrics` over a new or given registry. */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = loadPromClient();
  const registry = options.registry ?? new Registry();
  if (!registry || typeof registry.registerMetric !== 'function' || typeof registry.getSingleMetric !== 'function') throw new TypeError('metrics option "registry": expected a prom-client Registry');
  const prefix = options.prefix ?? 'storebridge_';
  if (prefix !== '' && !METRIC_NAME.test(prefix)) throw new TypeError(`metrics option "prefix": ${JSON.stringify(prefix)} is not a valid metric name prefix`);
  // The registry is prom-client's own (checked above); the structural type only keeps it out of the .d.ts.
  const registers = [registry as unknown as InstanceType<PromClient['Registry']>];
  if (options.defaultMetrics) collectDefaultMetrics({ register: registers[0], prefix });

  function getOrCreate<M extends object>(kind: string, config: { name: string; labelNames?: readonly string[] }, make: (name: string) => M): M {
    const name = prefix + config.name;
    const existing = registry.getSingleMetric(name) as (M & { labelNames?: string[] }) | undefined;
    if (existing) {
      const same = (existing.constructor as { name: string }).name === kind && sameLabels(existing.labelNames ?? [], config.labelNames ?? []);
      if (!same) throw new TypeError(`metric "${name}" is already registered with another type or other labels`);
      return existing;
    }
    return make(name);
  }

  return {
    registry,
    prefix,
    counter: (config) => getOrCreate('Counter', config, (name) => new Counter({ ...config, name, registers })),
    gauge: (config) => getOrCreate('Gauge', config, (name) => new Gauge({ ...config, name, registers })),
    histogram: (config) => getOrCreate('Histogram', config, (name) => new Histogram({ ...config, name, registers })),
  };
}

/** A `createMetrics()` result as it is, or a prom-client `Registry` wrapped into one (its default prefix). */
export function metricsOf(target: Registry | Metrics): Metrics {
  const isMetrics = typeof (target as Metrics).counter === 'function' && typeof (target as Metrics).histogram === 'function' && 'registry' in target;
  return isMetrics ? (target as Metrics) : createMetrics({ registry: target as Registry });
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().every((l, i) => l === [...b].sort()[i]);
}

/**
 * An HTTP handler answering with the registry's text exposition (`GET`/`HEAD` only, else 405).
 * It works as a plain `node:http` handler and as an Express/Connect route handler. It applies no
 * authentication: mount it where only the scraper can reach it, or behind your own middleware.
 *
 * @example
 * ```ts
 * http.createServer((req, res) => (req.url === '/metrics' ? metricsHandler(registry)(req, res) : app(req, res)));
 * ```
 */
export function metricsHandler(registry: Registry | Metrics): (req: IncomingMessage, res: ServerResponse) => void {
  const reg = 'registry' in registry && typeof (registry as Metrics).counter === 'function' ? (registry as Metrics).registry : (registry as Registry);
  if (!reg || typeof reg.metrics !== 'function') throw new TypeError('metricsHandler: expected a prom-client Registry or the result of createMetrics()');
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'application/json', allow: 'GET, HEAD' }).end(JSON.stringify({ error: 'use GET to read metrics' }));
      return;
    }
    reg.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': reg.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'metrics collection failed' }));
      },
    );
  };
}

/** Buckets (seconds) for latencies from sub-millisecond memory reads to multi-second SQL pages. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Buckets for page sizes in items. */
export const ITEM_COUNT_BUCKETS: readonly number[] = [0, 1, 5, 10, 20, 50, 100, 200, 500, 1000, 5000];

/** Buckets for body sizes in bytes (1 KB … 10 MB). */
export const BYTE_BUCKETS: readonly number[] = [1_000, 10_000, 50_000, 100_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000];
