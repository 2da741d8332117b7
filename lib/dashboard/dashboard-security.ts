/**
 * Who may read the dashboard and act through it, framework-free.
 *
 * - **No token** (the default): loopback clients only, and the `Host` header must name a loopback
 *   host (`127.0.0.1`, `localhost`, `[::1]`), so a web page cannot reach the dashboard through DNS
 *   rebinding.
 * - **Operator token**: every request needs it, as `Authorization: Bearer TOKEN` (scripts) or the
 *   session cookie set by the login form (browsers). The cookie holds an HMAC derived from the
 *   token, never the token.
 * - **Actions** are POSTs. A browser's POST (cookie or loopback trust) must come from the
 *   dashboard's own origin (`Origin`, else `Referer`) and carry the synchronizer token of its form:
 *   an HMAC of the browser's random `sb_dash_csrf` cookie under a server secret. A Bearer request
 *   carries no ambient credential, so it needs neither; nor does a JSON POST without `Origin` (a
 *   script: no browser sends `application/json` across sites without a CORS preflight, which the
 *   dashboard never answers).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type Headers = Record<string, string | string[] | undefined>;

const LOOPBACK_ADDRESS = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?$/i;
export const CSRF_COOKIE = 'sb_dash_csrf';
export const SESSION_COOKIE = 'sb_dash_session';
/** The smallest operator token accepted (characters). */
export const MIN_TOKEN_LENGTH = 16;

/** Whether `token` may be an operator token: at least `MIN_TOKEN_LENGTH` visible ASCII characters. */
export function isValidOperatorToken(token: string): boolean {
  return token.length >= MIN_TOKEN_LENGTH && /^[\x21-\x7e]+$/.test(token);
}

export function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function parseCookies(headers: Headers): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header(headers, 'cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

function sameText(a: string, b: string): boolean {
  // Digest both sides: equal lengths for timingSafeEqual, and no early exit on the first difference.
  const h = (s: string) => createHmac('sha256', 'storebridge-dashboard-compare').update(s, 'utf8').digest();
  return timingSafeEqual(h(a), h(b));
}

export type AccessDecision =
  | { ok: true; bearer: boolean }
  | { ok: false; status: 401 | 403; error: string; login: boolean };

export interface DashboardSecurity {
  readonly tokenRequired: boolean;
  /** May this request read the dashboard? */
  access(req: { headers: Headers; remoteAddress?: string }): AccessDecision;
  /** The synchronizer token for a browser's CSRF cookie value. */
  csrfFor(nonce: string): string;
  /** A new CSRF cookie value. */
  newNonce(): string;
  /** Why a state-changing request is refused (origin or synchronizer token), or undefined when it may go on. */
  checkPost(req: { headers: Headers }, formToken: string | undefined, bearer: boolean): string | undefined;
  /** Whether `candidate` is the operator token (constant time). */
  isToken(candidate: string): boolean;
  /** The session cookie value a correct login sets. */
  sessionValue(): string;
}

export function createDashboardSecurity(token: string | undefined): DashboardSecurity {
  const derive = (label: string) => createHmac('sha256', token!).update(label).digest('base64url');
  // With a token, every replica derives the same secrets; without, a random one per process.
  const csrfSecret = token ? derive('storebridge-dashboard-csrf') : randomBytes(32).toString('base64url');
  const session = token ? derive('storebridge-dashboard-session') : '';
  const csrfFor = (nonce: string) => createHmac('sha256', csrfSecret).update(nonce).digest('base64url');

  function bearerOk(headers: Headers): boolean {
    const auth = header(headers, 'authorization') ?? '';
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    return Boolean(token && m && sameText(m[1], token));
  }

  return {
    tokenRequired: Boolean(token),
    access(req) {
      if (token) {
        if (bearerOk(req.headers)) return { ok: true, bearer: true };
        const cookie = parseCookies(req.headers).get(SESSION_COOKIE);
        if (cookie && sameText(cookie, session)) return { ok: true, bearer: false };
        return { ok: false, status: 401, error: 'the dashboard needs the operator token (log in, or send Authorization: Bearer TOKEN)', login: true };
      }
      if (!LOOPBACK_ADDRESS.test(req.remoteAddress ?? '')) {
        return { ok: false, status: 403, error: 'the dashboard answers loopback clients only; give it an operator token to serve other hosts', login: false };
      }
      if (!LOOPBACK_HOST.test(header(req.headers, 'host') ?? '')) {
        return { ok: false, status: 403, error: 'the Host header must name a loopback host (127.0.0.1, localhost or [::1]) without an operator token', login: false };
      }
      return { ok: true, bearer: false };
    },
    csrfFor,
    newNonce: () => randomBytes(18).toString('base64url'),
    checkPost(req, formToken, bearer) {
      if (bearer) return undefined;
      const host = header(req.headers, 'host');
      // A JSON body cannot come from another site's form, and another site's script cannot send one
      // without a CORS preflight, which the dashboard never grants: a script (curl) needs no form token.
      const json = /^application\/json\s*(;|$)/i.test(header(req.headers, 'content-type') ?? '');
      if (json && header(req.headers, 'origin') === undefined) return undefined;
      const origin = header(req.headers, 'origin') ?? header(req.headers, 'referer');
      let from: string | undefined;
      try {
        from = origin && origin !== 'null' ? new URL(origin).host : undefined;
      } catch {
        from = undefined;
      }
      if (!host || !from || from.toLowerCase() !== host.toLowerCase()) return 'the request does not come from the dashboard\'s own page (Origin check)';
      const nonce = parseCookies(req.headers).get(CSRF_COOKIE);
      if (!nonce || !formToken || !sameText(formToken, csrfFor(nonce))) return 'the form\'s security token is missing or stale: reload the page and try again';
      return undefined;
    },
    isToken: (candidate) => Boolean(token) && sameText(candidate, token!),
    sessionValue: () => session,
  };
}
