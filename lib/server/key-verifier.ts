/**
 * The SvcKey check, behind a small interface so other schemes (signed tokens, a key service) can
 * replace the static list without touching the router.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { opt, readOption } from '../options';

/**
 * The outcome of one key check. `keyId` names the key in logs; it is never the key itself.
 * `limitKey`, when given, is what the per-key rate limit counts by (e.g. a connection, so that
 * several tokens of one caller share one limit); default: the presented key. It is hashed before use.
 */
export type KeyVerdict =
  | { readonly ok: true; readonly keyId: string; readonly limitKey?: string }
  | { readonly ok: false; readonly reason: 'unknown' | 'expired' | 'revoked' };

/**
 * Decides whether a presented `SvcKey` header value is valid now. Implementations must not log or
 * echo the presented value, and should compare in constant time.
 *
 * @example A verifier that accepts keys listed in a database table:
 * ```ts
 * const verifier: KeyVerifier = {
 *   async verify(presented, now) {
 *     const row = await db.keys.findByDigest(sha256(presented));
 *     if (!row) return { ok: false, reason: 'unknown' };
 *     if (row.expiresAt <= now) return { ok: false, reason: 'expired' };
 *     return { ok: true, keyId: row.id };
 *   },
 * };
 * app.use('/sync', createStoreRouter({ adapter, keyVerifier: verifier, cursorSecret: process.env.CURSOR_SECRET! }));
 * ```
 */
export interface KeyVerifier {
  verify(presented: string, now: number): KeyVerdict | Promise<KeyVerdict>;
}

/** One configured key: the key, an optional name for logs, an optional expiry. */
export interface SvcKeyEntry {
  readonly key: string;
  /** Shown in logs instead of the key. Default: `key-` and the first 8 hex digits of its SHA-256. */
  readonly id?: string;
  /** The key is refused from this instant on (a `Date`, Unix ms, or an ISO 8601 string). */
  readonly expiresAt?: Date | number | string;
}

export type SvcKeyOption = string | SvcKeyEntry;

interface StaticKey {
  readonly digest: Buffer;
  readonly keyId: string;
  readonly expiresAt: number;
}

/** SHA-256 of a key: what is compared, and (hex) what rate limits are keyed by. */
export function keyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Header values a key may hold: visible ASCII, no spaces (HTTP trims and folds the rest). */
const KEY_PATTERN = /^[\x21-\x7e]+$/;

/**
 * The default verifier: a fixed list of keys, several active at once for rotation, each optionally
 * expiring. Both sides are digested (SHA-256) and every configured key is compared with
 * `timingSafeEqual`, with no early exit, so neither the length nor the position of a match leaks.
 *
 * @example
 * ```ts
 * const verifier = staticKeyVerifier([process.env.SVC_KEY!, { key: process.env.OLD_KEY!, id: 'old', expiresAt: '2026-12-31T00:00:00Z' }]);
 * ```
 */
export function staticKeyVerifier(keys: ReadonlyArray<SvcKeyOption>, option = 'svcKeys'): KeyVerifier & { readonly keyMaterial: string[] } {
  const list = parseSvcKeys(keys, option);
  return {
    keyMaterial: list.material,
    verify(presented, now) {
      const digest = keyDigest(presented);
      let match: StaticKey | undefined;
      for (const k of list.keys) {
        if (timingSafeEqual(digest, k.digest)) match = k;
      }
      if (!match) return { ok: false, reason: 'unknown' };
      if (now >= match.expiresAt) return { ok: false, reason: 'expired' };
      return { ok: true, keyId: match.keyId };
    },
  };
}

const KEY_RULE = 'must be a non-empty string of visible ASCII characters (no spaces)';
const KEYS_RULE = 'must be a non-empty array of keys (strings or {key, id?, expiresAt?})';
const EXPIRY_RULE = 'must be a Date, Unix milliseconds or an ISO 8601 string';
const keyText = z.string({ error: KEY_RULE }).regex(KEY_PATTERN, KEY_RULE);

/** An expiry as given (a `Date`, Unix ms, an ISO 8601 string) in Unix ms; `NaN` when it is none. */
function expiryOf(v: unknown): number {
  return v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : typeof v === 'number' ? v : Number.NaN;
}

/** The `svcKeys` option: each entry a key, or `{key, id?, expiresAt?}`; a bad entry is named by its index (`svcKeys.1.expiresAt`). */
export function svcKeysOption() {
  const entry = z.union(
    [
      keyText,
      z.strictObject({
        key: keyText,
        id: opt.text().optional(),
        // A refinement, not a custom type: the union then names the member at fault.
        expiresAt: z
          .union([z.date(), z.number(), z.string()], { error: EXPIRY_RULE })
          .refine((v) => !Number.isNaN(expiryOf(v)), EXPIRY_RULE)
          .optional(),
      }),
    ],
    { error: 'must be a string or {key, id?, expiresAt?}' },
  );
  return z.array(entry, { error: KEYS_RULE }).min(1, KEYS_RULE);
}

function parseSvcKeys(keys: ReadonlyArray<SvcKeyOption>, option: string): { keys: StaticKey[]; material: string[] } {
  const out: StaticKey[] = [];
  const material: string[] = [];
  for (const entry of readOption(option, svcKeysOption(), keys)) {
    const e: SvcKeyEntry = typeof entry === 'string' ? { key: entry } : entry;
    const expiresAt = e.expiresAt === undefined ? Number.POSITIVE_INFINITY : expiryOf(e.expiresAt);
    const digest = keyDigest(e.key);
    out.push({ digest, keyId: e.id ?? `key-${digest.toString('hex').slice(0, 8)}`, expiresAt });
    material.push(e.key);
  }
  return { keys: out, material };
}
