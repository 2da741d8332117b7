/**
 * SvcKeys that are signed tokens (JWTs, via jsonwebtoken): each names its connection, expires, and
 * says which signing key (`kid`) made it, so keys rotate with overlap and single tokens or whole
 * signing keys can be revoked without redeploying every caller. `docs/keys.md` has the procedure.
 */
import { randomBytes } from 'node:crypto';
import jwt, { type Algorithm, type JwtPayload } from 'jsonwebtoken';
import { z } from 'zod';
import { InvalidOptionError } from '../errors';
import { defineOptions, opt, readOption } from '../options';
import type { KeyVerdict, KeyVerifier } from './key-verifier';

/** Algorithms a signing key may be pinned to. `none` is never accepted. */
export const JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** One signing key, known by its `kid`. A token is checked only with the key its header names. */
export interface JwtSigningKey {
  readonly kid: string;
  /** HMAC secret (HS* algorithms; at least 32 bytes), or a PEM public key (RS*, PS*, ES*). */
  readonly secret: string | Buffer;
  /** The one algorithm this key verifies. Default `HS256`. Tokens with another `alg` are refused. */
  readonly algorithm?: JwtAlgorithm;
  /**
   * Tokens of this key are refused from this instant on, whatever their own `exp` (a `Date`, Unix
   * ms, or an ISO 8601 string): how an old key retires at the end of a rotation's overlap.
   */
  readonly notAfter?: Date | number | string;
}

/** What a revocation check sees of a token whose signature is already verified. */
export interface JwtTokenInfo {
  readonly kid: string;
  readonly jti?: string;
  readonly connection: string;
}

export interface JwtKeyOptions {
  /** The connection this store serves: a token's `connection` claim must equal it. */
  readonly connection: string;
  /** The signing keys accepted now, several during a rotation's overlap. */
  readonly keys: ReadonlyArray<JwtSigningKey>;
  /**
   * Revoked tokens: signing key ids and token ids (`jti`) never accepted again, or a function
   * deciding (it may be async, e.g. a set in Redis shared by replicas).
   */
  readonly revoked?: { readonly kids?: readonly string[]; readonly jtis?: readonly string[] } | ((token: JwtTokenInfo) => boolean | Promise<boolean>);
  /** Clock skew tolerated on `exp`/`nbf`, in seconds. Default 30. */
  readonly clockToleranceSec?: number;
  /** Expected `iss` claim, if tokens carry one. */
  readonly issuer?: string;
}

interface ParsedKey {
  readonly secret: string | Buffer;
  readonly algorithm: JwtAlgorithm;
  readonly notAfter: number;
}

/** A tell-tale of a PEM key: an HMAC secret must not be one (that is how alg confusion starts). */
const PEM = /-----BEGIN [A-Z ]*KEY-----/;
const PUBLIC_PLACEHOLDER = '-----BEGIN PUBLIC KEY-----';

const INSTANT_RULE = 'must be a Date, Unix milliseconds or an ISO 8601 string';
/** An instant as given (a `Date`, Unix ms, an ISO 8601 string) in Unix ms; `NaN` when it is none. */
const instantOf = (v: Date | number | string): number => (v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : v);
const instant = () =>
  z
    .union([z.date(), z.number(), z.string()], { error: INSTANT_RULE })
    .refine((v) => !Number.isNaN(instantOf(v)), INSTANT_RULE);

const KID_RULE = 'must be 1 to 100 visible ASCII characters';
const CONNECTION_RULE = 'must be a non-empty string of at most 200 characters';
const connectionName = () => z.string({ error: CONNECTION_RULE }).min(1, CONNECTION_RULE).max(200, CONNECTION_RULE);

/**
 * One signing key (`JwtSigningKey`). The key material is checked against the pinned algorithm in the
 * same declaration: an HMAC secret of at least 32 bytes that is not a PEM key (alg confusion), or
 * a PEM public key for the others.
 */
const signingKey = () =>
  z
    .strictObject({
      kid: z.string({ error: KID_RULE }).regex(/^[\x21-\x7e]{1,100}$/, KID_RULE),
      secret: z.union([z.string(), z.instanceof(Buffer)], { error: 'must be a string or Buffer' }),
      algorithm: opt.oneOf(JWT_ALGORITHMS).default('HS256'),
      notAfter: instant().optional(),
    })
    .superRefine((k, ctx) => {
      const isPem = PEM.test(k.secret.toString());
      const fault = (message: string) => ctx.addIssue({ code: 'custom', path: ['secret'], message });
      if (!k.algorithm.startsWith('HS')) {
        if (!isPem) fault(`${k.algorithm} needs a PEM public key`);
      } else if (isPem) fault(`a PEM key cannot be an ${k.algorithm} secret (pin the key's own algorithm, e.g. RS256)`);
      else if (Buffer.byteLength(k.secret) < 32) fault(`an ${k.algorithm} secret must be at least 32 bytes`);
    });

const KEYS_RULE = 'must be a non-empty array of {kid, secret, algorithm?, notAfter?}';
const NAMES_RULE = 'must be an array of non-empty strings';
const names = () => z.array(z.string({ error: NAMES_RULE }).min(1, NAMES_RULE), { error: NAMES_RULE }).optional();

/** The JWT key options (`JwtKeyOptions`), as `jwtKeyVerifier` and the router's `jwt` option read them. */
export function jwtOption() {
  return z.strictObject(
    {
      connection: connectionName(),
      keys: z
        .array(signingKey(), { error: KEYS_RULE })
        .min(1, KEYS_RULE)
        .superRefine((keys, ctx) => {
          const seen = new Set<string>();
          keys.forEach((k, i) => {
            if (seen.has(k.kid)) ctx.addIssue({ code: 'custom', path: [i, 'kid'], message: `"${k.kid}" is listed twice` });
            seen.add(k.kid);
          });
        }),
      revoked: z
        .union([opt.fn<(token: JwtTokenInfo) => boolean | Promise<boolean>>(), z.strictObject({ kids: names(), jtis: names() })], { error: 'must be {kids?, jtis?} or a function' })
        .optional(),
      clockToleranceSec: opt.int({ min: 0, max: 3600, unit: 's' }).default(30),
      issuer: opt.text().optional(),
    },
    { error: 'must be {connection, keys, revoked?, clockToleranceSec?, issuer?}' },
  );
}

function parseKeys(keys: ReadonlyArray<z.output<ReturnType<typeof signingKey>>>): Map<string, ParsedKey> {
  return new Map(keys.map((k) => [k.kid, { secret: k.secret, algorithm: k.algorithm, notAfter: k.notAfter === undefined ? Number.POSITIVE_INFINITY : instantOf(k.notAfter) }]));
}

/** What a token's rate limit counts by: its connection, so that every token of one caller shares one limit. */
function limitKeyOf(connection: string): string {
  return `jwt:${connection}`;
}

/**
 * A `KeyVerifier` for SvcKeys that are JWTs. A token is accepted when its header `kid` names a
 * configured key, its `alg` is that key's pinned algorithm (so `none` and HMAC-with-a-public-key
 * are refused), the signature verifies, it carries an `exp` that has not passed, its `connection`
 * claim is this store's, and neither its `kid` nor its `jti` is revoked. Checks that touch the
 * signature never depend on unverified claims. Rate limits count per connection, so a caller
 * cannot widen its limit by minting more tokens.
 *
 * @example Two keys during a rotation; `k2024` retires at the end of the overlap:
 * ```ts
 * const keyVerifier = jwtKeyVerifier({
 *   connection: 'store-42',
 *   keys: [
 *     { kid: 'k2025', secret: process.env.JWT_SECRET_K2025! },
 *     { kid: 'k2024', secret: process.env.JWT_SECRET_K2024!, notAfter: '2025-02-01T00:00:00Z' },
 *   ],
 *   revoked: { jtis: ['leaked-token-id'] },
 * });
 * app.use('/sync', createStoreRouter({ adapter, keyVerifier, cursorSecret: process.env.CURSOR_SECRET! }));
 * ```
 */
export function jwtKeyVerifier(options: JwtKeyOptions, option = 'jwt'): KeyVerifier {
  const o = readOption(option, jwtOption(), options);
  const { connection, clockToleranceSec: tolerance, issuer, revoked } = o;
  const keys = parseKeys(o.keys);
  let isRevoked: (t: JwtTokenInfo) => boolean | Promise<boolean>;
  if (revoked === undefined) isRevoked = () => false;
  else if (typeof revoked === 'function') isRevoked = revoked;
  else {
    const kids = new Set(revoked.kids ?? []);
    const jtis = new Set(revoked.jtis ?? []);
    isRevoked = (t) => kids.has(t.kid) || (t.jti !== undefined && jtis.has(t.jti));
  }

  return {
    async verify(presented, now): Promise<KeyVerdict> {
      // Only the header is read before the signature check, and only to pick the key.
      const decoded = jwt.decode(presented, { complete: true });
      if (!decoded || typeof decoded.header.kid !== 'string') return { ok: false, reason: 'unknown' };
      const kid = decoded.header.kid;
      const key = keys.get(kid);
      if (!key || decoded.header.alg !== key.algorithm) return { ok: false, reason: 'unknown' };
      let payload: JwtPayload;
      try {
        payload = jwt.verify(presented, key.secret, {
          algorithms: [key.algorithm as Algorithm],
          clockTimestamp: Math.floor(now / 1000),
          clockTolerance: tolerance,
          ...(issuer ? { issuer } : {}),
        }) as JwtPayload;
      } catch (err) {
        return { ok: false, reason: (err as Error).name === 'TokenExpiredError' ? 'expired' : 'unknown' };
      }
      if (typeof payload !== 'object' || payload.connection !== connection) return { ok: false, reason: 'unknown' };
      if (typeof payload.exp !== 'number') return { ok: false, reason: 'unknown' };
      if (now >= key.notAfter) return { ok: false, reason: 'expired' };
      const jti = typeof payload.jti === 'string' ? payload.jti : undefined;
      if (await isRevoked({ kid, jti, connection })) return { ok: false, reason: 'revoked' };
      return { ok: true, keyId: jti ? `jwt:${kid}:${jti}` : `jwt:${kid}`, limitKey: limitKeyOf(connection) };
    },
  };
}

export interface IssueSvcKeyOptions {
  /** The connection the token is for (its `connection` claim). */
  readonly connection: string;
  /** The signing key's id (the token header's `kid`). */
  readonly kid: string;
  /** HMAC secret, or a PEM private key for RS*, PS*, ES*. */
  readonly secret: string | Buffer;
  /** Lifetime: seconds, or a duration like `"30d"`, `"12h"`. Required: SvcKeys always expire. */
  readonly expiresIn: number | string;
  /** Default `HS256`; must match the algorithm the verifier pins for this `kid`. */
  readonly algorithm?: JwtAlgorithm;
  /** Token id (`jti`), what revoking one token names. Default: random. */
  readonly jti?: string;
  readonly issuer?: string;
}

const EXPIRES_RULE = 'must be a positive number of seconds or a duration like "30d"';
const parseIssueOptions = defineOptions('issueSvcKey', {
  connection: connectionName(),
  kid: z.string({ error: KID_RULE }),
  secret: z.union([z.string(), z.instanceof(Buffer)], { error: 'must be a string or Buffer' }),
  expiresIn: z.union([z.number().int(EXPIRES_RULE).min(1, EXPIRES_RULE).max(Number.MAX_SAFE_INTEGER, EXPIRES_RULE), z.string().regex(/^\d+\s*[a-z]*$/i, EXPIRES_RULE)], { error: EXPIRES_RULE }),
  algorithm: opt.oneOf(JWT_ALGORITHMS).default('HS256'),
  jti: opt.text().optional(),
  issuer: opt.text().optional(),
});

/**
 * Issues a JWT SvcKey for a connection, signed with one of the store's keys.
 *
 * @example
 * ```ts
 * const svcKey = issueSvcKey({ connection: 'store-42', kid: 'k2025', secret: process.env.JWT_SECRET_K2025!, expiresIn: '90d' });
 * // hand svcKey to the sync service: it sends it as the SvcKey header
 * ```
 */
export function issueSvcKey(options: IssueSvcKeyOptions): string {
  const o = parseIssueOptions(options);
  const { algorithm, secret } = o;
  // The same checks as a verifying key (named as the options: `kid`, `secret`), except that an
  // asymmetric key here is the private one.
  readOption('', signingKey(), { kid: o.kid, secret: algorithm.startsWith('HS') ? secret : PUBLIC_PLACEHOLDER, algorithm });
  if (!algorithm.startsWith('HS') && !PEM.test(secret.toString())) throw new InvalidOptionError('secret', `${algorithm} needs a PEM private key`);
  const jti = o.jti ?? randomBytes(16).toString('base64url');
  return jwt.sign({ connection: o.connection }, secret, {
    algorithm: algorithm as Algorithm,
    keyid: o.kid,
    expiresIn: o.expiresIn as jwt.SignOptions['expiresIn'],
    jwtid: jti,
    ...(o.issuer ? { issuer: o.issuer } : {}),
  });
}


/**
 * Accepts a key when any of the verifiers does (in order): static keys beside JWTs, or two key
 * services during a migration. The first acceptance wins; when all refuse, the most telling
 * refusal is answered (`revoked`, then `expired`, then `unknown`).
 *
 * @example
 * ```ts
 * const keyVerifier = anyKeyVerifier(staticKeyVerifier([process.env.SVC_KEY!]), jwtKeyVerifier({ connection: 'store-42', keys }));
 * ```
 */
export function anyKeyVerifier(...verifiers: KeyVerifier[]): KeyVerifier {
  const VERIFIERS_RULE = 'must be at least one object with a verify(presented, now) method';
  readOption('verifiers', z.array(opt.object<KeyVerifier>(VERIFIERS_RULE, (v) => typeof (v as KeyVerifier).verify === 'function')).min(1, VERIFIERS_RULE), verifiers);
  const rank = { unknown: 0, expired: 1, revoked: 2 } as const;
  return {
    async verify(presented, now) {
      let refusal: KeyVerdict & { ok: false } = { ok: false, reason: 'unknown' };
      for (const v of verifiers) {
        const verdict = await v.verify(presented, now);
        if (verdict.ok) return verdict;
        if (rank[verdict.reason] > rank[refusal.reason]) refusal = verdict;
      }
      return refusal;
    },
  };
}
