'use strict';
/**
 * Child-process helpers: every server and every load generator runs in its own process, one server
 * at a time. Servers are forked with an IPC channel: they send `{ready, port}` once listening and
 * answer `{cpu}` (their `process.cpuUsage()`) when asked; peak RSS is read from /proc (VmHWM).
 */
const { fork, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const AUTOCANNON = path.join(ROOT, 'node_modules', 'autocannon', 'autocannon.js');

/** Forks `script` with `args`; resolves once it reports `{ready}`. */
function startServer(script, args = [], { execArgv = [], env = {} } = {}) {
  const child = fork(script, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv, env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    const onExit = (code) => reject(new Error(`${path.basename(script)} ${args.join(' ')} exited with ${code} before it was ready`));
    child.once('exit', onExit);
    child.once('message', (m) => {
      if (!m || !m.ready) return reject(new Error(`unexpected first message ${JSON.stringify(m)}`));
      child.off('exit', onExit);
      resolve(wrap(child, m));
    });
  });
}

function wrap(child, ready) {
  const ask = (what) =>
    new Promise((resolve) => {
      const on = (m) => {
        if (m && m.answer === what) {
          child.off('message', on);
          resolve(m.value);
        }
      };
      child.on('message', on);
      child.send({ ask: what });
    });
  return {
    ...ready,
    pid: child.pid,
    child,
    /** Asks the child a question of its IPC protocol (`cpu`, `rss`, or one of its own); resolves with the answer. */
    ask,
    /** Microseconds of CPU (user + system) used by the server so far. */
    cpuMicros: async () => {
      const c = await ask('cpu');
      return c.user + c.system;
    },
    /** Peak resident set size in bytes (VmHWM). */
    peakRss: () => peakRss(child.pid),
    stop: () => stopChild(child),
  };
}

/** Stops a child process: SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 5000).unref();
  });
}

/** Server side of the IPC protocol: call once listening. */
function serveIpc(port, extra = {}) {
  process.on('message', (m) => {
    if (m && m.ask === 'cpu') process.send({ answer: 'cpu', value: process.cpuUsage() });
    if (m && m.ask === 'rss') process.send({ answer: 'rss', value: peakRss(process.pid) });
  });
  process.on('SIGTERM', () => process.exit(0));
  process.on('disconnect', () => process.exit(0));
  process.send({ ready: true, port, ...extra });
}

function peakRss(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The machine's CPU time so far, in seconds summed over its cores (`/proc/stat`): `{busy, total}`. */
function machineCpu() {
  try {
    const [, ...ticks] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const idle = ticks[3] + (ticks[4] || 0);
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: (total - idle) / 100, total: total / 100 };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

/** Runs autocannon in its own process; resolves with its JSON result. */
function autocannon(url, { connections = 10, durationS = 3, headers = {}, pipelining = 1 } = {}) {
  const args = [AUTOCANNON, '--json', '--no-progress', '-c', String(connections), '-d', String(durationS), '-p', String(pipelining)];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}: ${err.slice(0, 500)}`));
      try {
        resolve(JSON.parse(out));
      } catch (e) {
        reject(new Error(`autocannon output is not JSON: ${out.slice(0, 200)}`));
      }
    });
  });
}

/** Runs a node script to completion in its own process; resolves with the last stdout line as JSON. */
function runJson(script, args = [], { execArgv = [], env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...execArgv, script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      const lines = out.trim().split('\n');
      if (code !== 0) return reject(new Error(`${path.basename(script)} exited with ${code}: ${out.slice(-500)}`));
      try {
        resolve({ result: JSON.parse(lines[lines.length - 1]), peakRss: undefined });
      } catch {
        reject(new Error(`${path.basename(script)} printed no JSON result`));
      }
    });
  });
}

module.exports = { ROOT, startServer, stopChild, serveIpc, autocannon, runJson, peakRss, machineCpu };
