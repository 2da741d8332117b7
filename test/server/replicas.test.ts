/**
 * Replicas: real `storebridge serve` processes sharing Redis. Together they accept no more than
 * the limit, where each alone would have accepted up to it (shown by the same pair without Redis);
 * a cursor issued by one replica is accepted by another with the same secret (and refused by one
 * with another secret); JWT SvcKeys verify on either replica.
 *
 * Needs the build (`npx tsc -p tsconfig.build.json`) and Redis (STOREBRIDGE_TEST_REDIS_URL, default
 * redis://127.0.0.1:6379): unreachable, the suite is skipped with a notice, or fails under
 * STOREBRIDGE_REQUIRE_DB=1 (as the SQL suites do). Each run uses its own key prefix and deletes it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describeRedis, REDIS_URL } from '../sync/bullmq-helpers';
import { connectRedisRateLimit, issueSvcKey } from '../../lib/server';
import { TcpProxy } from '../support/tcp-proxy';
import { demoAdapter, get, startStore } from './helpers';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'storebridge.js');
const KEY = 'K-replicas-5d1c9a7e3b';
const JWT_SECRET = 'replica-jwt-secret-0123456789abcdef0123';
const LIMIT = 10;

interface Replica {
  child: ChildProcess;
  url: string;
  err: () => string;
  exit: Promise<number | null>;
}

function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Replica> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, STOREBRIDGE_KEY: '', SB_JWT_K1: JWT_SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
      if (m) resolve({ child, url: m[1], err: () => err, exit });
    });
    void exit.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

async function stop(replicas: Array<Replica | undefined>): Promise<void> {
  await Promise.all(
    replicas.map(async (r) => {
      if (!r || r.child.exitCode !== null) return;
      r.child.kill('SIGTERM');
      await r.exit;
    }),
  );
}

function runToEnd(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, STOREBRIDGE_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

async function getJson(url: string, key = KEY): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { headers: { SvcKey: key } });
  return { status: res.status, body: await res.json(), headers: res.headers };
}


async function deleteRedisKeys(prefix: string): Promise<number> {
  const { Redis } = await import('ioredis');
  const client = new Redis(REDIS_URL);
  try {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) deleted += await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    return deleted;
  } finally {
    await client.quit();
  }
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'lib', 'cli', 'commands', 'serve.js'))) throw new Error('build first: npx tsc -p tsconfig.build.json');
});

describeRedis('two serve replicas sharing Redis', () => {
  const prefix = `sbt:${randomBytes(5).toString('hex')}:`;
  const shared = ['--key', KEY, '--demo', '60', '--rate-limit', String(LIMIT), '--jwt-key', 'k1=SB_JWT_K1', '--jwt-connection', 'store-1'];
  let a: Replica | undefined;
  let b: Replica | undefined;

  beforeAll(async () => {
    [a, b] = await Promise.all([serve([...shared, '--redis', REDIS_URL, '--redis-prefix', prefix]), serve([...shared, '--redis', REDIS_URL, '--redis-prefix', prefix])]);
  });
  afterAll(async () => {
    await stop([a, b]);
    await deleteRedisKeys(prefix);
  });

  it(`accept at most ${LIMIT} requests per minute per key together, where each alone allows ${LIMIT}`, async () => {
    const accepted = { a: 0, b: 0 };
    const refused: number[] = [];
    // 3 x LIMIT requests, alternating replicas, in concurrent bursts of 6.
    const targets = Array.from({ length: 3 * LIMIT }, (_, i) => (i % 2 === 0 ? 'a' : 'b') as 'a' | 'b');
    for (let i = 0; i < targets.length; i += 6) {
      await Promise.all(
        targets.slice(i, i + 6).map(async (t) => {
          const r = await getJson(`${(t === 'a' ? a : b)!.url}/products?sortorder=asc&jobid=1&limit=1`);
          if (r.status === 200) accepted[t]++;
          else {
            refused.push(r.status);
            expect(r.body.error).toMatch(/too many requests/);
            expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
          }
        }),
      );
    }
    expect(accepted.a + accepted.b).toBe(LIMIT);
    expect(accepted.a).toBeGreaterThan(0);
    expect(accepted.b).toBeGreaterThan(0);
    expect(refused).toEqual(Array(2 * LIMIT).fill(429));
    // The shared counter is in Redis under this run's prefix.
    const { Redis } = await import('ioredis');
    const client = new Redis(REDIS_URL);
    try {
      const keys = await client.keys(`${prefix}key:*`);
      expect(keys).toHaveLength(1);
      expect(Number(await client.get(keys[0]))).toBe(3 * LIMIT);
      expect(keys[0]).not.toContain(KEY);
    } finally {
      await client.quit();
    }
  });

  it('a cursor issued by replica A is accepted by replica B and continues the walk; JWT keys verify on both', async () => {
    // A JWT SvcKey: its limit counts per connection, apart from the static key exhausted above.
    const token = issueSvcKey({ connection: 'store-1', kid: 'k1', secret: JWT_SECRET, expiresIn: 300 });
    const first = await getJson(`${a!.url}/products?sortorder=asc&jobid=2&limit=5`, token);
    expect(first.status).toBe(200);
    expect(typeof first.body.paging.next).toBe('string');
    const fromB = await getJson(`${b!.url}/products?sortorder=asc&jobid=2&limit=5&next=${encodeURIComponent(first.body.paging.next)}`, token);
    expect(fromB.status).toBe(200);
    const byOffset = await getJson(`${a!.url}/products?sortorder=asc&jobid=2&limit=5&offset=5`, token);
    expect(fromB.body.products.map((p: any) => p._id)).toEqual(byOffset.body.products.map((p: any) => p._id));
    expect(fromB.body.products).toHaveLength(5);
    expect(first.body.products.map((p: any) => p._id)).not.toContain(fromB.body.products[0]._id);

    // A replica with another cursor secret refuses it: the secret is what makes cursors portable.
    const other = await serve(['--key', KEY, '--demo', '60', '--cursor-secret-env', 'SB_OTHER_CURSOR'], { SB_OTHER_CURSOR: 'another-cursor-secret-0123456789' });
    try {
      const r = await getJson(`${other.url}/products?sortorder=asc&jobid=2&limit=5&next=${encodeURIComponent(first.body.paging.next)}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/next/);
    } finally {
      await stop([other]);
    }
    for (const r of [a!, b!]) expect(r.err()).not.toContain(KEY);
  });
});

describeRedis('the Redis limiter in process', () => {
  it('fails closed: when Redis goes away, requests are 500 {error} (logged), not unlimited', async () => {
    const prefix = `sbt:${randomBytes(5).toString('hex')}:`;
    const redis = await connectRedisRateLimit(REDIS_URL, { prefix });
    const logged: Array<{ obj: any; msg?: string }> = [];
    const log = (obj: object, msg?: string) => void logged.push({ obj, msg });
    const store = await startStore({
      adapter: demoAdapter(5),
      svcKeys: [KEY],
      rateLimit: { limit: 100, store: redis.store('key'), failedAuth: { store: redis.store('auth') } },
      logger: { info: log, warn: log, error: log },
    });
    try {
      expect((await get(`${store.base}/products?sortorder=asc&jobid=1`, { SvcKey: KEY })).status).toBe(200);
      await redis.close();
      const r = await get(`${store.base}/products?sortorder=asc&jobid=1`, { SvcKey: KEY });
      expect(r.status).toBe(500);
      expect(Object.keys(r.body)).toEqual(['error']);
      expect(r.text).not.toMatch(/redis|closed|stack/i);
      // Logged through the request's logger, bound to its jobid, with the store's error as cause.
      expect(logged).toEqual([{ msg: 'listProducts failed', obj: expect.objectContaining({ jobid: 1, operation: 'listProducts', code: 'INTERNAL', err: expect.any(Error) }) }]);
      expect(JSON.stringify(logged.map((l) => l.obj.detail ?? l.obj.code))).not.toContain(KEY);
    } finally {
      await store.close();
      await deleteRedisKeys(prefix);
    }
  });
});

describeRedis('the Redis limiter behind a stalled network', () => {
  it('fails closed within its command time-out, not when TCP gives up, and counts again once the network is back', async () => {
    const target = new URL(REDIS_URL);
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
    const prefix = `sbt:${randomBytes(5).toString('hex')}:`;
    const redis = await connectRedisRateLimit(proxy.rewrite(REDIS_URL), { prefix, commandTimeoutMs: 500 });
    const store = await startStore({ adapter: demoAdapter(5), svcKeys: [KEY], rateLimit: { limit: 100, store: redis.store('key'), failedAuth: { store: redis.store('auth') } } });
    try {
      expect((await get(`${store.base}/products?sortorder=asc&jobid=1`, { SvcKey: KEY })).status).toBe(200);
      proxy.stall(); // Redis keeps the socket open and never answers: a paused server, a dead switch
      const started = Date.now();
      const stalled = await get(`${store.base}/products?sortorder=asc&jobid=1`, { SvcKey: KEY });
      const waited = Date.now() - started;
      expect(stalled.status).toBe(500);
      expect(Object.keys(stalled.body)).toEqual(['error']);
      // The time-out (500 ms) plus one retry at most; without it the request hangs for minutes.
      expect(waited).toBeLessThan(5_000);
      proxy.restore();
      let status = 0;
      for (const until = Date.now() + 10_000; status !== 200 && Date.now() < until; ) {
        status = (await get(`${store.base}/products?sortorder=asc&jobid=1`, { SvcKey: KEY })).status;
      }
      expect(status).toBe(200);
    } finally {
      await store.close();
      await proxy.close();
      await redis.close();
      await deleteRedisKeys(prefix);
    }
  });
});

describe('the same pair without Redis (control)', () => {
  it(`accepts up to ${LIMIT} on each replica: ${2 * LIMIT} together`, async () => {
    const pair = await Promise.all([serve(['--key', KEY, '--demo', '5', '--rate-limit', String(LIMIT)]), serve(['--key', KEY, '--demo', '5', '--rate-limit', String(LIMIT)])]);
    try {
      let accepted = 0;
      for (let i = 0; i < 3 * LIMIT; i++) {
        if ((await getJson(`${pair[i % 2].url}/products?sortorder=asc&jobid=1&limit=1`)).status === 200) accepted++;
      }
      expect(accepted).toBe(2 * LIMIT);
    } finally {
      await stop(pair);
    }
  });
});

describe('serve --redis refusals', () => {
  it('exits 1 with a clear message when Redis does not answer, never printing its password', async () => {
    const r = await runToEnd(['serve', '--key', KEY, '--rate-limit', '5', '--redis', 'redis://user:s3cret-pw@127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    expect(r.err + r.out).not.toContain('s3cret-pw');
    expect(r.out).not.toMatch(/listening/);
  });

  it('is a usage error (exit 2) with --rate-limit off, or a URL that is not redis://', async () => {
    const off = await runToEnd(['serve', '--key', KEY, '--rate-limit', 'off', '--redis', REDIS_URL]);
    expect(off.code).toBe(2);
    expect(off.err).toMatch(/--redis shares the rate limit/);
    const bad = await runToEnd(['serve', '--key', KEY, '--redis', 'http://127.0.0.1:6379']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--redis must be a redis:\/\//);
  });

  it('JWT flags need their environment variables and a cursor secret, and never take secrets inline', async () => {
    const missing = await runToEnd(['serve', '--jwt-key', 'k1=SB_NOT_SET_ANYWHERE', '--jwt-connection', 'c']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/SB_NOT_SET_ANYWHERE is not set/);
    const inline = await runToEnd(['serve', '--key', KEY, '--jwt-key', 'k1=some secret value', '--jwt-connection', 'c']);
    expect(inline.code).toBe(2);
    expect(inline.err).toMatch(/must name an environment variable/);
    expect(inline.err).not.toContain('some secret value');
    const noCursorSecret = await runToEnd(['serve', '--jwt-key', 'k1=SB_JWT_K1', '--jwt-connection', 'c'], { SB_JWT_K1: JWT_SECRET });
    expect(noCursorSecret.code).toBe(2);
    expect(noCursorSecret.err).toMatch(/--cursor-secret-env ENV is required/);
  });
});
