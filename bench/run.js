#!/usr/bin/env node
'use strict';
/**
 * storebridge benchmarks: `npm run bench` (full) or `npm run bench:quick` (under 2 minutes).
 *   node bench/run.js [--quick] [--only a,b] [--clean] [--fleet-connections=N …] [--reverse-connections=N --reverse-seconds=S]
 * Builds dist/ when it is missing or older than the sources, runs each section in its own process
 * (servers and the load generator in further processes of their own), writes
 * bench/results/<time>.json and bench/results/latest.json, and prints a markdown table.
 * Every target is a ratio of two things measured in the same run; see docs/benchmarks.md.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyArg = argv.find((a) => a.startsWith('--only'));
const only = onlyArg ? (onlyArg.includes('=') ? onlyArg.split('=')[1] : argv[argv.indexOf(onlyArg) + 1]).split(',') : undefined;
// `--fleet-NAME=VALUE` options go to the fleet section (bench/sections/fleet.js), `--reverse-NAME=VALUE`
// to the reverse-fleet section (bench/sections/reverse-fleet.js).
const forwarded = argv.filter((a) => /^--(fleet|reverse)-[a-z-]+=/.test(a));
const SECTIONS = ['serve-page', 'bindings', 'page-assembly', 'deep-paging', 'catalog-sync', 'parallel-sync', 'stub-resync', 'fleet', 'reverse-fleet'];

function newestMtime(dir) {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newestMtime(p));
    else if (e.name.endsWith('.ts')) t = Math.max(t, fs.statSync(p).mtimeMs);
  }
  return t;
}

function ensureBuilt() {
  const built = path.join(ROOT, 'dist', 'lib', 'index.js');
  const stale = !fs.existsSync(built) || fs.statSync(built).mtimeMs < Math.max(newestMtime(path.join(ROOT, 'lib')), newestMtime(path.join(ROOT, 'adapters')));
  if (!stale) return;
  process.stderr.write('building dist/ (tsc -p tsconfig.build.json)…\n');
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  } catch {
    if (!fs.existsSync(built)) throw new Error('the build failed and there is no dist/ to benchmark');
    process.stderr.write('the build reported errors; benchmarking the dist/ that was emitted\n');
  }
}

function runSection(name) {
  const { spawnSync } = require('node:child_process');
  const r = spawnSync(process.execPath, [path.join(__dirname, 'section.js'), name, ...(quick ? ['--quick'] : []), ...forwarded], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20,
  });
  const lines = String(r.stdout).trim().split('\n');
  if (r.status !== 0) return { error: `exited with ${r.status}` };
  return JSON.parse(lines[lines.length - 1]);
}

function machine() {
  let mem = `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`;
  return { nproc: os.availableParallelism(), cpu: os.cpus()[0]?.model, memory: mem, node: process.version, platform: `${os.type()} ${os.release()}`, load: os.loadavg().map((x) => x.toFixed(2)) };
}

async function main() {
  if (argv.includes('--clean')) {
    await require('./lib/seed').clean();
    process.stderr.write('removed the cached seeds\n');
    return;
  }
  ensureBuilt();
  const started = Date.now();
  const results = { mode: quick ? 'quick' : 'full', date: new Date().toISOString(), machine: machine(), sections: {} };
  for (const name of SECTIONS) {
    if (only && !only.includes(name)) continue;
    const t = Date.now();
    process.stderr.write(`▶ ${name}…\n`);
    results.sections[name] = runSection(name);
    process.stderr.write(`  ${name}: ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
  }
  results.totalSeconds = (Date.now() - started) / 1000;
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const text = JSON.stringify(results, null, 2);
  fs.writeFileSync(path.join(dir, `${results.date.replace(/[:.]/g, '-')}-${results.mode}.json`), text);
  fs.writeFileSync(path.join(dir, 'latest.json'), text);
  process.stdout.write(require('./lib/table').table(results) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
