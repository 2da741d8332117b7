/**
 * JWT SvcKeys through the real router on loopback: valid, expired, wrong signature, wrong
 * connection, `alg: none`, algorithm confusion, revoked (kid and jti), rotation with overlap, and
 * static keys beside JWTs. The clock is the router's `now` option, so expiry is exact, not timed.
 */
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import jwt from 'jsonwebtoken';
import { InvalidOptionError } from '../../lib/errors';
import { anyKeyVerifier, issueSvcKey, jwtKeyVerifier, type JwtKeyOptions } from '../../lib/server';
import { demoAdapter, get, KEY, startStore } from './helpers';

const CONNECTION = 'store-42';
const SECRET_OLD = 'old-secret-0123456789abcdef0123456789abcdef';
const SECRET_NEW = 'new-secret-fedcba9876543210fedcba9876543210';
const CURSOR_SECRET = 'cursor-secret-0123456789';
const T0 = Date.parse('2026-01-01T00:00:00Z');

let clock = T0;
const now = () => clock;

/** jsonwebtoken signs with the real clock; these tokens are made relative to the test clock instead. */
function token(payload: object, secret: string, header: object = {}, algorithm: jwt.Algorithm = 'HS256'): string {
  return jwt.sign({ iat: Math.floor(clock / 1000), ...payload }, secret, { algorithm, header: { alg: algorithm, ...header } as jwt.JwtHeader, noTimestamp: true });
}

const exp = (msFromClock: number) => Math.floor((clock + msFromClock) / 1000);

function unsignedToken(payload: object, header: object): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part(header)}.${part(payload)}.`;
}

describe('JWT SvcKeys through the router', () => {
  let store: Awaited<ReturnType<typeof startStore>>;
  const jwtOptions: JwtKeyOptions = {
    connection: CONNECTION,
    keys: [
      { kid: 'k-new', secret: SECRET_NEW },
      // The old key retires at T0 + 1 day: the end of the rotation's overlap.
      { kid: 'k-old', secret: SECRET_OLD, notAfter: T0 + 86_400_000 },
    ],
    revoked: { kids: ['k-leaked'], jtis: ['jti-revoked'] },
  };

  beforeAll(async () => {
    store = await startStore({ adapter: demoAdapter(30), svcKeys: [KEY], jwt: jwtOptions, now }, '/');
  });
  afterAll(() => store.close());
  beforeEach(() => {
    clock = T0;
  });

  const call = (svcKey: string) => get(`${store.base}/products?sortorder=asc&jobid=1&limit=2`, { SvcKey: svcKey });

  it('accepts a valid token of either key during the overlap, and the static key beside them', async () => {
    for (const [kid, secret] of [['k-new', SECRET_NEW], ['k-old', SECRET_OLD]]) {
      const r = await call(token({ connection: CONNECTION, exp: exp(60_000) }, secret, { kid }));
      expect(r.status).toBe(200);
      expect(r.body.products).toHaveLength(2);
    }
    expect((await call(KEY)).status).toBe(200);
  });

  it('refuses the old key after its notAfter, while the new one keeps working', async () => {
    const oldToken = token({ connection: CONNECTION, exp: exp(10 * 86_400_000) }, SECRET_OLD, { kid: 'k-old' });
    const newToken = token({ connection: CONNECTION, exp: exp(10 * 86_400_000) }, SECRET_NEW, { kid: 'k-new' });
    clock = T0 + 86_400_000; // the overlap is over
    expect(await call(oldToken)).toMatchObject({ status: 401, body: { error: 'the SvcKey has expired' } });
    expect((await call(newToken)).status).toBe(200);
  });

  it('refuses an expired token as expired (past the 30 s tolerance), and a token without exp', async () => {
    const t = token({ connection: CONNECTION, exp: exp(60_000) }, SECRET_NEW, { kid: 'k-new' });
    clock = T0 + 60_000 + 31_000;
    expect(await call(t)).toMatchObject({ status: 401, body: { error: 'the SvcKey has expired' } });
    clock = T0;
    expect(await call(token({ connection: CONNECTION }, SECRET_NEW, { kid: 'k-new' }))).toMatchObject({ status: 401, body: { error: 'invalid SvcKey' } });
  });

  it('refuses a wrong signature, an unknown kid, a missing kid, and another connection', async () => {
    const claims = { connection: CONNECTION, exp: exp(60_000) };
    const refused = [
      token(claims, 'some-other-secret-0123456789abcdef0123', { kid: 'k-new' }),
      token(claims, SECRET_OLD, { kid: 'k-new' }), // a real key, but not this kid's
      token(claims, SECRET_NEW, { kid: 'k-unknown' }),
      token(claims, SECRET_NEW),
      token({ ...claims, connection: 'store-43' }, SECRET_NEW, { kid: 'k-new' }),
      token({ exp: exp(60_000) }, SECRET_NEW, { kid: 'k-new' }),
    ];
    for (const t of refused) expect(await call(t)).toMatchObject({ status: 401, body: { error: 'invalid SvcKey' } });
  });

  it('refuses alg none and a payload swapped under a valid signature', async () => {
    const claims = { connection: CONNECTION, exp: exp(60_000) };
    expect((await call(unsignedToken(claims, { alg: 'none', kid: 'k-new', typ: 'JWT' }))).status).toBe(401);
    expect((await call(unsignedToken(claims, { alg: 'none', typ: 'JWT' }))).status).toBe(401);
    const other = token({ connection: 'store-43', exp: exp(60_000) }, SECRET_NEW, { kid: 'k-new' }).split('.');
    const mine = token(claims, SECRET_NEW, { kid: 'k-new' }).split('.');
    expect((await call([mine[0], other[1], mine[2]].join('.'))).status).toBe(401);
  });

  it('refuses a revoked kid and a revoked jti with a "revoked" answer', async () => {
    const claims = { connection: CONNECTION, exp: exp(60_000) };
    const leaked = await startStore(
      { adapter: demoAdapter(3), jwt: { ...jwtOptions, keys: [...jwtOptions.keys, { kid: 'k-leaked', secret: SECRET_NEW }] }, cursorSecret: CURSOR_SECRET, now },
      '/',
    );
    try {
      const r = await get(`${leaked.base}/products?sortorder=asc&jobid=1`, { SvcKey: token(claims, SECRET_NEW, { kid: 'k-leaked' }) });
      expect(r).toMatchObject({ status: 401, body: { error: 'the SvcKey has been revoked' } });
    } finally {
      await leaked.close();
    }
    expect(await call(token({ ...claims, jti: 'jti-revoked' }, SECRET_NEW, { kid: 'k-new' }))).toMatchObject({ status: 401, body: { error: 'the SvcKey has been revoked' } });
    expect((await call(token({ ...claims, jti: 'jti-fine' }, SECRET_NEW, { kid: 'k-new' }))).status).toBe(200);
  });

  it('issueSvcKey makes tokens the router accepts, for the right connection only', async () => {
    // issueSvcKey signs with the real clock; verify with the real clock too.
    const live = await startStore({ adapter: demoAdapter(3), jwt: jwtOptions, cursorSecret: CURSOR_SECRET }, '/');
    try {
      const good = issueSvcKey({ connection: CONNECTION, kid: 'k-new', secret: SECRET_NEW, expiresIn: '1h' });
      const other = issueSvcKey({ connection: 'store-43', kid: 'k-new', secret: SECRET_NEW, expiresIn: 3600 });
      expect((await get(`${live.base}/products?sortorder=asc&jobid=1`, { SvcKey: good })).status).toBe(200);
      expect((await get(`${live.base}/products?sortorder=asc&jobid=1`, { SvcKey: other })).status).toBe(401);
      expect(jwt.decode(good, { complete: true })).toMatchObject({ header: { alg: 'HS256', kid: 'k-new' }, payload: { connection: CONNECTION } });
      expect(typeof (jwt.decode(good) as jwt.JwtPayload).jti).toBe('string');
    } finally {
      await live.close();
    }
  });

  it('counts the rate limit per connection: two tokens of one connection share one limit', async () => {
    const limited = await startStore({ adapter: demoAdapter(3), jwt: jwtOptions, cursorSecret: CURSOR_SECRET, now, rateLimit: { limit: 3, failedAuth: false } }, '/');
    try {
      const a = token({ connection: CONNECTION, exp: exp(60_000), jti: 'a' }, SECRET_NEW, { kid: 'k-new' });
      const b = token({ connection: CONNECTION, exp: exp(60_000), jti: 'b' }, SECRET_OLD, { kid: 'k-old' });
      const statuses: number[] = [];
      for (const t of [a, b, a, b, a]) statuses.push((await get(`${limited.base}/products?sortorder=asc&jobid=1`, { SvcKey: t })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('algorithm pinning with asymmetric keys', () => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const verifier = jwtKeyVerifier({ connection: CONNECTION, keys: [{ kid: 'rsa-1', secret: publicPem, algorithm: 'RS256' }] });

  it('accepts RS256 tokens signed with the private key', async () => {
    const t = issueSvcKey({ connection: CONNECTION, kid: 'rsa-1', secret: privatePem, algorithm: 'RS256', expiresIn: 60 });
    expect(await verifier.verify(t, Date.now())).toMatchObject({ ok: true, keyId: expect.stringMatching(/^jwt:rsa-1:/) });
  });

  it('refuses an HS256 token whose HMAC secret is the public key (algorithm confusion)', async () => {
    // jsonwebtoken itself refuses to sign HS256 with a PEM, so the token is built by hand.
    const { createHmac } = await import('node:crypto');
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const body = `${part({ alg: 'HS256', typ: 'JWT', kid: 'rsa-1' })}.${part({ connection: CONNECTION, exp: Math.floor(Date.now() / 1000) + 60 })}`;
    const forged = `${body}.${createHmac('sha256', publicPem).update(body).digest('base64url')}`;
    expect(await verifier.verify(forged, Date.now())).toEqual({ ok: false, reason: 'unknown' });
  });
});

describe('JWT options are checked once, naming the option', () => {
  const bad: Array<[string, unknown]> = [
    ['jwt.connection', { keys: [{ kid: 'a', secret: SECRET_NEW }] }],
    ['jwt.keys', { connection: 'c', keys: [] }],
    ['jwt.keys.0.secret', { connection: 'c', keys: [{ kid: 'a', secret: 'short' }] }],
    ['jwt.keys.0.algorithm', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW, algorithm: 'none' }] }],
    ['jwt.keys.0.secret', { connection: 'c', keys: [{ kid: 'a', secret: '-----BEGIN PUBLIC KEY-----\nMIIB...\n-----END PUBLIC KEY-----' }] }],
    ['jwt.keys.0.secret', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW, algorithm: 'RS256' }] }],
    ['jwt.keys.1.kid', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW }, { kid: 'a', secret: SECRET_OLD }] }],
    ['jwt.keys.0.notAfter', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW, notAfter: 'soon' }] }],
    ['jwt.revoked.jtis.0', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW }], revoked: { jtis: [''] } }],
    ['jwt.revoked', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW }], revoked: 'all' }],
    ['jwt.clockToleranceSec', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW }], clockToleranceSec: 3601 }],
    ['jwt.keys.0.notafter', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW, notafter: 5 }] }],
    ['jwt.isuser', { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW }], isuser: 'me' }],
  ];
  it.each(bad)('%s', (option, options) => {
    let error: unknown;
    try {
      jwtKeyVerifier(options as JwtKeyOptions);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe(option);
  });

  it('the router requires a cursorSecret with JWT keys alone', async () => {
    await expect(startStore({ adapter: demoAdapter(1), svcKeys: undefined, jwt: { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW }] } })).rejects.toThrow(/cursorSecret/);
  });

  it('issueSvcKey refuses a token that would never expire', () => {
    expect(() => issueSvcKey({ connection: 'c', kid: 'a', secret: SECRET_NEW, expiresIn: 0 })).toThrow(InvalidOptionError);
  });

  it('messages are the toolkit\'s: what was expected, an unknown member with the closest name; never the secret', () => {
    const base = { connection: 'c', keys: [{ kid: 'a', secret: SECRET_NEW }] };
    expect(() => jwtKeyVerifier({ ...base, keys: [{ kid: 'a', secret: 'short-secret-value' }] })).toThrow('invalid option "jwt.keys.0.secret": an HS256 secret must be at least 32 bytes');
    expect(() => jwtKeyVerifier({ ...base, keys: [{ kid: 'a', secret: SECRET_NEW, notafter: 5 }] } as never)).toThrow(
      'invalid option "jwt.keys.0.notafter": is not an option of jwt (did you mean "notAfter"?)',
    );
    expect(() => issueSvcKey({ connection: 'c', kid: 'a', secret: SECRET_NEW, expiresIn: '30 days!' })).toThrow('invalid option "expiresIn": must be a positive number of seconds or a duration like "30d"');
    expect(() => issueSvcKey({ connection: 'c', kid: 'a', secret: 'short-secret-value', expiresIn: 60 })).toThrow('invalid option "secret": an HS256 secret must be at least 32 bytes');
    expect(() => issueSvcKey({ connection: 'c', kid: 'a', secret: SECRET_NEW, expiresIn: 60, algorithm: 'RS256' })).toThrow('invalid option "secret": RS256 needs a PEM private key');
    expect(() => issueSvcKey({ connection: 'c', kid: 'a', secret: SECRET_NEW, expiresin: 60 } as never)).toThrow('invalid option "expiresin": is not an option of issueSvcKey (did you mean "expiresIn"?)');
    expect(() => anyKeyVerifier()).toThrow('invalid option "verifiers": must be at least one object with a verify(presented, now) method');
    try {
      jwtKeyVerifier({ ...base, keys: [{ kid: 'a', secret: 'short-secret-value' }] });
    } catch (err) {
      expect((err as Error).message).not.toContain('short-secret-value');
    }
  });
});

describe('property: a token is accepted exactly when it names this connection and a configured kid', () => {
  it('holds for arbitrary connections and kids', async () => {
    const verifier = jwtKeyVerifier({ connection: CONNECTION, keys: [{ kid: 'k-new', secret: SECRET_NEW }] });
    const text = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => /^[\x21-\x7e]+$/.test(s));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constant(CONNECTION), text), fc.oneof(fc.constant('k-new'), text), async (connection, kid) => {
        const t = issueSvcKey({ connection, kid, secret: SECRET_NEW, expiresIn: 60 });
        const verdict = await verifier.verify(t, Date.now());
        expect(verdict.ok).toBe(connection === CONNECTION && kid === 'k-new');
      }),
      { numRuns: 100 },
    );
  });
});
