/**
 * Logs and metrics of the store router, over real HTTP on loopback: a request's log lines carry its
 * jobid (pino child logger) and never the key, even when an adapter error quotes it; Prometheus
 * counters move for real requests and the text exposition parses.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import fc from 'fast-check';
import pino from 'pino';
import { register as globalRegistry, Registry } from 'prom-client';
import type { ListOptions } from '../../lib/adapter';
import { createMemoryAdapter, type MemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createMetrics, metricsHandler } from '../../lib/metrics';
import { createStoreCore, createStoreRouter, type Logger, type StoreRouterOptions } from '../../lib/server';
import { LIST_QUERY, parseQuery } from '../../lib/contract';
import { RequestObservation, jobidOf } from '../../lib/server/request-observation';
import { parseRouterOptions } from '../../lib/server/router-options';
import { get, KEY, listen, post } from './helpers';

const WRONG_KEY = 'wrong-key-9f8e7d6c5b4a';

/** A pino logger writing JSON lines into an array. */
function capturedPino(): { logger: pino.Logger; lines: () => Array<Record<string, any>>; raw: () => string } {
  const chunks: string[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void chunks.push(s) });
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)), raw: () => chunks.join('') };
}

async function startApp(options: Partial<StoreRouterOptions> & Pick<StoreRouterOptions, 'adapter'>, registry?: Parameters<typeof metricsHandler>[0]) {
  const app = express();
  if (registry) app.get('/metrics', metricsHandler(registry));
  app.use('/sync', createStoreRouter({ svcKeys: [KEY], rateLimit: false, ...options } as StoreRouterOptions));
  const srv = await listen(app);
  return { ...srv, base: `${srv.url}/sync` };
}

/** Orders whose `get` fails with an error that (wrongly) quotes the key: the log must not. */
function leakyAdapter(): MemoryAdapter {
  const memory = createMemoryAdapter(demoCatalog(40));
  const orders = Object.create(memory.orders) as MemoryAdapter['orders'];
  orders.get = () => Promise.reject(new Error(`upstream refused credentials ${KEY}`));
  return { ...memory, orders } as MemoryAdapter;
}

describe('structured logs', () => {
  it('binds every line of a request to its jobid, and never logs the key', async () => {
    const log = capturedPino();
    const store = await startApp({ adapter: leakyAdapter(), logger: log.logger, logRequests: true });
    try {
      expect((await get(`${store.base}/products?sortorder=asc&jobid=42&limit=3`)).status).toBe(200);
      const product = demoCatalog(1).products[0];
      expect((await post(`${store.base}/products?jobid=43&id=${product._id}`, product)).status).toBe(200);
      expect((await get(`${store.base}/orders?sortorder=asc&jobid=44`, { SvcKey: WRONG_KEY })).status).toBe(401);
      expect((await get(`${store.base}/orders/ord-000001?jobid=45`)).status).toBe(500);
    } finally {
      await store.close();
    }
    const lines = log.lines();
    const of = (jobid: number) => lines.filter((l) => l.jobid === jobid);

    expect(of(42)).toEqual([expect.objectContaining({ level: 30, operation: 'listProducts', route: '/products', status: 200, keyId: expect.stringMatching(/^key-[0-9a-f]{8}$/) })]);
    expect(of(43)).toEqual([expect.objectContaining({ operation: 'writeProduct', status: 200 })]);
    // The refused key: a warning and the request line, both with the jobid, neither with the key.
    expect(of(44).map((l) => [l.level, l.msg])).toEqual([
      [40, 'key refused'],
      [30, 'GET /orders 401'],
    ]);
    expect(of(44)[0].reason).toBe('unknown');
    // The adapter failure: logged with its (redacted) cause, then the request line.
    const failure = of(45);
    expect(failure.map((l) => l.level)).toEqual([50, 30]);
    expect(failure[0]).toMatchObject({ operation: 'getOrder', code: 'ADAPTER_FAILED' });
    expect(failure[0].err.type).toBe('AdapterError');
    expect(JSON.stringify(failure[0].err)).toContain('upstream refused credentials [REDACTED]');

    expect(lines.length).toBe(6);
    expect(log.raw()).not.toContain(KEY);
    expect(log.raw()).not.toContain(WRONG_KEY);
    expect(log.raw().toLowerCase()).not.toContain('svckey"');
  });

  it('logs a by-id read on the list URL (?id=, the deployed read) as getProduct / getOrder, untracked without jobid', async () => {
    const log = capturedPino();
    const catalog = demoCatalog(5);
    const store = await startApp({ adapter: createMemoryAdapter(catalog), logger: log.logger, logRequests: true });
    try {
      expect((await get(`${store.base}/products?id=${encodeURIComponent(catalog.products[0]._id)}`, { C2SKey: KEY })).status).toBe(200);
      expect((await get(`${store.base}/orders?jobid=9&id=nope`)).status).toBe(404);
      expect((await get(`${store.base}/products?limit=2`)).status).toBe(200);
      // The batched read (?ids=) is a by-id read too; `idsx` is not `ids`.
      expect((await get(`${store.base}/products?jobid=3&ids=${encodeURIComponent(catalog.products[1]._id)},nope`)).status).toBe(200);
      expect((await get(`${store.base}/products?idsx=1`)).status).toBe(200);
    } finally {
      await store.close();
    }
    expect(log.lines().map((l) => [l.operation, l.route, l.status, l.jobid, l.untracked])).toEqual([
      ['getProduct', '/products', 200, undefined, true],
      ['getOrder', '/orders', 404, 9, undefined],
      ['listProducts', '/products', 200, undefined, true],
      ['getProduct', '/products', 200, 3, undefined],
      ['listProducts', '/products', 200, undefined, true],
    ]);
  });

  it('logs a negative jobid as tracked: the request log reads jobid with the contract pattern the router serves (-?\\d{1,16})', async () => {
    const log = capturedPino();
    const store = await startApp({ adapter: createMemoryAdapter(demoCatalog(5)), logger: log.logger, logRequests: true });
    try {
      expect((await get(`${store.base}/products?sortorder=asc&jobid=-7`)).status).toBe(200);
      expect((await get(`${store.base}/orders?jobid=%2D8`)).status).toBe(200);
      expect((await get(`${store.base}/orders?jobid=7x`)).status).toBe(400);
    } finally {
      await store.close();
    }
    expect(log.lines().map((l) => [l.operation, l.status, l.jobid, l.untracked])).toEqual([
      ['listProducts', 200, -7, undefined],
      ['listOrders', 200, -8, undefined],
      ['listOrders', 400, undefined, true],
    ]);
  });

  it('property: the request log reads a jobid exactly when the router parses one, and the same value', () => {
    const jobidText = fc.oneof(fc.integer({ min: -1e17, max: 1e17 }).map(String), fc.string({ maxLength: 20 }), fc.constantFrom('-0', '+5', '0x1f', '1e3', ' 4', '-', '9007199254740992', '-9007199254740991'));
    fc.assert(
      fc.property(jobidText, fc.boolean(), fc.constantFrom('', 'sortorder=asc&', 'x=1&'), (text, encode, before) => {
        const raw = `${before}jobid=${encode ? encodeURIComponent(text) : text.replace(/[&#]/g, '')}`;
        const parsed = parseQuery(LIST_QUERY, raw);
        expect(jobidOf(raw)).toBe(parsed.ok ? parsed.values.jobid : undefined);
      }),
      { numRuns: 500 },
    );
  });

  it('merges the bindings into each call when the logger has no child()', async () => {
    const calls: Array<{ level: string; obj: any; msg?: string }> = [];
    const at = (level: string) => (obj: object, msg?: string) => void calls.push({ level, obj, msg });
    const logger: Logger = { info: at('info'), warn: at('warn'), error: at('error') };
    const store = await startApp({ adapter: createMemoryAdapter(demoCatalog(5)), logger, logRequests: true });
    try {
      await get(`${store.base}/orders?sortorder=desc&jobid=7`);
    } finally {
      await store.close();
    }
    expect(calls).toEqual([{ level: 'info', obj: expect.objectContaining({ jobid: 7, operation: 'listOrders', status: 200 }), msg: 'GET /orders 200' }]);
  });

  it('the framework-agnostic core (handle) logs and measures the same way', async () => {
    const log = capturedPino();
    const registry = new Registry();
    const core = createStoreCore({ adapter: createMemoryAdapter(demoCatalog(5)), svcKeys: [KEY], rateLimit: false, logger: log.logger, logRequests: true, metrics: registry });
    const out = await core.handle('listOrders', { headers: { svckey: KEY }, rawQuery: '?sortorder=asc&jobid=9' });
    expect(out.status).toBe(200);
    expect((await core.handle('getOrder', { headers: { svckey: 'nope-nope' }, rawQuery: '', id: 'x' })).status).toBe(401);
    expect(log.lines().map((l) => [l.jobid, l.operation, l.status ?? l.reason])).toEqual([
      [9, 'listOrders', 200],
      [undefined, 'getOrder', 'unknown'],
      [undefined, 'getOrder', 401],
    ]);
    const samples = parseExposition(await registry.metrics());
    expect(valueOf(samples, 'storebridge_store_requests_total', { operation: 'listOrders', route: '/orders', status: '200' })).toBe(1);
    expect(valueOf(samples, 'storebridge_store_requests_total', { operation: 'getOrder', status: '401' })).toBe(1);
  });

  it('property: whatever the key and wherever a logged string or error (cause chain) quotes it, the output does not', () => {
    const visible = fc.string({ minLength: 8, maxLength: 40 }).filter((k) => /^[\x21-\x7e]+$/.test(k) && !'[REDACTED]'.includes(k));
    fc.assert(
      fc.property(visible, fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), fc.integer({ min: 0, max: 3 }), (key, before, after, depth) => {
        const log = capturedPino();
        const config = parseRouterOptions({ adapter: createMemoryAdapter(), svcKeys: [KEY], logger: log.logger });
        const observation = new RequestObservation(config, 'getOrder', '/orders/:id', 'GET', 5);
        observation.redact(key);
        let err: Error = new Error(`${before}${key}${after}`);
        for (let i = 0; i < depth; i++) err = new Error(`level ${i}`, { cause: err });
        observation.logger!.error({ err, detail: `${before}${key}${after}`, n: 1 }, `failed for ${key}`);
        const raw = log.raw();
        expect(raw).not.toContain(JSON.stringify(key).slice(1, -1));
        expect(log.lines()[0]).toMatchObject({ jobid: 5, n: 1, msg: 'failed for [REDACTED]' });
      }),
      { numRuns: 150 },
    );
  });

  it('logs no request lines unless asked (failures only)', async () => {
    const log = capturedPino();
    const store = await startApp({ adapter: createMemoryAdapter(demoCatalog(5)), logger: log.logger });
    try {
      expect((await get(`${store.base}/products?sortorder=asc&jobid=1`)).status).toBe(200);
    } finally {
      await store.close();
    }
    expect(log.lines()).toEqual([]);
  });
});

type Sample = { name: string; labels: Record<string, string>; value: number };

/** A strict parser of the Prometheus text format (0.0.4): every line is a comment or a sample. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})? (-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?|NaN|\+Inf|-Inf)$/;
  for (const l of text.split('\n')) {
    if (l === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/.test(l)) continue;
    const m = line.exec(l);
    if (!m) throw new Error(`not a Prometheus sample line: ${JSON.stringify(l)}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    samples.push({ name: m[1], labels, value: Number(m[3].replace('+Inf', 'Infinity')) });
  }
  return samples;
}

function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

describe('Prometheus metrics', () => {
  it('counts requests by route and status, page items and bytes, and adapter latency', async () => {
    const registry = new Registry();
    const store = await startApp({ adapter: createMemoryAdapter(demoCatalog(50)), metrics: registry }, registry);
    let items = 0;
    let bytes = 0;
    try {
      for (const limit of [5, 7, 11]) {
        const r = await get(`${store.base}/products?sortorder=asc&jobid=1&limit=${limit}`);
        items += r.body.products.length;
        bytes += Buffer.byteLength(r.text);
      }
      expect((await get(`${store.base}/products/${demoCatalog(1).products[0]._id}`)).status).toBe(200);
      expect((await get(`${store.base}/products/no-such-product`)).status).toBe(404);
      expect((await get(`${store.base}/products?sortorder=asc&jobid=1`, { SvcKey: WRONG_KEY })).status).toBe(401);
      expect((await get(`${store.base}/nowhere`)).status).toBe(404);

      const res = await fetch(`${store.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const samples = parseExposition(await res.text());

      const requests = 'storebridge_store_requests_total';
      expect(valueOf(samples, requests, { operation: 'listProducts', route: '/products', method: 'GET', status: '200' })).toBe(3);
      expect(valueOf(samples, requests, { operation: 'listProducts', status: '401' })).toBe(1);
      expect(valueOf(samples, requests, { operation: 'getProduct', route: '/products/:id', status: '200' })).toBe(1);
      expect(valueOf(samples, requests, { operation: 'getProduct', status: '404' })).toBe(1);
      expect(valueOf(samples, requests, { operation: 'none', route: 'unmatched', status: '404' })).toBe(1);
      expect(valueOf(samples, requests)).toBe(7);
      expect(valueOf(samples, 'storebridge_store_request_duration_seconds_count')).toBe(7);

      expect(items).toBe(23);
      expect(valueOf(samples, 'storebridge_store_page_items_sum', { entity: 'products' })).toBe(items);
      expect(valueOf(samples, 'storebridge_store_page_items_count', { entity: 'products' })).toBe(3);
      expect(valueOf(samples, 'storebridge_store_page_bytes_sum', { entity: 'products' })).toBe(bytes);
      // Each page lists once (its limit is under the first chunk) and counts once.
      expect(valueOf(samples, 'storebridge_store_adapter_duration_seconds_count', { entity: 'products', method: 'list', outcome: 'ok' })).toBe(3);
      expect(valueOf(samples, 'storebridge_store_adapter_duration_seconds_count', { entity: 'products', method: 'count', outcome: 'ok' })).toBe(3);
      expect(valueOf(samples, 'storebridge_store_adapter_duration_seconds_count', { entity: 'products', method: 'get' })).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('records adapter failures with outcome "error"', async () => {
    const registry = new Registry();
    const memory = createMemoryAdapter(demoCatalog(5));
    const orders = Object.create(memory.orders) as MemoryAdapter['orders'];
    orders.list = (_o: ListOptions) => Promise.reject(new Error('db down'));
    const store = await startApp({ adapter: { products: memory.products, orders }, metrics: createMetrics({ registry }) }, registry);
    try {
      expect((await get(`${store.base}/orders?sortorder=asc&jobid=1`)).status).toBe(500);
      const samples = parseExposition(await registry.metrics());
      expect(valueOf(samples, 'storebridge_store_adapter_duration_seconds_count', { entity: 'orders', method: 'list', outcome: 'error' })).toBe(1);
      expect(valueOf(samples, 'storebridge_store_requests_total', { operation: 'listOrders', status: '500' })).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('is off unless asked: a router without `metrics` registers nothing, not even globally', async () => {
    const store = await startApp({ adapter: createMemoryAdapter(demoCatalog(5)) });
    try {
      await get(`${store.base}/products?sortorder=asc&jobid=1`);
    } finally {
      await store.close();
    }
    expect((await globalRegistry.getMetricsAsJSON()).filter((m) => m.name.startsWith('storebridge_'))).toEqual([]);
  });

  it('two routers share one registry; the handler answers GET only', async () => {
    const metrics = createMetrics();
    const a = await startApp({ adapter: createMemoryAdapter(demoCatalog(5)), metrics }, metrics.registry);
    const b = await startApp({ adapter: createMemoryAdapter(demoCatalog(5)), metrics });
    try {
      await get(`${a.base}/products?sortorder=asc&jobid=1`);
      await get(`${b.base}/products?sortorder=asc&jobid=1`);
      const samples = parseExposition(await (await fetch(`${a.url}/metrics`)).text());
      expect(valueOf(samples, 'storebridge_store_requests_total', { status: '200' })).toBe(2);
      const posted = await fetch(`${a.url}/metrics`, { method: 'POST' });
      expect(posted.status).toBe(404); // express routes GET only; the handler itself answers 405:
      const direct = await listen((req, res) => metricsHandler(metrics)(req, res));
      try {
        expect((await fetch(direct.url, { method: 'POST' })).status).toBe(405);
        expect((await fetch(direct.url)).status).toBe(200);
      } finally {
        await direct.close();
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('createMetrics returns the same metric for the same name and refuses a clash', () => {
    const metrics = createMetrics();
    const c1 = metrics.counter({ name: 'x_total', help: 'x', labelNames: ['a'] });
    expect(metrics.counter({ name: 'x_total', help: 'x', labelNames: ['a'] })).toBe(c1);
    expect(() => metrics.gauge({ name: 'x_total', help: 'x', labelNames: ['a'] })).toThrow(/already registered/);
    expect(() => metrics.counter({ name: 'x_total', help: 'x', labelNames: ['b'] })).toThrow(/already registered/);
    expect(() => createMetrics({ prefix: 'bad prefix' })).toThrow(/prefix/);
  });
});

describe('storebridge serve --metrics-port 0 --log-requests (the real CLI)', () => {
  const ROOT = join(__dirname, '..', '..');
  it('serves metrics on a separate listener and logs request lines with the jobid, never the key', async () => {
    if (!existsSync(join(ROOT, 'dist', 'lib', 'cli', 'commands', 'serve.js'))) throw new Error('build first: npx tsc -p tsconfig.build.json');
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'storebridge.js'), 'serve', '--port', '0', '--key', KEY, '--demo', '20', '--metrics-port', '0', '--log-requests'], {
      cwd: ROOT,
      env: { ...process.env, STOREBRIDGE_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d));
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const [url, metricsUrl] = await new Promise<[string, string]>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d;
          const m = /^listening on (\S+)\nmetrics on (\S+)$/m.exec(out);
          if (m) resolve([m[1], m[2]]);
        });
        void exit.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
      });
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(new URL(metricsUrl).port).not.toBe(new URL(url).port);
      expect((await get(`${url}/products?sortorder=asc&jobid=77&limit=4`)).status).toBe(200);
      expect((await get(`${url}/metrics`)).status).toBe(404); // not on the webhook listener
      const samples = parseExposition(await (await fetch(metricsUrl)).text());
      expect(valueOf(samples, 'storebridge_store_requests_total', { operation: 'listProducts', status: '200' })).toBe(1);
      expect(valueOf(samples, 'storebridge_store_page_items_sum', { entity: 'products' })).toBe(4);
      const lines = err.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      expect(lines.filter((l) => l.jobid === 77)).toEqual([expect.objectContaining({ level: 'info', operation: 'listProducts', status: 200 })]);
    } finally {
      child.kill('SIGTERM');
      await exit;
    }
    expect(err + out).not.toContain(KEY);
  });
});
