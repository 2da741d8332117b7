/**
 * The dashboard, framework-free: `handle()` takes one request (method, path below the mount point,
 * query, headers, body text, client address) and answers `{status, headers, body}`. Bindings
 * (`express/dashboard-router.ts`) only read the body and send the answer; every rule — access,
 * CSRF, routes, rendering — lives here.
 *
 * Routes (below the mount point): `GET /` (the overview), `GET /connections/NAME`, `GET
 * /reverse/N/NAME`, `GET /api/overview` and `GET /api/connections/NAME` (the same data as JSON),
 * `GET /assets/…`, `GET|POST /login`, `POST /logout`, `POST /actions/(run-now|pause|resume|
 * reverse-push|reverse-pull)`.
 */
import { z } from 'zod';
import { defineOptions, opt } from '../options';
import { runActionOrReject, type ActionOutcome } from './dashboard-actions';
import { readReverseSections, readSyncConnection, readSyncSection, type DataConfig, type FailureContext } from './dashboard-data';
import type { ReverseSource, SyncSource } from './dashboard-sources';
import { createDashboardSecurity, CSRF_COOKIE, header, isValidOperatorToken, MIN_TOKEN_LENGTH, parseCookies, SESSION_COOKIE, type AccessDecision, type DashboardSecurity, type Headers } from './dashboard-security';
import { DASHBOARD_CSS, DASHBOARD_JS } from './html/assets';
import { html, type SafeHtml } from './html/html';
import { errorPage, layout, loginPage, mainContent } from './html/layout';
import { reverseConnectionPage, reverseSection } from './html/reverse-pages';
import { syncConnectionPage, syncSection, type PageContext } from './html/sync-pages';

export interface DashboardOptions {
  /** The sync service's connections: `createRedisSyncSource(…)` or `createStateFileSource(file)`. */
  sync?: SyncSource;
  /** Reverse services: `createReverseHttpSource(url)` for each. */
  reverse?: readonly ReverseSource[];
  /**
   * The operator token. Without it the dashboard answers loopback clients only; with it every
   * request needs it (Bearer header or the login form's cookie). At least 16 characters.
   */
  token?: string;
  /** Shown in the header and the title. Default `storebridge`. */
  title?: string;
  /** How often the optional script refreshes the page (ms); 0: never. Default 5,000. */
  refreshMs?: number;
  /** Connections per page of the overview. Default 100. */
  pageSize?: number;
  /** Runs in a row's small chart. Default 20. */
  historyRuns?: number;
  /** Time limit of each source read (ms). Default 5,000. */
  sourceTimeoutMs?: number;
  /** Whether a binding serves the raw queue view at `/jobs/` (adds the link). Default false. */
  jobs?: boolean;
  /**
   * Told about source failures, with the words the page shows (`context.message`: `Redis … cannot
   * be reached (ECONNREFUSED)`). Messages never hold a key or the token.
   */
  onError?: (error: unknown, context: FailureContext) => void;
  /** The clock (Unix ms), for tests. */
  now?: () => number;
}

/** One request, as a binding hands it over. */
export interface DashboardRequest {
  method: string;
  /** The path below the mount point, still percent-encoded, e.g. `/connections/shop-1`. */
  path: string;
  /** The query string without `?`. */
  query?: string;
  headers: Headers;
  /** The request body as text (forms: `application/x-www-form-urlencoded`; scripts: JSON). */
  body?: string;
  remoteAddress?: string;
  /** Where the dashboard is mounted (`''` at the root, `/ops` …), for links. */
  base?: string;
  /** Whether the request came over HTTPS (cookies are then `Secure`). */
  secure?: boolean;
}

export interface DashboardResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

export interface Dashboard {
  handle(request: DashboardRequest): Promise<DashboardResponse>;
  /** For routes a binding serves itself (the jobs view): undefined when allowed, else the refusal to send. */
  authorize(request: DashboardRequest): DashboardResponse | undefined;
  readonly options: Readonly<Required<Pick<DashboardOptions, 'title' | 'refreshMs' | 'jobs'>>>;
  /** Closes the sources (Redis connections). */
  close(): Promise<void>;
}

const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const SECURITY_HEADERS = { 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin', 'x-frame-options': 'DENY', 'cache-control': 'no-store' };
const FLASH_COOKIE = 'sb_dash_flash';
/** Wrong tokens accepted per minute (per process) before the login form answers 429. */
const MAX_LOGIN_FAILURES = 10;
const TOKEN_RULE = `must be at least ${MIN_TOKEN_LENGTH} visible ASCII characters (the value is not shown)`;

/** The dashboard's options, declared once (`lib/options.ts`); a binding adds its own (`DASHBOARD_OPTIONS`). */
export const DASHBOARD_OPTIONS = {
  sync: opt.object<SyncSource>('a SyncSource', (s) => typeof (s as SyncSource).connections === 'function' && typeof (s as SyncSource).history === 'function').optional(),
  reverse: z
    .array(
      opt.object<ReverseSource>('a ReverseSource', (r) => typeof (r as ReverseSource).connections === 'function' && typeof (r as ReverseSource).queue === 'function'),
      { error: 'must be an array of ReverseSource' },
    )
    .default([]),
  token: z
    .string({ error: TOKEN_RULE })
    .refine((t) => isValidOperatorToken(t), TOKEN_RULE)
    .optional(),
  // An empty title is the default one.
  title: z.string({ error: 'must be a string' }).optional(),
  refreshMs: opt.int({ min: 0, max: 3_600_000, unit: 'ms' }).default(5_000),
  pageSize: opt.int({ min: 1, max: 100_000 }).default(100),
  historyRuns: opt.int({ min: 0, max: 1000 }).default(20),
  sourceTimeoutMs: opt.int({ min: 1, max: 600_000, unit: 'ms' }).default(5_000),
  jobs: opt.boolean().optional(),
  onError: opt.fn<NonNullable<DashboardOptions['onError']>>().optional(),
  now: opt.fn<() => number>('a function returning Unix milliseconds').optional(),
};
const parseOptions = defineOptions('createDashboard', DASHBOARD_OPTIONS);

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

const wantsHtml = (headers: Headers) => /text\/html/.test(header(headers, 'accept') ?? '');

export function respond(status: number, body: string, type: string, extra: Record<string, string | string[]> = {}): DashboardResponse {
  return { status, headers: { ...SECURITY_HEADERS, 'content-type': type, ...extra }, body };
}

const withCookies = (setCookies: string[]): Record<string, string[]> => (setCookies.length ? { 'set-cookie': setCookies } : {});

function json(status: number, body: unknown, extra: Record<string, string | string[]> = {}): DashboardResponse {
  return respond(status, JSON.stringify(body), 'application/json; charset=utf-8', extra);
}

/**
 * @example
 * ```ts
 * import { createDashboard, createRedisSyncSource } from 'storebridge/dashboard';
 * const dashboard = createDashboard({ sync: createRedisSyncSource({ connection: 'redis://127.0.0.1:6379' }) });
 * const answer = await dashboard.handle({ method: 'GET', path: '/api/overview', headers: { host: '127.0.0.1' }, remoteAddress: '127.0.0.1' });
 * ```
 */
export function createDashboard(options: DashboardOptions = {}): Dashboard {
  const o = parseOptions(options);
  const { token, reverse, historyRuns } = o;
  const settings = {
    title: o.title || 'storebridge',
    refreshMs: o.refreshMs,
    jobs: Boolean(o.jobs),
  };
  const data: DataConfig = {
    sync: o.sync,
    reverse,
    timeoutMs: o.sourceTimeoutMs,
    pageSize: o.pageSize,
    onError: (err, ctx) => {
      try {
        o.onError?.(err, ctx);
      } catch {
        // A throwing log hook must not break a page.
      }
    },
  };
  const core = new DashboardCore(settings, historyRuns, data, createDashboardSecurity(token), o.now ?? Date.now);
  return {
    options: settings,
    authorize: (req) => core.authorize(req),
    handle: (req) => core.handle(req),
    async close() {
      await o.sync?.close?.();
    },
  };
}

/** The dashboard's rules and routes; `createDashboard` checks the options and exposes `handle`/`authorize`. */
class DashboardCore {
  constructor(
    readonly settings: Dashboard['options'],
    private readonly historyRuns: number,
    private readonly data: DataConfig,
    private readonly security: DashboardSecurity,
    private readonly now: () => number,
  ) {}

  /** When the last wrong tokens were tried (one minute's worth), to slow down guessing. */
  private loginFailures: number[] = [];

  refuse(req: DashboardRequest, status: number, error: string): DashboardResponse {
    if (wantsHtml(req.headers)) return respond(status, errorPage({ base: req.base ?? '', title: this.settings.title, status, error }), 'text/html; charset=utf-8');
    return json(status, { error });
  }

  cookie(req: DashboardRequest, name: string, value: string, maxAge?: number): string {
    // Secure when the page came over HTTPS (directly, or through a proxy that says so).
    const secure = req.secure || header(req.headers, 'x-forwarded-proto') === 'https';
    return `${name}=${value}; Path=${req.base || '/'}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}${maxAge !== undefined ? `; Max-Age=${maxAge}` : ''}`;
  }

  /** The page's synchronizer token, setting the browser's CSRF cookie when it has none. */
  csrfOf(req: DashboardRequest, setCookies: string[]): string {
    let nonce = parseCookies(req.headers).get(CSRF_COOKIE);
    if (!nonce || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce)) {
      nonce = this.security.newNonce();
      setCookies.push(this.cookie(req, CSRF_COOKIE, nonce));
    }
    return this.security.csrfFor(nonce);
  }

  page(req: DashboardRequest, ctx: PageContext, setCookies: string[], body: SafeHtml, status = 200): DashboardResponse {
    const cookies = parseCookies(req.headers);
    let notice: { text: string; bad?: boolean } | undefined;
    const flash = cookies.get(FLASH_COOKIE);
    if (flash) {
      try {
        const f = JSON.parse(Buffer.from(flash, 'base64url').toString('utf8')) as { text?: unknown; bad?: unknown };
        if (typeof f.text === 'string') notice = { text: f.text.slice(0, 500), bad: f.bad === true };
      } catch {
        // A mangled flash cookie is just dropped.
      }
      setCookies.push(this.cookie(req, FLASH_COOKIE, '', 0));
    }
    const extra = withCookies(setCookies);
    if (header(req.headers, 'x-dashboard-partial') === '1') return respond(status, mainContent({ generatedAt: ctx.now }, body).text, 'text/html; charset=utf-8', extra);
    const sections = { sync: this.data.sync !== undefined, reverse: this.data.reverse.length > 0 };
    const text = layout({ base: ctx.base, title: this.settings.title, jobs: this.settings.jobs, sections, logout: this.security.tokenRequired, csrf: ctx.csrf, refreshMs: this.settings.refreshMs, notice, generatedAt: ctx.now }, body);
    return respond(status, text, 'text/html; charset=utf-8', extra);
  }

  async overview(req: DashboardRequest, ctx: PageContext, setCookies: string[], asJson: boolean): Promise<DashboardResponse> {
    const q = new URLSearchParams(req.query ?? '');
    const offset = Math.max(0, Number.parseInt(q.get('offset') ?? '0', 10) || 0);
    const [sync, reverseSections] = await Promise.all([readSyncSection(this.data, offset, asJson ? 0 : this.historyRuns), readReverseSections(this.data)]);
    if (asJson) {
      const syncJson = sync && { label: sync.label, capabilities: sync.capabilities, total: sync.total, offset, ...(sync.error ? { error: sync.error } : {}), connections: sync.rows.map(({ history: _h, ...r }) => r) };
      return json(200, { generatedAt: new Date(ctx.now).toISOString(), sync: syncJson ?? null, reverse: reverseSections });
    }
    const body = html`${sync ? syncSection(ctx, sync) : ''}${reverseSections.map((s) => reverseSection(ctx, s))}${!sync && reverseSections.length === 0 ? html`<p class="unavailable">No source: start the dashboard with --redis URL, --state FILE or --reverse URL.</p>` : ''}`;
    return this.page(req, ctx, setCookies, body);
  }

  async syncDetail(req: DashboardRequest, ctx: PageContext, setCookies: string[], name: string, asJson: boolean): Promise<DashboardResponse> {
    const found = await readSyncConnection(this.data, name, 50);
    if (!found) return this.refuse(req, 404, 'this dashboard has no sync source');
    if (found.section.error) return asJson ? json(503, { error: found.section.error }) : this.page(req, ctx, setCookies, syncSection(ctx, found.section), 503);
    if (!found.row) return this.refuse(req, 404, `no sync connection is named "${name}"`);
    if (asJson) return json(200, found.row);
    return this.page(req, ctx, setCookies, syncConnectionPage(ctx, found.section, found.row));
  }

  async reverseDetail(req: DashboardRequest, ctx: PageContext, setCookies: string[], index: number, name: string): Promise<DashboardResponse> {
    const source = this.data.reverse[index];
    if (!source) return this.refuse(req, 404, 'no such reverse service');
    const [section] = await readReverseSections({ ...this.data, reverse: [source] });
    const s = { ...section, index };
    if (s.error) return this.page(req, ctx, setCookies, reverseSection(ctx, s), 503);
    const c = s.connections?.find((x) => x.name === name);
    if (!c) return this.refuse(req, 404, `reverse service ${source.label} has no connection named "${name}"`);
    return this.page(req, ctx, setCookies, reverseConnectionPage(ctx, s, c));
  }

  async get(req: DashboardRequest, segments: string[], ctx: PageContext, setCookies: string[]): Promise<DashboardResponse> {
    const [a, b, c] = segments;
    if (segments.length === 0) return this.overview(req, ctx, setCookies, false);
    if (a === 'api' && b === 'overview' && segments.length === 2) return this.overview(req, ctx, setCookies, true);
    if (a === 'api' && b === 'connections' && segments.length === 3) return this.syncDetail(req, ctx, setCookies, c, true);
    if (a === 'connections' && segments.length === 2) return this.syncDetail(req, ctx, setCookies, b, false);
    if (a === 'reverse' && segments.length === 3 && /^\d{1,3}$/.test(b)) return this.reverseDetail(req, ctx, setCookies, Number(b), c);
    return this.refuse(req, 404, 'not found');
  }

  finishAction(req: DashboardRequest, outcome: ActionOutcome, bearer: boolean): DashboardResponse {
    if (bearer || !wantsHtml(req.headers)) return json(outcome.status, outcome.body);
    // Post/redirect/get: the result is shown once, from a short-lived cookie (never from the URL).
    const flash = Buffer.from(JSON.stringify({ text: outcome.message, bad: outcome.status >= 400 }), 'utf8').toString('base64url');
    return respond(303, '', 'text/plain; charset=utf-8', { location: `${req.base ?? ''}/${outcome.back ?? ''}`, 'set-cookie': [this.cookie(req, FLASH_COOKIE, flash, 60)] });
  }

  async login(req: DashboardRequest, setCookies: string[]): Promise<DashboardResponse> {
    const base = req.base ?? '';
    if (!this.security.tokenRequired) return respond(303, '', 'text/plain; charset=utf-8', { location: `${base}/` });
    if (req.method.toUpperCase() === 'GET') return respond(200, loginPage({ base, title: this.settings.title, csrf: this.csrfOf(req, setCookies) }), 'text/html; charset=utf-8', withCookies(setCookies));
    const form = new URLSearchParams(req.body ?? '');
    const why = this.security.checkPost(req, form.get('csrf') ?? undefined, false);
    if (why) return this.refuse(req, 403, why);
    const t = this.now();
    this.loginFailures = this.loginFailures.filter((at) => at > t - 60_000);
    if (this.loginFailures.length >= MAX_LOGIN_FAILURES) return this.refuse(req, 429, 'too many wrong tokens in the last minute; wait a minute and try again');
    if (!this.security.isToken(form.get('token') ?? '')) {
      this.loginFailures.push(t);
      return respond(401, loginPage({ base, title: this.settings.title, csrf: this.csrfOf(req, setCookies), error: 'That is not the operator token.' }), 'text/html; charset=utf-8', withCookies(setCookies));
    }
    return respond(303, '', 'text/plain; charset=utf-8', { location: `${base}/`, 'set-cookie': [this.cookie(req, SESSION_COOKIE, this.security.sessionValue())] });
  }

  /** The answer to a request the security rules refuse: the login form for a browser's GET, else the refusal. */
  denied(req: DashboardRequest, access: Extract<AccessDecision, { ok: false }>): DashboardResponse {
    if (access.login && req.method.toUpperCase() === 'GET' && wantsHtml(req.headers)) return respond(303, '', 'text/plain; charset=utf-8', { location: `${req.base ?? ''}/login` });
    return this.refuse(req, access.status, access.error);
  }

  authorize(req: DashboardRequest): DashboardResponse | undefined {
    const access = this.security.access(req);
    const method = req.method.toUpperCase();
    if (!access.ok) return this.denied(req, access);
    // Routes served by a binding (the jobs view) post JSON from their own page: the origin check applies.
    if (method !== 'GET' && method !== 'HEAD' && !access.bearer) {
      const host = header(req.headers, 'host');
      const origin = header(req.headers, 'origin');
      if (!origin || !host || origin.replace(/^https?:\/\//, '').toLowerCase() !== host.toLowerCase()) return this.refuse(req, 403, 'the request does not come from the dashboard\'s own page (Origin check)');
    }
    return undefined;
  }

  async handle(req: DashboardRequest): Promise<DashboardResponse> {
    const method = req.method.toUpperCase();
    const segments = req.path.split('/').filter((s) => s !== '').map(decode);
    if (segments.some((s) => s === undefined)) return this.refuse(req, 400, 'the path is not valid percent-encoding');
    const seg = segments as string[];
    if (seg[0] === 'assets' && seg.length === 2 && (method === 'GET' || method === 'HEAD')) {
      if (seg[1] === 'dashboard.css') return respond(200, DASHBOARD_CSS, 'text/css; charset=utf-8');
      if (seg[1] === 'dashboard.js') return respond(200, DASHBOARD_JS, 'text/javascript; charset=utf-8');
      return this.refuse(req, 404, 'not found');
    }
    const setCookies: string[] = [];
    if (seg[0] === 'login' && seg.length === 1 && (method === 'GET' || method === 'POST')) return this.login(req, setCookies);
    const access = this.security.access(req);
    if (!access.ok) return this.denied(req, access);
    const ctx: PageContext = { base: req.base ?? '', csrf: this.csrfOf(req, setCookies), now: this.now() };
    if (method === 'GET' || method === 'HEAD') return this.get(req, seg, ctx, setCookies);
    if (method !== 'POST') return this.refuse(req, 405, 'use GET to read the dashboard and POST for its actions');
    if (seg[0] === 'logout' && seg.length === 1) {
      const why = this.security.checkPost(req, new URLSearchParams(req.body ?? '').get('csrf') ?? undefined, access.bearer);
      if (why) return this.refuse(req, 403, why);
      return respond(303, '', 'text/plain; charset=utf-8', { location: `${ctx.base}/login`, 'set-cookie': [this.cookie(req, SESSION_COOKIE, '', 0)] });
    }
    if (seg[0] === 'actions' && seg.length === 2) {
      const outcome = await runActionOrReject(this.data, this.security, req, seg[1], access.bearer);
      return this.finishAction(req, outcome, access.bearer);
    }
    return this.refuse(req, 404, 'not found');
  }
}
