'use strict';
/**
 * The reverse fleet (issue 22 item 2): one real `reverse-service` CLI process serving N connections
 * from a registry file (`--connections FILE`, each entry a key digest; each connection's items in
 * its own `<prefix>c_<name>_` tables), and the daemons emulated in this process with plain
 * `node:http` keep-alive requests. Run once per store: SQLite (a file holds items and state), then
 * PostgreSQL (items and state on the server, as replicas share them: docs/deployment.md).
 *
 * - Every connection polls `GET {P}/ping` once every 10 s, the call a deployed daemon makes while
 *   idle (docs/reverse-connection.md "The deployed call sequence"); the N connections' polls are
 *   spread evenly, so N/10 polls a second reach the service.
 * 0. First contact: every connection pinged once, 8 at a time, timed (`firstContactMs`; a
 *    connection's store is opened by its first item call, not by a ping); then one 10 s cycle of
 *    the idle polls as warm-up.
 * 1. Idle window (`--reverse-seconds`, default 20; 8 with --quick): idle polls only. Service CPU
 *    per poll = (utime + stime of the service, from /proc/<pid>/stat) ÷ polls answered; p99 of the
 *    poll reply times (client side); the service's RSS (VmRSS, median of one sample a second over
 *    the window) with N connections polled.
 * 2. Push window (same length): the idle polls go on, and 10% of the connections run push
 *    transactions back to back, as a deployed daemon does (queue a push through the operator
 *    route, ping → `fetchingremote`, strategy, upstreamstatus, initialize, pages of 50 small products,
 *    products finish, one empty orders page, orders finish, finish, upstreamstatus). Items/s =
 *    items the service acknowledged (`received`) ÷ the window.
 * 3. A second start of the service with 1 connection, polled the same way for the same time (a
 *    warm-up cycle, then the window): its RSS the same way, and its CPU (the background work). RSS
 *    per connection = (RSS with N − RSS with 1) ÷ (N − 1).
 * 4. The floor: a bare `node:http` server polled the same way (N keys, 10 s cycle, warm-up, window):
 *    the CPU any Node.js server pays per poll arriving alone on this machine.
 * Options (after `--`): `--reverse-connections=N` (default 1,000; 100 with --quick),
 * `--reverse-seconds=S`, `--reverse-stores=sqlite,postgres` (the default; PostgreSQL at
 * STOREBRIDGE_TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test, its tables dropped after), `--reverse-profile=DIR` (the N-connection service runs with `--cpu-prof`
 * into DIR). The push pace is the service's default (`--max-calls-per-second 20` per
 * connection), as deployed.
 */
const { spawn } = require('node:child_process');
const { createHash, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { ROOT, stopChild } = require('../lib/proc');
const { median, quantile } = require('../lib/stats');

const CLI = path.join(ROOT, 'bin', 'storebridge.js');
const POLL_EVERY_MS = 10_000;
const PAGE = 50;
const PAGES = 4;
const ACTIVE_SHARE = 0.1;
const CLK_TCK = 100; // USER_HZ on Linux

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** utime + stime of `pid` in microseconds (/proc/<pid>/stat fields 14 and 15). */
function cpuMicros(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / CLK_TCK) * 1e6;
}

/** VmRSS of `pid` once a second for `ms`: the samples. */
async function sampleRss(pid, ms) {
  const samples = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await sleep(Math.min(1000, end - Date.now()));
    samples.push(rssBytes(pid));
  }
  return samples;
}

function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}

/**
 * Starts `reverse-service` over a registry of `n` connections, its items and state in `store`
 * (`sqlite`: a file in `dir`; `postgres`: the server, tables under a prefix of their own); resolves
 * once it prints its address. `floor`: a bare `node:http` server instead (below).
 */
async function startService(dir, n, tag, store, profileDir) {
  const connections = Array.from({ length: n }, (_, i) => {
    const key = randomBytes(16).toString('hex');
    return { name: `c${i}`, key, keyDigest: createHash('sha256').update(key).digest('hex') };
  });
  const file = path.join(dir, `${tag}-connections.json`);
  fs.writeFileSync(file, JSON.stringify(connections.map(({ name, keyDigest }) => ({ name, keyDigest, dialect: 'click2sync' }))));
  const tablePrefix = `sbrf_${randomBytes(3).toString('hex')}_`;
  const adapter = store === 'postgres' ? `postgres:${POSTGRES_URL}` : `sqlite:${path.join(dir, `${tag}.sqlite`)}`;
  const service = [CLI, 'reverse-service', '--port', '0', '--connections', file, '--adapter', adapter, '--table-prefix', tablePrefix, '--keep-alive-ms', String(POLL_EVERY_MS * 2)];
  const child = spawn(process.execPath, [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--heapsnapshot-signal=SIGUSR2'] : []), ...(store === 'floor' ? ['-e', FLOOR_SERVER] : service)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
  const base = await new Promise((resolve, reject) => {
    let out = '';
    const onExit = (code) => reject(new Error(`reverse-service exited with ${code} before it listened: ${err}`));
    child.once('exit', onExit);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        child.off('exit', onExit);
        resolve(m[1].replace(/\/$/, ''));
      }
    });
  });
  const url = new URL(base);
  return {
    pid: child.pid,
    host: url.hostname,
    port: Number(url.port),
    connections,
    stderr: () => err,
    stop: async () => {
      await stopChild(child);
      if (store === 'postgres') await dropTables(tablePrefix);
    },
  };
}

const POSTGRES_URL = process.env.STOREBRIDGE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The floor: a bare `node:http` server answering every request with a fixed ping reply, keep-alive
 * as the service's. Polled the same way in the same run, its CPU per poll is what any Node.js
 * server pays for a request arriving alone (a wake-up, the parse, a write on a cold cache) on this
 * machine: the service's figure is read against it.
 */
const FLOOR_SERVER = `
const body = Buffer.from('{"connectionstatus":"idle"}');
const s = require('node:http').createServer((req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }); res.end(body); });
s.keepAliveTimeout = ${POLL_EVERY_MS * 2};
s.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + s.address().port));
process.on('SIGTERM', () => process.exit(0));`;

/** Drops the tables a PostgreSQL run created (every connection's, the state and registry tables). */
async function dropTables(tablePrefix) {
  const { Client } = require('pg');
  const pg = new Client({ connectionString: POSTGRES_URL });
  await pg.connect();
  try {
    const { rows } = await pg.query("select tablename from pg_tables where schemaname = current_schema() and tablename like $1", [`${tablePrefix}%`]);
    for (let i = 0; i < rows.length; i += 200) await pg.query(`drop table if exists ${rows.slice(i, i + 200).map((r) => `"${r.tablename}"`).join(', ')} cascade`);
  } finally {
    await pg.end();
  }
}

/** A JSON client over keep-alive sockets (one agent: sockets are reused across connections' calls). */
function client(service) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  return function call(method, pathname, body) {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: service.host, port: service.port, method, path: pathname, agent, headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {} },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json;
            try {
              json = JSON.parse(text);
            } catch {
              json = { raw: text };
            }
            resolve({ status: res.statusCode, body: json });
          });
        },
      );
      req.on('error', reject);
      if (payload) req.end(payload);
      else req.end();
    });
  };
}

const prefix = (key) => `/api/adapters/custom/reverse/connection/${key}`;

/**
 * Polls `GET {P}/ping` for every connection in `idle`, each once every 10 s, spread evenly; runs
 * until `stop()`. Counts answered polls and records their reply times (ms) while `recording`.
 */
function idlePoller(call, idle) {
  const state = { recording: false, answered: 0, failed: 0, times: [], pushingTimes: [], pushing: undefined, stopped: false };
  const gap = POLL_EVERY_MS / idle.length;
  const t0 = performance.now();
  let next = 0;
  const inFlight = new Set();
  const tick = () => {
    if (state.stopped) return;
    const now = performance.now();
    // Every poll whose slot has come (slot k at t0 + k × gap): catches up after a late timer.
    while (t0 + next * gap <= now) {
      const c = idle[next % idle.length];
      next++;
      const started = performance.now();
      const p = call('GET', `${prefix(c.key)}/ping`).then(
        (r) => {
          if (!state.recording) return;
          if (r.status === 200) {
            state.answered++;
            (state.pushing?.has(c.name) ? state.pushingTimes : state.times).push(performance.now() - started);
          } else state.failed++;
        },
        () => state.recording && state.failed++,
      );
      inFlight.add(p);
      p.finally(() => inFlight.delete(p));
    }
    setTimeout(tick, Math.max(1, t0 + next * gap - performance.now()));
  };
  tick();
  return {
    state,
    /** Starts a fresh measurement window. */
    record() {
      state.recording = true;
      state.answered = 0;
      state.failed = 0;
      state.times = [];
      state.pushingTimes = [];
    },
    async stop() {
      state.stopped = true;
      await Promise.allSettled([...inFlight]);
    },
  };
}

/** One push transaction of a deployed daemon for connection `c`, `PAGES` pages of `PAGE` products; resolves with the items received. */
async function pushOnce(call, service, c, round) {
  const q = await call('POST', `/connections/${c.name}/queue`, { kind: 'push' });
  if (q.status >= 300) throw new Error(`queueing a push for ${c.name}: ${q.status} ${JSON.stringify(q.body)}`);
  const P = prefix(c.key);
  const ping = await call('GET', `${P}/ping`);
  if (ping.body.connectionstatus !== 'fetchingremote') throw new Error(`${c.name}: ping answered ${JSON.stringify(ping.body)} after a push was queued`);
  const verb = (await call('GET', `${P}/strategy`)).body.strategy;
  await call('GET', `${P}/upstreamstatus`);
  await call('GET', `${P}/entity`);
  await call('GET', `${P}/cursoroffset`);
  const init = await call('POST', `${P}/${verb}/initialize`, {});
  if (init.status !== 200) throw new Error(`${c.name}: initialize answered ${init.status} ${JSON.stringify(init.body)}`);
  await call('GET', `${P}/upstreamstatus`);
  let received = 0;
  for (let p = 0; p < PAGES; p++) {
    const products = Array.from({ length: PAGE }, (_, i) => {
      const n = p * PAGE + i;
      return { _id: `p${n}`, sku: `SKU-${n}`, title: `Product ${n} round ${round}`, quantity: n % 17, last_updated: Date.now() };
    });
    const r = await call('POST', `${P}/${verb}/products`, { products });
    if (r.status !== 200) throw new Error(`${c.name}: page answered ${r.status} ${JSON.stringify(r.body)}`);
    received += r.body.received;
  }
  await call('POST', `${P}/${verb}/products/finish`, {});
  await call('GET', `${P}/cursoroffset`);
  await call('GET', `${P}/entity`);
  await call('POST', `${P}/${verb}/orders`, { orders: [] });
  await call('POST', `${P}/${verb}/orders/finish`, {});
  const fin = await call('POST', `${P}/${verb}/finish`, {});
  if (fin.status !== 200) throw new Error(`${c.name}: finish answered ${fin.status} ${JSON.stringify(fin.body)}`);
  await call('GET', `${P}/upstreamstatus`);
  return received;
}

function summary(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const q = (p) => Number(quantile(sorted, p).toFixed(2));
  return { p50Ms: q(0.5), p99Ms: q(0.99), maxMs: Number((sorted[sorted.length - 1] ?? NaN).toFixed(2)) };
}

/** The idle window alone on `svc` (after a warm-up cycle): answered polls, reply times, CPU per poll, RSS samples. */
async function idleWindow(svc, windowMs) {
  const poller = idlePoller(client(svc), svc.connections);
  await sleep(POLL_EVERY_MS);
  poller.record();
  const cpu0 = cpuMicros(svc.pid);
  const rssSamples = await sampleRss(svc.pid, windowMs);
  const cpu1 = cpuMicros(svc.pid);
  const answered = poller.state.answered;
  const idle = { polls: answered, failed: poller.state.failed, ...summary(poller.state.times), cpuUsPerPoll: (cpu1 - cpu0) / answered, serviceCores: (cpu1 - cpu0) / 1e6 / (windowMs / 1000) };
  return { poller, idle, rss: median(rssSamples) };
}

/**
 * The stores measured: SQLite (a file: items and state), then PostgreSQL (the replicas'
 * deployment, docs/deployment.md), each with `n` connections; and the bare `node:http` floor.
 */
async function run({ quick, args }) {
  const n = Number(args['reverse-connections'] ?? (quick ? 100 : 1000));
  const seconds = Number(args['reverse-seconds'] ?? (quick ? 8 : 20));
  if (!(n >= 10) || !(seconds > 0)) throw new Error('--reverse-connections must be ≥ 10 and --reverse-seconds > 0');
  const stores = String(args['reverse-stores'] ?? 'sqlite,postgres').split(',');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbbench-reverse-fleet-'));
  try {
    const out = { connections: n, seconds };
    for (const store of stores) out[store] = await measure(dir, n, seconds, store, args['reverse-profile']);
    // The floor last, the same way: N keys polled each 10 s, a warm-up cycle, then the window.
    const floor = await startService(dir, n, 'floor', 'floor');
    const f = await idleWindow(floor, seconds * 1000);
    await f.poller.stop();
    await floor.stop();
    out.floor = { cpuUsPerPoll: f.idle.cpuUsPerPoll, p99Ms: f.idle.p99Ms, polls: f.idle.polls, rss: f.rss };
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One store: first contact, the idle window, the push window, then the 1-connection baseline. */
async function measure(dir, n, seconds, store, profileDir) {
  const windowMs = seconds * 1000;
    // --- N connections ---
    const t0 = Date.now();
    const svc = await startService(dir, n, `fleet-${store}`, store, profileDir);
    const startMs = Date.now() - t0;
    const call = client(svc);
    const active = svc.connections.slice(0, Math.max(1, Math.round(n * ACTIVE_SHARE)));
    // First contact: every connection polled once, 8 at a time (its state record read and
    // written; its store is opened later, by its first call that touches items), timed apart.
    const tOpen = performance.now();
    let nextOpen = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (nextOpen < svc.connections.length) {
          const c = svc.connections[nextOpen++];
          const r = await call('GET', `${prefix(c.key)}/ping`);
          if (r.status !== 200) throw new Error(`${c.name}: first ping answered ${r.status} ${JSON.stringify(r.body)}`);
        }
      }),
    );
    const firstContactMs = performance.now() - tOpen;
    const { poller, idle, rss: rssN } = await idleWindow(svc, windowMs);

    // --- push window: 10% of the connections push back to back while every connection polls ---
    poller.record();
    poller.state.pushing = new Set(active.map((c) => c.name));
    let items = 0;
    let transactions = 0;
    const end = Date.now() + windowMs;
    const pc0 = cpuMicros(svc.pid);
    const tPush = performance.now();
    await Promise.all(
      active.map(async (c, i) => {
        // Spread the starts over the first second, as daemons never start in step.
        await sleep((i / active.length) * 1000);
        let round = 0;
        while (Date.now() < end) {
          // Not `items += await …`: that reads `items` before the await and loses the other lanes' counts.
          const got = await pushOnce(call, svc, c, round++);
          items += got;
          transactions++;
        }
      }),
    );
    const pushMs = performance.now() - tPush;
    const pc1 = cpuMicros(svc.pid);
    const push = {
      connections: active.length,
      transactions,
      items,
      itemsPerS: items / (pushMs / 1000),
      seconds: pushMs / 1000,
      serviceCores: (pc1 - pc0) / 1e6 / (pushMs / 1000),
      polls: poller.state.answered,
      failedPolls: poller.state.failed,
      // The polls of the connections not pushing, and apart those of the pushing ones: an emulated
      // daemon polls while its own push runs (a deployed one would not: it makes one call at a
      // time), so those polls queue behind the connection's pace of 20 calls/s.
      pollsDuringPush: summary(poller.state.times),
      pushingOwnPolls: summary(poller.state.pushingTimes),
    };
    const rssAfterPush = rssBytes(svc.pid);
    await poller.stop();
    await svc.stop();

    // --- 1 connection: the baseline RSS ---
    // The same life as the fleet's idle phase (a warm-up cycle, then the window), so the two RSS
    // figures differ by the connections, not by the process's age. Its CPU over the window is the
    // service's background work (timers, the registry re-read), for contrast with the fleet's.
    const one = await startService(dir, 1, `one-${store}`, store);
    const baseline = await idleWindow(one, windowMs);
    await baseline.poller.stop();
    await one.stop();
    const rss1 = baseline.rss;

    const rssPerConnection = (rssN - rss1) / (n - 1);
    return {
      store,
      startMs,
      firstContactMs,
      idle,
      push,
      oneConnectionCores: baseline.idle.serviceCores,
      rss: { withN: rssN, withOne: rss1, afterPush: rssAfterPush, perConnection: rssPerConnection },
      // The four figures of issue 22 item 2.
      cpuUsPerIdlePoll: idle.cpuUsPerPoll,
      idlePollP99Ms: idle.p99Ms,
      rssBytesPerConnection: rssPerConnection,
      pushItemsPerS: push.itemsPerS,
    };
}

module.exports = { run };
