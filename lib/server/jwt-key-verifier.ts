/**
 * SvcKeys that are signed tokens (JWTs, via jsonwebtoken): each names its connection, expires, and
 * says which signing key (`kid`) made it, so keys rotate with overlap and single tokens or whole
 * signing keys can be revoked without redeploying every caller. `docs/keys.md` has the procedure.
 */
import { randomBytes } from 'node:crypto';
import jwt, { type Algorithm, type JwtPayload } from 'jsonwebtoken';
import { InvalidOptionError } from '../errors';
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

function instant(option: string, value: Date | number | string | undefined): number {
  if (value === undefined) return Number.POSITIVE_INFINITY;
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : value;
  if (typeof ms !== 'number' || Number.isNaN(ms)) throw new InvalidOptionError(option, 'expected a Date, Unix milliseconds or an ISO 8601 string');
  return ms;
}

function parseKeys(keys: ReadonlyArray<JwtSigningKey>, option: string): Map<string, ParsedKey> {
  if (!Array.isArray(keys) || keys.length === 0) throw new InvalidOptionError(option, 'expected a non-empty array of {kid, secret, algorithm?, notAfter?}');
  const out = new Map<string, ParsedKey>();
  keys.forEach((k, i) => {
    const where = `${option}[${i}]`;
    if (!k || typeof k !== 'object') throw new InvalidOptionError(where, 'expected {kid, secret, algorithm?, notAfter?}');
    if (typeof k.kid !== 'string' || !/^[\x21-\x7e]{1,100}$/.test(k.kid)) throw new InvalidOptionError(`${where}.kid`, 'expected 1 to 100 visible ASCII characters');
    if (out.has(k.kid)) throw new InvalidOptionError(`${where}.kid`, `"${k.kid}" is listed twice`);
    const algorithm = k.algorithm ?? 'HS256';
    if (!(JWT_ALGORITHMS as readonly string[]).includes(algorithm)) {
      throw new InvalidOptionError(`${where}.algorithm`, `expected one of ${JWT_ALGORITHMS.join(', ')}`);
    }
    if (!(typeof k.secret === 'string' || Buffer.isBuffer(k.secret))) throw new InvalidOptionError(`${where}.secret`, 'expected a string or Buffer');
    const isPem = PEM.test(k.secret.toString());
    if (algorithm.startsWith('HS')) {
      if (isPem) throw new InvalidOptionError(`${where}.secret`, `a PEM key cannot be an ${algorithm} secret (pin the key's own algorithm, e.g. RS256)`);
      if (Buffer.byteLength(k.secret) < 32) throw new InvalidOptionError(`${where}.secret`, `an ${algorithm} secret must be at least 32 bytes`);
    } else if (!isPem) {
      throw new InvalidOptionError(`${where}.secret`, `${algorithm} needs a PEM public key`);
    }
    out.set(k.kid, { secret: k.secret, algorithm, notAfter: instant(`${where}.notAfter`, k.notAfter) });
  });
  return out;
}

function parseConnection(value: unknown, option: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 200) throw new InvalidOptionError(option, 'expected a non-empty string of at most 200 characters');
  return value;
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
  if (!options || typeof options !== 'object') throw new InvalidOptionError(option, 'expected {connection, keys, revoked?, clockToleranceSec?, issuer?}');
  const connection = parseConnection(options.connection, `${option}.connection`);
  const keys = parseKeys(options.keys, `${option}.keys`);
  const tolerance = options.clockToleranceSec ?? 30;
  if (!Number.isSafeInteger(tolerance) || tolerance < 0 || tolerance > 3600) throw new InvalidOptionError(`${option}.clockToleranceSec`, 'expected an integer from 0 to 3600');
  if (options.issuer !== undefined && (typeof options.issuer !== 'string' || options.issuer === '')) throw new InvalidOptionError(`${option}.issuer`, 'expected a non-empty string');

  const revoked = options.revoked;
  let isRevoked: (t: JwtTokenInfo) => boolean | Promise<boolean>;
  if (revoked === undefined) isRevoked = () => false;
  else if (typeof revoked === 'function') isRevoked = revoked;
  else if (typeof revoked === 'object' && revoked !== null) {
    const kids = new Set(revoked.kids ?? []);
    const jtis = new Set(revoked.jtis ?? []);
    for (const [name, list] of [['kids', revoked.kids], ['jtis', revoked.jtis]] as const) {
      if (list !== undefined && (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && s !== ''))) {
        throw new InvalidOptionError(`${option}.revoked.${name}`, 'expected an array of non-empty strings');
      }
    }
    isRevoked = (t) => kids.has(t.kid) || (t.jti !== undefined && jtis.has(t.jti));
  } else throw new InvalidOptionError(`${option}.revoked`, 'expected {kids?, jtis?} or a function');

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
          ...(options.issuer ? { issuer: options.issuer } : {}),
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
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'expected {connection, kid, secret, expiresIn}');
  const connection = parseConnection(options.connection, 'connection');
  const algorithm = options.algorithm ?? 'HS256';
  // The same checks as a verifying key, except that an asymmetric key here is the private one.
  const key = parseKeys([{ kid: options.kid, secret: algorithm.startsWith('HS') ? options.secret : PUBLIC_PLACEHOLDER, algorithm }], 'issueSvcKey.key').get(options.kid)!;
  if (!algorithm.startsWith('HS') && !PEM.test(String(options.secret))) throw new InvalidOptionError('secret', `${algorithm} needs a PEM private key`);
  const ei = options.expiresIn;
  if (!((typeof ei === 'number' && Number.isSafeInteger(ei) && ei > 0) || (typeof ei === 'string' && /^\d+\s*[a-z]*$/i.test(ei)))) {
    throw new InvalidOptionError('expiresIn', 'expected a positive number of seconds or a duration like "30d"');
  }
  if (options.jti !== undefined && (typeof options.jti !== 'string' || options.jti === '')) throw new InvalidOptionError('jti', 'expected a non-empty string');
  const jti = options.jti ?? randomBytes(16).toString('base64url');
  return jwt.sign({ connection }, options.secret, {
    algorithm: key.algorithm as Algorithm,
    keyid: options.kid,
    expiresIn: ei as jwt.SignOptions['expiresIn'],
    jwtid: jti,
    ...(options.issuer ? { issuer: options.issuer } : {}),
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
  if (verifiers.length === 0 || !verifiers.every((v) => v && typeof v.verify === 'function')) {
    throw new InvalidOptionError('verifiers', 'expected at least one object with a verify(presented, now) method');
  }
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
