/**
 * The key check on every route: a matrix of bad credentials, each a 401 `{error}` with the
 * adapter never called (a spy at the adapter boundary counts calls), plus rotation and expiry, and
 * the two key headers (`SvcKey`, the spec's; `C2SKey`, the deployed service's).
 */
import http from 'node:http';
import { demoCatalog } from '../../lib/demo';
import { createMemoryAdapter } from '../../adapters/memory';
import { staticKeyVerifier } from '../../lib/server';
import { parseRouterOptions } from '../../lib/server/router-options';
import { KEY, get, spyAdapter, startStore } from './helpers';

const NOW = 1_900_000_000_000;
const OLD_KEY = 'old-key-expired-0000000000';
const NEXT_KEY = 'next-key-rotation-1111111111';

/** A raw request, so header values fetch refuses (duplicates, non-ASCII bytes) can be sent. */
function rawRequest(url: string, method: string, headers: Array<[string, string]>, body?: string): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    // Raw header arrays carry no Host of their own.
    const flat: string[] = [['Host', new URL(url).host], ...headers].flat();
    const req = http.request(url, { method, headers: flat }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers });
        } catch {
          reject(new Error(`not JSON (${res.statusCode}): ${text.slice(0, 200)}`));
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const catalog = demoCatalog(12);
const order = { ...catalog.orders[0], _id: 'o-auth', orderid: 'AUTH-1' }; // its own orderid: the demo order's is taken
const ROUTES: Array<[string, string, string | undefined]> = [
  ['GET', '/products?sortorder=asc&jobid=1', undefined],
  ['GET', `/products/${catalog.products[0]._id}`, undefined],
  ['POST', '/products?jobid=1&id=p-auth', JSON.stringify({ title: 'x' })],
  ['GET', '/orders?sortorder=asc&jobid=1', undefined],
  ['GET', `/orders/${catalog.orders[0]._id}`, undefined],
  ['POST', '/orders?jobid=1&id=o-auth', JSON.stringify(order)],
];

const wrongSameLength = KEY.slice(0, -1) + (KEY.endsWith('f') ? 'e' : 'f');
const CASES: Array<[string, Array<[string, string]>, RegExp]> = [
  ['absent', [], /^missing SvcKey or C2SKey header$/],
  ['empty', [['SvcKey', '']], /^missing SvcKey or C2SKey header$/],
  ['both empty', [['SvcKey', ''], ['C2SKey', '']], /^missing SvcKey or C2SKey header$/],
  ['wrong key of the same length', [['SvcKey', wrongSameLength]], /^invalid SvcKey$/],
  ['a prefix of the key', [['SvcKey', KEY.slice(0, 10)]], /^invalid SvcKey$/],
  ['the key plus one character', [['SvcKey', KEY + 'x']], /^invalid SvcKey$/],
  ['multibyte (UTF-8 bytes)', [['SvcKey', Buffer.from(`${KEY}é`, 'utf8').toString('latin1')]], /^invalid SvcKey$/],
  ['multibyte look-alike of the same length', [['SvcKey', Buffer.from(KEY.slice(0, -2) + 'é', 'utf8').toString('latin1')]], /^invalid SvcKey$/],
  ['key only in Authorization', [['Authorization', KEY]], /Authorization header is not accepted/],
  ['key in Authorization as a scheme', [['Authorization', `SvcKey ${KEY}`]], /Authorization header is not accepted/],
  ['Bearer key in Authorization', [['Authorization', `Bearer ${KEY}`]], /Authorization header is not accepted/],
  ['key twice', [['SvcKey', KEY], ['SvcKey', KEY]], /^invalid SvcKey$/],
  ['key in another header', [['X-SvcKey', KEY]], /^missing SvcKey or C2SKey header$/],
  ['expired key', [['SvcKey', OLD_KEY]], /^the SvcKey has expired$/],
  ['wrong key in C2SKey', [['C2SKey', wrongSameLength]], /^invalid C2SKey$/],
  ['expired key in C2SKey', [['C2SKey', OLD_KEY]], /^the C2SKey has expired$/],
  ['the key in SvcKey, another in C2SKey', [['SvcKey', KEY], ['C2SKey', NEXT_KEY]], /^the SvcKey and C2SKey headers carry different keys; send one key$/],
  ['a wrong key in SvcKey, the key in C2SKey', [['SvcKey', wrongSameLength], ['C2SKey', KEY]], /different keys/],
  ['the key in C2SKey twice', [['C2SKey', KEY], ['C2SKey', KEY]], /^invalid C2SKey$/],
  ['key only in Authorization, C2SKey empty', [['Authorization', KEY], ['C2SKey', '']], /Authorization header is not accepted/],
];

describe('auth matrix: every route × every bad credential → 401 and no adapter call', () => {
  const spy = spyAdapter(createMemoryAdapter(structuredClone(catalog)));
  let store: Awaited<ReturnType<typeof startStore>>;
  beforeAll(async () => {
    store = await startStore({
      adapter: spy,
      svcKeys: [KEY, { key: OLD_KEY, id: 'old', expiresAt: NOW - 1 }, { key: NEXT_KEY, id: 'next', expiresAt: new Date(NOW + 60_000) }],
      now: () => NOW,
    });
  });
  afterAll(() => store.close());

  for (const [method, path, body] of ROUTES) {
    it.each(CASES)(`${method} ${path.split('?')[0]}: %s`, async (_name, headers, message) => {
      const extra: Array<[string, string]> = body ? [['content-type', 'application/json']] : [];
      const r = await rawRequest(`${store.base}${path}`, method, [...headers, ...extra], body);
      expect(r.status).toBe(401);
      expect(Object.keys(r.body)).toEqual(['error']);
      expect(r.body.error).toMatch(message);
      expect(r.headers['www-authenticate']).toBe('SvcKey');
      expect(spy.calls).toEqual([]);
    });
  }

  it('the key in the query string is not a key', async () => {
    const r = await get(`${store.base}/products?sortorder=asc&jobid=1&SvcKey=${KEY}`, {});
    expect(r.status).toBe(401);
    expect(spy.calls).toEqual([]);
  });

  it('no 401 body ever echoes what was presented', async () => {
    const r = await get(`${store.base}/products?sortorder=asc&jobid=1`, { SvcKey: wrongSameLength });
    expect(r.text).not.toContain(wrongSameLength);
  });

  it('every active key is accepted (rotation), each on every route, in SvcKey, C2SKey or both', async () => {
    const forms = (key: string): Array<Array<[string, string]>> => [[['SvcKey', key]], [['C2SKey', key]], [['c2skey', key]], [['SvcKey', key], ['C2SKey', key]], [['SvcKey', ''], ['C2SKey', key]]];
    for (const key of [KEY, NEXT_KEY]) {
      for (const headers of forms(key)) {
        for (const [method, path, body] of ROUTES) {
          const extra: Array<[string, string]> = body ? [['content-type', 'application/json']] : [];
          const r = await rawRequest(`${store.base}${path}`, method, [...headers, ...extra], body);
          expect({ headers, path, status: r.status }).toEqual({ headers, path, status: 200 });
        }
      }
    }
    expect(spy.calls.length).toBeGreaterThan(0);
  });

  it('the key in the query string is not a key, under either name', async () => {
    spy.calls.splice(0);
    for (const name of ['C2SKey', 'c2skey', 'svckey']) {
      const r = await get(`${store.base}/products?${name}=${KEY}`, {});
      expect(r.status).toBe(401);
    }
    expect(spy.calls).toEqual([]);
  });

  it('a key expires at its expiresAt instant', async () => {
    let now = NOW;
    const s = await startStore({ adapter: createMemoryAdapter(), svcKeys: [{ key: KEY, expiresAt: NOW + 1000 }], now: () => now });
    try {
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`)).status).toBe(200);
      now = NOW + 1000;
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`)).body).toEqual({ error: 'the SvcKey has expired' });
    } finally {
      await s.close();
    }
  });
});

describe('keyHeaders: the header names are configurable', () => {
  it('only the configured names are read; the first names the key in messages', async () => {
    const s = await startStore({ adapter: createMemoryAdapter(), keyHeaders: ['X-Store-Key'] });
    try {
      expect((await get(`${s.base}/products`, { 'X-Store-Key': KEY })).status).toBe(200);
      const svc = await get(`${s.base}/products`, { SvcKey: KEY });
      expect(svc.status).toBe(401);
      expect(svc.body.error).toBe('missing X-Store-Key header');
      expect(svc.headers.get('www-authenticate')).toBe('X-Store-Key');
      expect((await get(`${s.base}/products`, { 'X-Store-Key': 'nope' })).body.error).toBe('invalid X-Store-Key');
    } finally {
      await s.close();
    }
  });

  it.each([
    ['keyHeaders', []],
    ['keyHeaders.0', ['Authorization']],
    ['keyHeaders.1', ['SvcKey', 'Cookie']],
    ['keyHeaders.0', ['has space']],
    ['keyHeaders.1', ['SvcKey', 'svckey']],
  ])('refuses %s = %p', (option, keyHeaders) => {
    expect(() => parseRouterOptions({ adapter: createMemoryAdapter(), svcKeys: [KEY], keyHeaders })).toThrow(`invalid option "${option}"`);
  });
});

describe('staticKeyVerifier', () => {
  it('compares digests of every key and names keys by id or a hash prefix, never the key', () => {
    const v = staticKeyVerifier([KEY, { key: NEXT_KEY, id: 'next' }]);
    const first = v.verify(KEY, 0);
    expect(first).toEqual({ ok: true, keyId: expect.stringMatching(/^key-[0-9a-f]{8}$/) });
    expect(JSON.stringify(first)).not.toContain(KEY);
    expect(v.verify(NEXT_KEY, 0)).toEqual({ ok: true, keyId: 'next' });
    expect(v.verify('nope', 0)).toEqual({ ok: false, reason: 'unknown' });
  });

  it('a custom KeyVerifier replaces the static keys (and then needs a cursorSecret)', async () => {
    const s = await startStore({
      adapter: createMemoryAdapter(),
      svcKeys: undefined,
      keyVerifier: { verify: async (presented) => (presented === 'token-ok' ? { ok: true, keyId: 't' } : { ok: false, reason: 'unknown' }) },
      cursorSecret: 'a cursor secret of enough bytes',
    });
    try {
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`, { SvcKey: 'token-ok' })).status).toBe(200);
      expect((await get(`${s.base}/products?sortorder=asc&jobid=1`, { SvcKey: KEY })).status).toBe(401);
    } finally {
      await s.close();
    }
  });

  it('a verifier that throws is a 500 without details, and is logged', async () => {
    const logged: unknown[] = [];
    const logger = { info: () => undefined, warn: () => undefined, error: (o: object) => void logged.push(o) };
    const s = await startStore({
      adapter: createMemoryAdapter(),
      svcKeys: undefined,
      keyVerifier: { verify: () => Promise.reject(new Error('key service down at 10.0.0.7')) },
      cursorSecret: 'a cursor secret of enough bytes',
      logger,
    });
    try {
      const r = await get(`${s.base}/products?sortorder=asc&jobid=1`);
      expect(r.status).toBe(500);
      expect(r.text).not.toContain('10.0.0.7');
      expect(logged).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});
