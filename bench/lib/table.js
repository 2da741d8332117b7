'use strict';
/** The markdown table of a run's results, every target marked met or missed. */
const { fmt } = require('./stats');

const verdict = (ok) => (ok === undefined ? '—' : ok ? '**met**' : '**missed**');
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

function table(results) {
  const s = results.sections;
  const rows = [];
  const add = (target, measured, goal, ok, note = '') => rows.push(`| ${target} | ${measured} | ${goal} | ${verdict(ok)} | ${note} |`);
  const failed = (name) => s[name] && s[name].error;

  const sp = s['serve-page'];
  if (sp && !sp.error) {
    const o = sp.options;
    const base = `${o.reps} rounds × ${o.durationS} s, ${o.connections} connections, key check on, rate limit off; page ${sp.servers.kit.bytes} B`;
    add('1a list page: kit router ÷ Fastify 5 (response schema), req/s', `${fmt(sp.kitVsFastify)}×`, '≥ 1.0×', sp.kitVsFastify.median >= 1.0, base);
    add('1b list page: kit router ÷ plain Express `res.json`, req/s', `${fmt(sp.kitVsExpress)}×`, '≥ 1.2×', sp.kitVsExpress.median >= 1.2, `kit ${fmt(sp.servers.kit.rps, 0)} req/s; Express ${fmt(sp.servers.express.rps, 0)}; Fastify ${fmt(sp.servers.fastify.rps, 0)}`);
    add(
      '1c server CPU per request ÷ raw node:http pre-built buffer',
      `kit ${fmt(sp.cpuKitVsRaw)}×, Express ${fmt(sp.cpuExpressVsRaw)}×, Fastify ${fmt(sp.cpuFastifyVsRaw)}×${sp.cpuKitHttpVsRaw ? `, kit core on node:http ${fmt(sp.cpuKitHttpVsRaw)}×` : ''}`,
      'report',
      undefined,
      `µs/req: kit ${fmt(sp.servers.kit.cpuUsPerReq, 0)}, raw ${fmt(sp.servers.raw.cpuUsPerReq, 0)}`,
    );
  } else if (failed('serve-page')) add('1 list page', 'failed', '', false, sp.error);

  const bd = s.bindings;
  if (bd && !bd.error) {
    const o = bd.options;
    const sv = bd.servers;
    const rps = (k) => `${fmt(sv[k].rps, 0)} req/s, ${fmt(sv[k].cpuUsPerReq, 0)} µs CPU/req`;
    add('1d node:http binding (createStoreListener) ÷ Fastify 5 (response schema), req/s', `${fmt(bd.httpVsFastify)}×`, '≥ 1.3×', bd.httpVsFastify.median >= 1.3, `${o.reps} rounds × ${o.durationS} s, ${o.connections} connections; node:http ${rps('kit-listener')}; Fastify ${rps('fastify')}`);
    add('1e Express binding (createStoreRouter, Express 5) ÷ Fastify 5, req/s', `${fmt(bd.expressVsFastify)}×`, '≥ 1.1×', bd.expressVsFastify.median >= 1.1, `Express binding ${rps('kit')}`);
    add('1f Fetch binding (createStoreFetchHandler behind a node:http→Request adapter) ÷ Fastify 5, req/s', `${fmt(bd.fetchVsFastify)}×`, 'report', undefined, `Fetch binding ${rps('kit-fetch')}`);
    add('1g node:http binding with its rate limiter on ÷ off, req/s', `${fmt(bd.limiterCost)}×`, 'report', undefined, `limiter on ${rps('kit-listener-rl')}`);
  } else if (failed('bindings')) add('1d–1g bindings', 'failed', '', false, bd.error);

  const pa = s['page-assembly'];
  if (pa && !pa.error) {
    add('2 capped 10 MB page ÷ JSON.stringify of it', `${fmt(pa.kitVsStringify)}×`, '≤ 1.1×', pa.kitVsStringify.median <= 1.1, `${pa.items} items, ${mb(pa.bytes)}; kit ${fmt(pa.ms.kit, 1, ' ms')}, stringify ${fmt(pa.ms.stringify, 1, ' ms')}, naive join ${fmt(pa.naiveVsStringify)}×`);
  } else if (failed('page-assembly')) add('2 page assembly', 'failed', '', false, pa.error);

  const dp = s['deep-paging'];
  if (dp && !dp.error) {
    for (const [db, r] of Object.entries(dp.databases)) {
      if (r.skipped) {
        add(`3 deep cursor page ÷ first page, ${db}`, 'skipped', '≤ 1.5×', undefined, r.skipped);
        continue;
      }
      add(
        `3 deep cursor page ÷ first page, ${db} (${r.rows.toLocaleString('en')} rows, depth ${r.depth.toLocaleString('en')})`,
        `${fmt(r.cursorVsFirst)}×`,
        '≤ 1.5×',
        r.cursorVsFirst.median <= 1.5,
        `first ${fmt(r.ms.first, 2, ' ms')}, cursor ${fmt(r.ms.cursor, 2, ' ms')}; OFFSET at that depth ${fmt(r.offsetVsFirst, 1)}× (${fmt(r.ms.offset, 1, ' ms')})`,
      );
    }
  } else if (failed('deep-paging')) add('3 deep paging', 'failed', '', false, dp.error);

  const cs = s['catalog-sync'];
  if (cs && !cs.error) {
    const x = cs.small;
    add(
      `4a whole-catalog sync ${x.products.toLocaleString('en')} products (pages of ${x.pageSize}) ÷ JSON floor`,
      `${fmt(x.vsFloor, 1)}×`,
      '≤ 4×',
      x.vsFloor.median <= 4,
      `${fmt(x.itemsPerS, 0)} items/s, ${fmt(x.mbPerS, 1)} MB/s; ${mb(x.bytes)} in ${x.requests} requests; floor ${fmt(x.floorMs, 0, ' ms')}; same items ${x.itemsOk}`,
    );
    if (cs.bigPages) {
      const b = cs.bigPages;
      add(`4a′ (contrast) the same sync in pages of ${b.pageSize}`, `${fmt(b.vsFloor, 1)}×`, '—', undefined, `${fmt(b.itemsPerS, 0)} items/s; ${b.requests} requests; peak RSS store / caller ${fmt(b.storePeakRssMb, 0, ' MiB')} / ${fmt(b.callerPeakRssMb, 0, ' MiB')}; same items ${b.itemsOk}`);
    }
    add(`4b peak RSS, store / caller (${x.products.toLocaleString('en')} products)`, `${fmt(x.storePeakRssMb, 0, ' MiB')} / ${fmt(x.callerPeakRssMb, 0, ' MiB')}`, '≤ 256 MiB each', x.storePeakRssMb.median <= 256 && x.callerPeakRssMb.median <= 256);
    if (cs.large) {
      const y = cs.large;
      add(
        `4c 1,000,000 products: peak RSS ÷ the 100,000 figure`,
        `store ${cs.storeRssGrowth.toFixed(2)}×, caller ${cs.callerRssGrowth.toFixed(2)}×`,
        '≤ 1.2×',
        cs.storeRssGrowth <= 1.2 && cs.callerRssGrowth <= 1.2,
        `${fmt(y.itemsPerS, 0)} items/s, ${fmt(y.mbPerS, 1)} MB/s, ${fmt(y.vsFloor, 1)}× floor; RSS ${fmt(y.storePeakRssMb, 0, ' MiB')} / ${fmt(y.callerPeakRssMb, 0, ' MiB')}`,
      );
    } else add('4c 1,000,000 products: peak RSS growth', 'not run (quick mode)', '≤ 1.2×', undefined, 'full mode only');
  } else if (failed('catalog-sync')) add('4 catalog sync', 'failed', '', false, cs.error);

  const ps = s['parallel-sync'];
  if (ps && !ps.error) {
    add(
      `5 offset sync, +${ps.delayMs} ms per page: concurrency 4 speed-up`,
      `${fmt(ps.speedup)}×`,
      '≥ 3× and same items',
      ps.speedup.median >= 3 && ps.sameItems,
      `${ps.products} products in pages of ${ps.pageSize} (${ps.requests.sequential} requests); sequential ${fmt(ps.ms.sequential, 0, ' ms')}, 4 ${fmt(ps.ms.parallel4, 0, ' ms')}; same items ${ps.sameItems}`,
    );
  } else if (failed('parallel-sync')) add('5 parallel sync', 'failed', '', false, ps.error);

  const sr = s['stub-resync'];
  if (sr && !sr.error) {
    add(
      `6 stub re-sync after ${sr.changed.toLocaleString('en')} of ${sr.products.toLocaleString('en')} products (1%) changed: full re-sync ÷ stub re-sync, time`,
      `${fmt(sr.speedup, 1)}×`,
      '≥ 10× (issue 22), fetching only the 1% by ID',
      sr.speedup.median >= 10 && sr.onlyChangedFetched && sr.sameItems,
      `full ${fmt(sr.ms.full, 0, ' ms')} (${sr.requests.full} requests), stubs ${fmt(sr.ms.stubs, 0, ' ms')} (${sr.requests.stubs} requests, ${sr.fetchedById} by ID); pages of ${sr.pageSize} (stub pages up to 10,000 after the first); same items ${sr.sameItems}`,
    );
  } else if (failed('stub-resync')) add('6 stub re-sync', 'failed', '', false, sr.error);

  fleetRows(s.fleet, add);
  reverseFleetRows(s['reverse-fleet'], add);

  const m = results.machine;
  return [
    `storebridge bench (${results.mode}) ${results.date} — ${m.nproc} CPUs (${m.cpu}), ${m.memory}, Node ${m.node}, load ${m.load.join(' ')}; ${results.totalSeconds.toFixed(0)} s`,
    'Figures: median (min–max) over the rounds; every ratio is between two measurements taken side by side in this run.',
    '',
    '| Target | Measured | Goal | Verdict | Notes |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const sec = (ms) => `${(ms / 1000).toFixed(1)} s`;
const lagText = (l) => `p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms (${l.runs.toLocaleString('en')} of ${l.expected.toLocaleString('en')} slots ran${l.notOk ? `, ${l.notOk} not ok` : ''})`;

/** Rows 7a–7e: the fleet section (bench/sections/fleet.js). */
function fleetRows(f, add) {
  if (!f) return;
  if (f.error || f.skipped) return add('7 fleet', f.skipped ? 'skipped' : 'failed', '', f.skipped ? undefined : false, f.skipped ?? f.error);
  const n = f.connections.toLocaleString('en');
  const per = (fn) => f.rounds.map((r) => `${r.workers} worker${r.workers > 1 ? 's' : ''} ${fn(r)}`).join('; ');
  const reg = f.registration;
  add(`7a fleet: register / remove ${n} schedules`, `${sec(reg.sequential.addMs)} / ${sec(reg.sequential.removeMs)} one at a time`, 'report', undefined, `${IN_FLIGHT_NOTE}: ${sec(reg.concurrent.addMs)} / ${sec(reg.concurrent.removeMs)}`);
  add(
    `7b fleet: sustained runs/s per worker process (${n} stores of ${f.items} items, concurrency ${f.concurrency})`,
    per((r) => r.capacity.perWorkerRunsPerS.toFixed(0)),
    'report',
    undefined,
    `CPU ms per run, worker / store / Redis: ${per((r) => `${r.capacity.workerCpuMsPerRun.toFixed(1)} / ${r.capacity.storeCpuMsPerRun.toFixed(1)} / ${r.capacity.redisCpuMsPerRun.toFixed(1)}`)}; while draining, cores busy on the machine / in workers + store: ${per((r) => `${r.capacity.machineCores?.toFixed(1)} / ${r.capacity.benchCores?.toFixed(1)}`)}`,
  );
  for (const r of f.rounds) {
    const busy = (l) => `machine ${l.machineCores.toFixed(1)} cores busy, workers + store ${l.benchCores.toFixed(1)}`;
    add(
      `7c fleet, ${r.workers} worker${r.workers > 1 ? 's' : ''}: schedule lag p99 at 90% of capacity`,
      `${r.lag90.p99Ms} ms`,
      '≤ 1 s',
      r.lag90.p99Ms <= 1000 && r.lag90.runs === r.lag90.expected,
      `90% (every ${sec(r.lag90.intervalMs)}, ${r.lag90.cycles} cycles after ${r.lag90.warmup} of warm-up): ${lagText(r.lag90)}, ${busy(r.lag90)}; 50% (every ${sec(r.lag50.intervalMs)}): ${lagText(r.lag50)}, ${busy(r.lag50)}`,
    );
  }
  const worst = (fn) => Math.max(...f.rounds.map(fn));
  add(
    `7d fleet: Redis memory per connection (${f.rounds[0].redis.historySize}-run history at its cap)`,
    per((r) => kb(r.redis.atHistoryCapPerConnection)),
    '≤ 4 KB',
    worst((r) => r.redis.atHistoryCapPerConnection) <= 4096,
    `as measured after the runs: INFO ${per((r) => kb(r.redis.infoBytesPerConnection))}; MEMORY USAGE of the keys ${per((r) => kb(r.redis.keyBytesPerConnection))}`,
  );
  add('7e fleet: worker RSS, highest of cycle 3 ÷ cycle 1 at 90% (after a warm-up cycle)', per((r) => `${r.rss.growth.toFixed(2)}×`), '≤ 1.1×', worst((r) => r.rss.growth) <= 1.1, `peak RSS ${per((r) => `${r.rss.peakMb.toFixed(0)} MiB`)}; heap floor per cycle ${per((r) => r.rss.heapFloorCyclesMb.map((x) => x.toFixed(0)).join(' → ') + ' MiB')}${f.rounds[0].rss.externalFloorCyclesMb ? `; off-heap floor ${per((r) => r.rss.externalFloorCyclesMb.map((x) => x.toFixed(1)).join(' → ') + ' MiB')}` : ''}; store process ${f.storeRssMb.toFixed(0)} MiB`);
}

const IN_FLIGHT_NOTE = '64 in flight';

/** Rows 8a–8d: the reverse-fleet section (bench/sections/reverse-fleet.js), one figure per store measured. */
function reverseFleetRows(r, add) {
  if (!r) return;
  if (r.error) return add('8 reverse fleet', 'failed', '', false, r.error);
  const label = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
  const runs = Object.keys(label).filter((k) => r[k]).map((k) => [label[k], r[k]]);
  const per = (f) => runs.map(([name, x]) => `${name} ${f(x)}`).join(', ');
  const worst = (f) => Math.max(...runs.map(([, x]) => f(x)));
  const n = r.connections.toLocaleString('en');
  const base = `one reverse-service, ${n} connections, every one polling ping each 10 s; ${r.seconds} s windows; first contact with every connection ${per((x) => sec(x.firstContactMs))}`;
  const floor = r.floor ? `; a bare node:http server polled the same way (the floor): ${r.floor.cpuUsPerPoll.toFixed(0)} µs, so the service is ${per((x) => `${(x.cpuUsPerIdlePoll / r.floor.cpuUsPerPoll).toFixed(1)}×`)} the floor` : '';
  add(`8a reverse fleet: service CPU per idle poll`, per((x) => `${x.cpuUsPerIdlePoll.toFixed(0)} µs`), '≤ 100 µs', worst((x) => x.cpuUsPerIdlePoll) <= 100, `${base}; ${per((x) => `${x.idle.polls.toLocaleString('en')} polls, service ${x.idle.serviceCores.toFixed(3)} cores (1 connection: ${x.oneConnectionCores.toFixed(3)})`)}${floor}`);
  add(`8b reverse fleet: idle poll reply time p99 (client side)`, per((x) => `${x.idlePollP99Ms} ms`), '≤ 50 ms', worst((x) => x.idlePollP99Ms) <= 50 && worst((x) => x.idle.failed) === 0, `p50 ${per((x) => `${x.idle.p50Ms} ms`)}; max ${per((x) => `${x.idle.maxMs} ms`)}; while 10% push, the other connections' polls: p50 ${per((x) => `${x.push.pollsDuringPush.p50Ms} ms`)}, p99 ${per((x) => `${x.push.pollsDuringPush.p99Ms} ms`)}; the pushing connections' own polls (queued behind their pace): p99 ${per((x) => `${x.push.pushingOwnPolls.p99Ms} ms`)}${worst((x) => x.idle.failed) ? `; polls not 200: ${per((x) => x.idle.failed)}` : ''}`);
  add(`8c reverse fleet: RSS per idle connection ((RSS with ${n} − RSS with 1) ÷ ${(r.connections - 1).toLocaleString('en')})`, per((x) => kb(x.rssBytesPerConnection)), '≤ 100 KB', worst((x) => x.rssBytesPerConnection) <= 100 * 1024, `RSS with ${n}: ${per((x) => mb(x.rss.withN))}; with 1: ${per((x) => mb(x.rss.withOne))}; after the pushes: ${per((x) => mb(x.rss.afterPush))}`);
  add(`8d reverse fleet: items/s through push transactions (10% of the connections pushing at once)`, per((x) => `${x.pushItemsPerS.toFixed(0)} items/s`), 'report', undefined, per((x) => `${x.push.transactions} transactions, ${x.push.items.toLocaleString('en')} items in ${x.push.seconds.toFixed(1)} s, service ${x.push.serviceCores.toFixed(2)} cores`));
}

module.exports = { table };
