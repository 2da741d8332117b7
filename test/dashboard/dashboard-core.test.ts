/**
 * The framework-free core: who may read and act (loopback and Host without a token; Bearer or the
 * login cookie with one), CSRF (origin and synchronizer token), escaping of every name and message,
 * errors in words, and the JSON view. The data is real: connections synced from a real store over
 * HTTP into a `MemorySyncHealth`; the client address is the one input faked (it is what a binding
 * reads from its socket).
 */
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createDashboard, createDashboardRouter, createHealthSyncSource, type Dashboard, type DashboardRequest, type DashboardResponse } from '../../lib/dashboard';
import { createSyncConnection, MemorySyncHealth } from '../../lib/sync';
import { startFakeStore, type FakeStore } from '../client/fake-store';

const KEY = 'core-test-store-key-8c1f0a';
const WRONG = 'core-test-wrong-key-55e2b9';
const TOKEN = 'core-test-operator-token-f00dfeed';
const EVIL = '<img/src=x/onerror=alert(1)>';

let store: FakeStore;
let health: MemorySyncHealth;
beforeAll(async () => {
  const { products, orders } = demoCatalog(12);
  store = await startFakeStore({ products, orders, key: KEY, pageSize: 5 });
  health = new MemorySyncHealth();
  for (const [id, key] of [['shop-a', KEY], ['shop-b', WRONG], [EVIL, KEY]] as const) {
    const conn = createSyncConnection({ id, client: { baseUrl: store.url, svcKey: key, retry: 0 }, sink: createMemoryAdapter(), observers: [health] });
    await conn.run();
    if (id === 'shop-a') await conn.run();
  }
});
afterAll(() => store.close());

const HOST = '127.0.0.1:4000';
function request(over: Partial<DashboardRequest> & { headers?: DashboardRequest['headers'] } = {}): DashboardRequest {
  return { method: 'GET', path: '/', remoteAddress: '127.0.0.1', base: '', ...over, headers: { host: HOST, accept: 'text/html', ...over.headers } };
}
const cookieOf = (res: DashboardResponse, name: string) => {
  const all = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const c = all.find((x) => x.startsWith(`${name}=`));
  return c?.slice(name.length + 1).split(';')[0];
};
const csrfIn = (body: string) => /name="csrf" value="([^"]+)"/.exec(body)?.[1];

describe('without a token: loopback only', () => {
  let d: Dashboard;
  beforeAll(() => (d = createDashboard({ sync: createHealthSyncSource(health) })));

  test('a loopback client reads the page; the table has every connection, failures in words, names escaped', async () => {
    const res = await d.handle(request());
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.body).toContain('data-connection="shop-a"');
    expect(res.body).toContain('The store refused the key (HTTP 401)');
    expect(res.body).not.toContain(EVIL);
    expect(res.body).toContain('&lt;img/src=x/onerror=alert(1)&gt;');
    expect(res.body).not.toMatch(/<script>|\son\w+=/i);
    for (const secret of [KEY, WRONG]) expect(res.body).not.toContain(secret);
    // An empty icon of its own (allowed by the CSP's img-src data:): a browser then asks for no /favicon.ico, a 404.
    expect(res.body).toContain('<link rel="icon" href="data:,">');
  });

  test('another client address, or a Host that is not loopback (DNS rebinding), is refused with 403 {error}', async () => {
    let res = await d.handle(request({ remoteAddress: '10.1.2.3', headers: { accept: 'application/json' } }));
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toEqual({ error: expect.stringContaining('loopback clients only') });
    res = await d.handle(request({ headers: { host: 'attacker.example:4000', accept: 'application/json' } }));
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toMatch(/Host header/);
    res = await d.handle(request({ headers: { host: 'localhost:4000' } }));
    expect(res.status).toBe(200);
  });

  test('the JSON view has the same rows (no history), and a connection\'s JSON has its history', async () => {
    const res = await d.handle(request({ path: '/api/overview', headers: { accept: 'application/json' } }));
    const body = JSON.parse(res.body);
    expect(body.sync.connections.map((c: { name: string }) => c.name)).toEqual([EVIL, 'shop-a', 'shop-b']);
    expect(body.sync.connections[1]).toMatchObject({ name: 'shop-a', lastRun: { outcome: 'ok', jobid: 2, products: { count: 12 } } });
    const one = JSON.parse((await d.handle(request({ path: '/api/connections/shop-a' }))).body);
    expect(one.history.map((r: { jobid: number }) => r.jobid)).toEqual([2, 1]);
    const missing = await d.handle(request({ path: '/api/connections/nope', headers: { accept: 'application/json' } }));
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ error: 'no sync connection is named "nope"' });
  });

  test('actions need the page\'s own origin and its synchronizer token; a refused one does nothing', async () => {
    // The queue is the one part stood in for here (runs are queued for real in the Redis suites).
    const queued: string[] = [];
    const source = { ...createHealthSyncSource(health), capabilities: { runNow: true, pause: false }, runNow: async (name: string) => (queued.push(name), `job-${queued.length}`) };
    const d = createDashboard({ sync: source });
    const page = await d.handle(request());
    const nonce = cookieOf(page, 'sb_dash_csrf')!;
    const csrf = csrfIn(page.body)!;
    expect(nonce).toBeTruthy();
    expect(csrf).toBeTruthy();
    const post = (headers: Record<string, string>, body: string) =>
      d.handle(request({ method: 'POST', path: '/actions/run-now', body, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers } }));
    const form = `connection=shop-a&csrf=${encodeURIComponent(csrf)}`;
    // No origin at all, a foreign one, no token, a token of another browser: all 403.
    expect((await post({ cookie: `sb_dash_csrf=${nonce}` }, form)).status).toBe(403);
    expect((await post({ cookie: `sb_dash_csrf=${nonce}`, origin: 'http://evil.example' }, form)).status).toBe(403);
    expect((await post({ cookie: `sb_dash_csrf=${nonce}`, origin: `http://${HOST}` }, 'connection=shop-a')).status).toBe(403);
    const other = await post({ cookie: 'sb_dash_csrf=AAAAAAAAAAAAAAAAAAAAAAAA', origin: `http://${HOST}` }, form);
    expect(other.status).toBe(403);
    expect(JSON.parse(other.body).error).toMatch(/security token/);
    expect(queued).toEqual([]);
    // The right origin and token: the action runs.
    const ok = await post({ cookie: `sb_dash_csrf=${nonce}`, origin: `http://${HOST}` }, form);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ ok: true, jobId: 'job-1', message: 'Queued a run of shop-a now (queue id job-1); the table shows it when it ends.' });
    expect(queued).toEqual(['shop-a']);
    const unknown = await post({ cookie: `sb_dash_csrf=${nonce}`, origin: `http://${HOST}` }, `connection=nope&csrf=${encodeURIComponent(csrf)}`);
    expect(unknown.status).toBe(404);
    expect(queued).toEqual(['shop-a']);
    // A script (curl) posts JSON without Origin and without form token; JSON from another origin is refused.
    expect((await post({ 'content-type': 'application/json' }, '{"connection":"shop-a"}')).status).toBe(200);
    expect((await post({ 'content-type': 'application/json', origin: 'http://evil.example' }, '{"connection":"shop-a"}')).status).toBe(403);
    expect(queued).toEqual(['shop-a', 'shop-a']);
    // From a browser: post/redirect/get, the result shown once from a cookie.
    const browser = await d.handle(request({ method: 'POST', path: '/actions/run-now', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `sb_dash_csrf=${nonce}`, referer: `http://${HOST}/` } }));
    expect(browser.status).toBe(303);
    const flash = cookieOf(browser, 'sb_dash_flash')!;
    const shown = await d.handle(request({ headers: { cookie: `sb_dash_csrf=${nonce}; sb_dash_flash=${flash}` } }));
    expect(shown.body).toContain('class="notice"');
    expect(shown.body).toContain('Queued a run of shop-a now (queue id job-3); the table shows it when it ends.');
    // Shown once: the page clears the cookie.
    expect(cookieOf(shown, 'sb_dash_flash')).toBe('');
  });

  test('unknown routes, methods and bad bodies are 4xx {error}', async () => {
    const json = { accept: 'application/json' };
    expect((await d.handle(request({ path: '/nope', headers: json }))).status).toBe(404);
    expect((await d.handle(request({ method: 'PUT', headers: json }))).status).toBe(405);
    expect((await d.handle(request({ path: '/%E0%A4%A', headers: json }))).status).toBe(400);
    const wrongType = await d.handle(request({ method: 'POST', path: '/actions/pause', body: 'x', headers: { ...json, 'content-type': 'text/plain' } }));
    expect(wrongType.status).toBe(415);
    expect(JSON.parse(wrongType.body).error).toMatch(/form/);
  });

  test('options are checked; a token shorter than 16 characters is refused without being shown', () => {
    expect(() => createDashboard({ token: 'short-secret' })).toThrow(/at least 16/);
    expect(() => createDashboard({ token: 'short-secret' })).not.toThrow(/short-secret/);
    expect(() => createDashboard({ refreshMs: -1 })).toThrow(/refreshMs/);
    expect(() => createDashboard({ sync: {} as never })).toThrow(/SyncSource/);
    expect(() => createDashboard({ pageSize: 0 })).toThrow('invalid option "pageSize": must be an integer from 1 to 100000');
    expect(() => createDashboard({ reverse: [{}] as never })).toThrow('invalid option "reverse.0": must be a ReverseSource');
    expect(() => createDashboard({ refreshMS: 0 } as never)).toThrow('invalid option "refreshMS": is not an option of createDashboard (did you mean "refreshMs"?)');
  });

  test('the Express binding reads its own options and the core\'s with the same policy', () => {
    expect(() => createDashboardRouter({ maxBodyBytes: 0 })).toThrow('invalid option "maxBodyBytes": must be an integer ≥ 1 (bytes)');
    expect(() => createDashboardRouter({ jobs: 'yes' } as never)).toThrow('invalid option "jobs": must be true, false or "auto"');
    expect(() => createDashboardRouter({ refreshMs: -1 })).toThrow(/"refreshMs": must be an integer from 0 to 3600000/);
    expect(() => createDashboardRouter({ jobsWriteable: true } as never)).toThrow('invalid option "jobsWriteable": is not an option of createDashboardRouter (did you mean "jobsWritable"?)');
    expect(() => createDashboardRouter({ jobs: true })).toThrow(/jobs view needs a sync source with a BullMQ queue/);
    expect(createDashboardRouter({ maxBodyBytes: 1024, jobsWritable: false, title: 'ops' }).dashboard.options.title).toBe('ops');
  });
});

describe('with an operator token', () => {
  let d: Dashboard;
  beforeAll(() => (d = createDashboard({ sync: createHealthSyncSource(health), token: TOKEN })));

  test('without it: a browser is sent to the login form, a script gets 401 {error}; any client address', async () => {
    const page = await d.handle(request({ remoteAddress: '192.0.2.7', headers: { host: 'ops.example.com' } }));
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe('/login');
    const api = await d.handle(request({ path: '/api/overview', remoteAddress: '192.0.2.7', headers: { host: 'ops.example.com', accept: 'application/json' } }));
    expect(api.status).toBe(401);
    expect(JSON.parse(api.body).error).toMatch(/operator token/);
  });

  test('Bearer works for scripts (actions without CSRF); a wrong one does not', async () => {
    const h = { host: 'ops.example.com', accept: 'application/json' };
    expect((await d.handle(request({ path: '/api/overview', headers: { ...h, authorization: `Bearer ${TOKEN}` } }))).status).toBe(200);
    expect((await d.handle(request({ path: '/api/overview', headers: { ...h, authorization: `Bearer ${TOKEN}x` } }))).status).toBe(401);
    const act = await d.handle(request({ method: 'POST', path: '/actions/pause', body: '{"connection":"shop-a"}', headers: { ...h, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } }));
    expect(act.status).toBe(409);
  });

  test('the login form sets a session cookie derived from the token (never the token); log out clears it', async () => {
    const h = { host: 'ops.example.com' };
    const form = await d.handle(request({ path: '/login', headers: h }));
    const nonce = cookieOf(form, 'sb_dash_csrf')!;
    const csrf = csrfIn(form.body)!;
    const login = (token: string) =>
      d.handle(request({ method: 'POST', path: '/login', body: `token=${encodeURIComponent(token)}&csrf=${encodeURIComponent(csrf)}`, headers: { ...h, origin: 'https://ops.example.com', cookie: `sb_dash_csrf=${nonce}`, 'content-type': 'application/x-www-form-urlencoded' } }));
    const wrong = await login('not-the-token-at-all');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('not the operator token');
    const ok = await login(TOKEN);
    expect(ok.status).toBe(303);
    const session = cookieOf(ok, 'sb_dash_session')!;
    expect(session).toBeTruthy();
    expect(session).not.toContain(TOKEN);
    const page = await d.handle(request({ headers: { ...h, cookie: `sb_dash_session=${session}; sb_dash_csrf=${nonce}` } }));
    expect(page.status).toBe(200);
    expect(page.body).toContain('Log out');
    for (const r of [form, wrong, ok, page]) expect(JSON.stringify(r)).not.toContain(TOKEN);
    // Guessing is slowed down: after 10 wrong tokens in a minute, even the right one waits.
    for (let i = 0; i < 9; i++) expect((await login(`wrong-token-${i}-000000000`)).status).toBe(401);
    const limited = await login(TOKEN);
    expect(limited.status).toBe(429);
    expect(limited.body).toContain('too many wrong tokens');
    // Over HTTPS (here: a proxy saying so) the cookies are Secure.
    const secureForm = await d.handle(request({ path: '/login', headers: { ...h, 'x-forwarded-proto': 'https' } }));
    expect(cookieOf(secureForm, 'sb_dash_csrf')).toBeTruthy();
    expect(String(secureForm.headers['set-cookie'])).toContain('; Secure');
    expect(String(form.headers['set-cookie'])).not.toContain('Secure');
    const out = await d.handle(request({ method: 'POST', path: '/logout', body: `csrf=${encodeURIComponent(csrf)}`, headers: { ...h, origin: 'http://ops.example.com', cookie: `sb_dash_session=${session}; sb_dash_csrf=${nonce}`, 'content-type': 'application/x-www-form-urlencoded' } }));
    expect(out.status).toBe(303);
    expect(cookieOf(out, 'sb_dash_session')).toBe('');
  });
});
