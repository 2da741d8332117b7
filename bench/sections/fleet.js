'use strict';
/**
 * The fleet (issue 22, sync side): N small stores in one multi-tenant store process
 * (bench/servers/fleet-store.js: each its own key and memory catalog of 10–100 demo products), the
 * kit's BullMQ scheduler (`createSyncQueue`) with N connections on one Redis, and 1, 2 and 4 worker
 * processes (bench/servers/fleet-worker.js: `createSyncWorker`, a discarding sink).
 *
 * 1. Registration, no worker running: the time to add the N schedules and to remove them, one at a
 *    time (`for … await addConnection`) and 64 in flight.
 * 2. For each worker count W, on a namespace of its own:
 *    a. capacity: N runs due at once (a backlog); the rate at which the W workers drain it (between
 *       the 10th and the 90th percentile of completions), and CPU per run of workers, store, Redis;
 *    b. lag at 50% of that capacity: each connection every N / (0.5 × capacity) seconds, first slots
 *       spread evenly over the interval; start − due of every run of one cycle;
 *    c. lag at 90%, over 3 cycles after one cycle of warm-up at that load, with the workers' highest
 *       RSS in each cycle (sampled every 250 ms) and Redis memory at the end: `INFO used_memory`
 *       against the namespace's start, and `MEMORY USAGE` of every key of the namespace by kind.
 * Options (after `--`): `--fleet-connections=N` (default 10,000; 1,000 with --quick),
 * `--fleet-workers=1,2,4` (1,2 with --quick), `--fleet-concurrency=C` (jobs per worker, default 4),
 * `--fleet-dump=FILE` (appends every phase's runs `[due, start, end, ok, worker]` as a JSON line),
 * `--fleet-profile=DIR` (workers run with `--cpu-prof` into DIR).
 * Every key lives under a random prefix `sbbench-fleet-<hex>`, removed at the end (and on failure).
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const kit = require('../lib/kit');
const { startServer, machineCpu } = require('../lib/proc');
const { median, quantile } = require('../lib/stats');
const { REDIS_URL, connectRedis, usedMemory, redisCpuSeconds, memoryByKind, purgePrefix } = require('../lib/redis');

const STORE = path.join(__dirname, '..', 'servers', 'fleet-store.js');
const WORKER = path.join(__dirname, '..', 'servers', 'fleet-worker.js');
const DAY = 86_400_000;
const IN_FLIGHT = 64;
const CYCLES = 3;

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** The fleet's stores: ids, keys, catalog sizes 10–100 (spread evenly by a stride). */
function fleetRegistry(n) {
  return Array.from({ length: n }, (_, i) => ({ id: `shop-${String(i).padStart(5, '0')}`, key: randomBytes(12).toString('hex'), items: 10 + ((i * 37) % 91) }));
}

/** Runs `fn(item, index)` over `items`, `limit` at a time; resolves with the elapsed ms. */
async function inFlight(items, limit, fn) {
  const t0 = Date.now();
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return Date.now() - t0;
}

/** Collects the workers' run samples (`[due, start, end, ok]`, sent every second), each with its worker's index. */
function collector(workers) {
  const runs = [];
  workers.forEach((w, i) => w.child.on('message', (m) => m && m.samples && m.samples.forEach((x) => runs.push([...x, i]))));
  return {
    runs,
    /** Asks every worker for the samples it has not sent yet. */
    flush: () => Promise.all(workers.map((w) => w.ask('flush'))),
  };
}

async function waitUntil(what, check, { timeoutMs, everyMs = 200 }) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`fleet: timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

const cpuOf = async (procs) => Promise.all(procs.map((p) => p.cpuMicros()));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/** Registration and removal of N schedules with no worker running: one at a time, then 64 in flight. */
async function measureRegistration(ctx, registry) {
  const queue = kit.sync().createSyncQueue({ connection: REDIS_URL, prefix: `${ctx.prefix}-reg` });
  try {
    const later = Date.now() + DAY;
    const add = (e) => queue.addConnection({ id: e.id, intervalMs: DAY, startAt: later });
    const remove = (e) => queue.removeConnection(e.id);
    return {
      sequential: { addMs: await inFlight(registry, 1, add), removeMs: await inFlight(registry, 1, remove) },
      concurrent: { addMs: await inFlight(registry, IN_FLIGHT, add), removeMs: await inFlight(registry, IN_FLIGHT, remove) },
    };
  } finally {
    await queue.queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await purgePrefix(ctx.redis, `${ctx.prefix}-reg`);
  }
}

/** Start − due of the runs whose slot falls in [from, to), and how many of the expected ran. */
function lagOf(runs, from, to, expected) {
  const inWindow = runs.filter((r) => r[0] >= from && r[0] < to);
  const lags = inWindow.map((r) => r[1] - r[0]);
  return {
    runs: inWindow.length,
    expected,
    notOk: inWindow.filter((r) => r[3] !== 1).length,
    p50Ms: quantile(lags, 0.5),
    p99Ms: quantile(lags, 0.99),
    maxMs: lags.length ? Math.max(...lags) : NaN,
  };
}

/** Key kinds of the sync namespace: BullMQ's and storebridge's, with ids and slots folded. */
function keyKind(rest) {
  return rest
    .replace(/^sync:repeat:sync:[^:]+$/, 'sync:repeat:<schedule>')
    .replace(/^sync:(?:repeat:sync:[^:]+:\d+|\d+)(:.*)?$/, (_, tail) => `sync:<job>${tail ?? ''}`)
    .replace(/^sync@(state|lock|history):.*$/, 'sync@$1:<id>');
}

/**
 * What a connection's run history weighs once full: a 3-cycle run leaves a few runs per history, a
 * service running for days `historySize`. For 20 connections, their real runs (cycled, each a
 * further interval later, with the next job number) are recorded `historySize` times by the kit's
 * `RedisSyncHealth` under a probe namespace, and its history key measured with `MEMORY USAGE`; the
 * median. (The history is compressed, so it is filled with real, varying runs, not one repeated.)
 */
async function historyAtCap(redis, prefix, registry, intervalMs, historySize) {
  const { RedisSyncHealth } = kit.sync();
  const health = new RedisSyncHealth(redis, { prefix });
  const probePrefix = `${prefix}-probe`;
  const probe = new RedisSyncHealth(redis, { prefix: probePrefix, historySize });
  const sizes = [];
  for (const e of registry.slice(0, 20)) {
    const runs = (await health.history(e.id)).reverse();
    if (runs.length === 0 || historySize === 0) continue;
    for (let j = 0; j < historySize; j++) {
      const r = runs[j % runs.length];
      const shift = (j - (j % runs.length)) * intervalMs;
      const entity = (x) => ({ ...x, unchanged: 0, anomalies: 0, complete: true });
      const report = { jobid: j + 1, resumed: r.resumed, products: entity(r.products), orders: entity(r.orders), ...(r.error ? { error: r.error } : {}) };
      await probe.observe({ type: 'run', connection: e.id, outcome: r.outcome, report, startedAt: Date.parse(r.startedAt) + shift, endedAt: Date.parse(r.at) + shift, requests: r.requests, retries: r.retries, attempt: r.attempt, worker: r.worker });
    }
    sizes.push(Number(await redis.memory('USAGE', probe.historyKey(e.id), 'SAMPLES', 0)));
  }
  await purgePrefix(redis, probePrefix);
  return sizes.length ? median(sizes) : 0;
}

/**
 * Schedules every connection at `load` × capacity (first slots spread over the interval), lets
 * `warmup` cycles pass (the workers' heaps size themselves to the load), then measures `cycles`
 * intervals: the lag and CPU (`phase`), and what `each(cycle)`, awaited at each measured cycle's
 * end, returned (`perCycle`).
 */
async function loadPhase(ctx, round, { load, cycles, warmup = 0, each = async () => undefined }) {
  const { registry, queue, workers, samples } = round;
  const n = registry.length;
  const intervalMs = Math.round((n / (load * round.capacity.runsPerS)) * 1000);
  const start = Date.now() + 3 * ctx.registration.concurrent.addMs + 3000;
  await inFlight(registry, IN_FLIGHT, (e, i) => queue.addConnection({ id: e.id, intervalMs, startAt: start + Math.floor((i * intervalMs) / n) }));
  const t0 = start + warmup * intervalMs;
  await sleep(t0 - Date.now());
  await Promise.all(workers.map((w) => w.ask('rss-window')));
  const cpu0 = [await cpuOf(workers), await ctx.store.cpuMicros(), machineCpu(), Date.now()];
  const perCycle = [];
  for (let c = 1; c <= cycles; c++) {
    await sleep(t0 + c * intervalMs - Date.now());
    perCycle.push(await each(c));
  }
  const cpu1 = [await cpuOf(workers), await ctx.store.cpuMicros(), machineCpu(), Date.now()];
  const end = t0 + cycles * intervalMs;
  const expected = n * cycles;
  const done = () => samples.runs.filter((r) => r[0] >= t0 && r[0] < end).length >= expected;
  await waitUntil('the last runs of the phase', async () => (await samples.flush(), done()), { timeoutMs: intervalMs + 10_000 }).catch(() => undefined);
  if (ctx.dump) fs.appendFileSync(ctx.dump, `${JSON.stringify({ workers: workers.length, load, intervalMs, t0, end, runs: samples.runs })}\n`);
  const lag = lagOf(samples.runs, t0, end, expected);
  const seconds = (cpu1[3] - cpu0[3]) / 1000;
  const workerMs = (sum(cpu1[0]) - sum(cpu0[0])) / 1000;
  const storeMs = (cpu1[1] - cpu0[1]) / 1000;
  const phase = {
    load,
    intervalMs,
    cycles,
    warmup,
    ...lag,
    workerCpuMsPerRun: workerMs / lag.runs,
    storeCpuMsPerRun: storeMs / lag.runs,
    // Cores busy on the whole machine, and in the workers and the store: the rest is Redis, this process and other work.
    machineCores: (cpu1[2].busy - cpu0[2].busy) / seconds,
    benchCores: (workerMs + storeMs) / 1000 / seconds,
  };
  samples.runs.length = 0;
  return { phase, perCycle };
}

/** Capacity: a backlog of N runs due now (queued before the workers start), drained by the workers. */
async function measureCapacity(ctx, round, startWorkers) {
  const { registry, queue } = round;
  const n = registry.length;
  const now = Date.now();
  await inFlight(registry, IN_FLIGHT, (e) => queue.addConnection({ id: e.id, intervalMs: DAY, startAt: now }));
  const workers = await startWorkers();
  const samples = collector(workers);
  const reading = async () => ({ workers: sum(await cpuOf(workers)), store: await ctx.store.cpuMicros(), redis: await redisCpuSeconds(ctx.redis), machine: machineCpu().busy, t: Date.now() });
  const r0 = await reading();
  await waitUntil('the backlog to drain', async () => (await samples.flush(), samples.runs.length >= n), { timeoutMs: Math.max(120_000, n * 100) });
  const r1 = await reading();
  const ends = samples.runs.map((r) => r[2]).sort((x, y) => x - y);
  const [i10, i90] = [Math.floor(n * 0.1), Math.floor(n * 0.9)];
  const runsPerS = (i90 - i10) / ((ends[i90] - ends[i10]) / 1000);
  const ms = r1.t - r0.t;
  const capacity = {
    runsPerS,
    perWorkerRunsPerS: runsPerS / workers.length,
    drainMs: ms,
    notOk: samples.runs.filter((r) => r[3] !== 1).length,
    workerCpuMsPerRun: (r1.workers - r0.workers) / 1000 / n,
    storeCpuMsPerRun: (r1.store - r0.store) / 1000 / n,
    redisCpuMsPerRun: ((r1.redis - r0.redis) * 1000) / n,
    machineCores: (r1.machine - r0.machine) / (ms / 1000),
    benchCores: (r1.workers - r0.workers + r1.store - r0.store) / 1000 / ms,
  };
  await inFlight(registry, IN_FLIGHT, (e) => queue.removeConnection(e.id));
  samples.runs.length = 0;
  return { workers, samples, capacity };
}

/** Redis memory per connection now: `INFO` against `memory0`, `MEMORY USAGE` by kind, and with full histories. */
async function measureRedis(ctx, prefix, registry, memory0, intervalMs) {
  const n = registry.length;
  const memory1 = await usedMemory(ctx.redis);
  const byKind = await memoryByKind(ctx.redis, prefix, keyKind);
  const historySize = kit.sync().DEFAULT_HISTORY_SIZE;
  const historyBytes = byKind.kinds['sync@history:<id>']?.bytes ?? 0;
  const fullHistory = await historyAtCap(ctx.redis, prefix, registry, intervalMs, historySize);
  return {
    infoBytesPerConnection: (memory1 - memory0) / n,
    keyBytesPerConnection: byKind.total / n,
    historySize,
    atHistoryCapPerConnection: (byKind.total - historyBytes) / n + fullHistory,
    keys: byKind.keys,
    kinds: byKind.kinds,
  };
}

/** The workers' memory over the measured cycles (`[cycle][worker] {rss, heapMin, externalMin}`), and their peaks. */
function rssOf(memoryByCycle, peakRss) {
  const mb = (b) => b / 2 ** 20;
  const last = memoryByCycle.length - 1;
  return {
    peakMb: mb(Math.max(...peakRss)),
    cyclesMb: memoryByCycle.map((perWorker) => mb(Math.max(...perWorker.map((m) => m.rss)))),
    growth: Math.max(...peakRss.map((_, i) => memoryByCycle[last][i].rss / memoryByCycle[0][i].rss)),
    heapFloorCyclesMb: memoryByCycle.map((perWorker) => mb(Math.max(...perWorker.map((m) => m.heapMin)))),
    externalFloorCyclesMb: memoryByCycle.map((perWorker) => mb(Math.max(...perWorker.map((m) => m.externalMin)))),
  };
}

/** One worker count W on a namespace of its own: capacity, lag at 50% and 90%, Redis memory, worker RSS. */
async function workerRound(ctx, registry, w) {
  const prefix = `${ctx.prefix}-w${w}`;
  const queue = kit.sync().createSyncQueue({ connection: REDIS_URL, prefix });
  const workers = [];
  const execArgv = ctx.profile ? ['--cpu-prof', `--cpu-prof-dir=${ctx.profile}`] : [];
  const startWorkers = async () => {
    for (let i = 0; i < w; i++) workers.push(await startServer(WORKER, [ctx.registryFile, ctx.storeUrl, REDIS_URL, prefix, String(ctx.concurrency)], { execArgv }));
    return workers;
  };
  try {
    const memory0 = await usedMemory(ctx.redis);
    const round = { registry, queue, ...(await measureCapacity(ctx, { registry, queue }, startWorkers)) };
    const { phase: lag50 } = await loadPhase(ctx, round, { load: 0.5, cycles: 1 });
    const rssWindow = () => Promise.all(workers.map((p) => p.ask('rss-window')));
    const { phase: lag90, perCycle } = await loadPhase(ctx, round, { load: 0.9, cycles: CYCLES, warmup: 1, each: rssWindow });
    const redis = await measureRedis(ctx, prefix, registry, memory0, lag90.intervalMs);
    const rss = rssOf(perCycle, await Promise.all(workers.map((p) => p.peakRss())));
    await inFlight(registry, IN_FLIGHT, (e) => queue.removeConnection(e.id));
    return { workers: w, capacity: round.capacity, lag50, lag90, redis, rss };
  } finally {
    await Promise.all(workers.map((p) => p.stop()));
    await queue.queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await purgePrefix(ctx.redis, prefix);
  }
}

/** `--fleet-NAME=VALUE` options forwarded by bench/run.js. */
function option(args, name, fallback) {
  const v = args[`fleet-${name}`];
  return v === undefined ? fallback : v;
}

async function run({ quick, args = {} }) {
  const n = Number(option(args, 'connections', quick ? 1_000 : 10_000));
  const workerCounts = String(option(args, 'workers', quick ? '1,2' : '1,2,4')).split(',').map(Number);
  const concurrency = Number(option(args, 'concurrency', 4));
  const redis = await connectRedis();
  if (!redis) return { skipped: `Redis does not answer at ${REDIS_URL.replace(/\/\/[^@/]*@/, '//')}` };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-fleet-'));
  const registryFile = path.join(dir, 'registry.json');
  const registry = fleetRegistry(n);
  fs.writeFileSync(registryFile, JSON.stringify(registry), { mode: 0o600 });
  const ctx = { prefix: `sbbench-fleet-${randomBytes(4).toString('hex')}`, redis, registryFile, concurrency, dump: option(args, 'dump', undefined), profile: option(args, 'profile', undefined) };
  let store;
  try {
    store = await startServer(STORE, [registryFile]);
    Object.assign(ctx, { store, storeUrl: `http://127.0.0.1:${store.port}` });
    ctx.registration = await measureRegistration(ctx, registry);
    const rounds = [];
    for (const w of workerCounts) {
      process.stderr.write(`  fleet: ${n} connections, ${w} worker(s)…\n`);
      rounds.push(await workerRound(ctx, registry, w));
    }
    return { connections: n, concurrency, items: '10–100', storeRssMb: (await store.peakRss()) / 2 ** 20, registration: ctx.registration, rounds };
  } finally {
    await store?.stop();
    for (const suffix of ['-reg', ...workerCounts.flatMap((w) => [`-w${w}`, `-w${w}-probe`])]) await purgePrefix(redis, ctx.prefix + suffix);
    await redis.quit();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { run };
