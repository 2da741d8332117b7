/**
 * The dashboard's actions (POST `/actions/NAME`): "Run now", "Pause", "Resume" on a sync
 * connection; on a reverse connection, queue a push (the daemon sends its changes; Click2Sync's
 * "Fetch updates") or a pull (the daemon fetches the service's items; "Send updates"). Each is
 * checked (origin, synchronizer token, the connection exists) before it acts.
 */
import { reported, withTimeout, type DataConfig } from './dashboard-data';
import { header, type DashboardSecurity, type Headers } from './dashboard-security';
import { ENTITIES } from '../contract/entities';

export interface ActionOutcome {
  status: number;
  /** JSON answer (scripts). */
  body: Record<string, unknown>;
  /** The sentence shown to a person. */
  message: string;
  /** Where a browser goes back to, below the mount point (`''`: the overview). */
  back?: string;
}

const fail = (status: number, message: string): ActionOutcome => ({ status, body: { error: message }, message });
const done = (message: string, extra: Record<string, unknown> = {}, back?: string): ActionOutcome => ({ status: 200, body: { ok: true, message, ...extra }, message, ...(back !== undefined ? { back } : {}) });

/** The form fields of an action: urlencoded from a page, or JSON from a script. */
function readFields(req: { headers: Headers; body?: string }): Map<string, string> | undefined {
  const type = header(req.headers, 'content-type') ?? '';
  const out = new Map<string, string>();
  if (/^application\/json\b/i.test(type)) {
    let v: unknown;
    try {
      v = JSON.parse(req.body || '{}');
    } catch {
      return undefined;
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    for (const [k, x] of Object.entries(v)) if (typeof x === 'string' || typeof x === 'number') out.set(k, String(x));
    return out;
  }
  if (type !== '' && !/^application\/x-www-form-urlencoded\b/i.test(type)) return undefined;
  for (const [k, x] of new URLSearchParams(req.body ?? '')) out.set(k, x);
  return out;
}

async function syncAction(c: DataConfig, action: string, name: string): Promise<ActionOutcome> {
  const source = c.sync;
  if (!source) return fail(404, 'this dashboard has no sync source');
  const known = (await withTimeout(source.connections(), c.timeoutMs)).some((r) => r.name === name);
  if (!known) return fail(404, `no sync connection is named "${name}"`);
  if (action === 'run-now') {
    if (!source.runNow) return fail(409, `${source.label} cannot queue runs (no queue)`);
    const jobId = await withTimeout(source.runNow(name), c.timeoutMs);
    // "job N" in the table is the run's wire jobid (what the store sees), given when the run starts;
    // the queue numbers its entries apart, so its id is not called a job here.
    return done(`Queued a run of ${name} now (queue id ${jobId}); the table shows it when it ends.`, { jobId });
  }
  if (!source.pause || !source.resume) return fail(409, `${source.label} has no schedule to pause or resume`);
  if (action === 'pause') {
    const ok = await withTimeout(source.pause(name), c.timeoutMs);
    return ok ? done(`Paused ${name}: its schedule is removed until you resume it (a run in progress finishes).`) : fail(409, `${name} has no schedule to pause`);
  }
  const ok = await withTimeout(source.resume(name), c.timeoutMs);
  return ok ? done(`Resumed ${name}: its schedule runs again.`) : fail(409, `${name} is not paused`);
}

async function reverseAction(c: DataConfig, action: string, fields: Map<string, string>, name: string): Promise<ActionOutcome> {
  const index = Number(fields.get('service') ?? '0');
  const source = Number.isSafeInteger(index) ? c.reverse[index] : undefined;
  if (!source) return fail(404, 'no such reverse service');
  const back = `reverse/${index}/${encodeURIComponent(name)}`;
  if (action === 'reverse-push') {
    const position = await withTimeout(source.queue(name, { kind: 'push' }), c.timeoutMs);
    return done(`Queued a push for ${name}: the daemon sends the store's changes ${when(position)}.`, { position }, back);
  }
  const which = fields.get('entity') ?? 'both';
  if (which !== 'both' && which !== 'products' && which !== 'orders') return fail(400, 'entity must be products, orders or both');
  const entities = which === 'both' ? ENTITIES : ([which] as const);
  const positions: number[] = [];
  for (const entity of entities) positions.push(await withTimeout(source.queue(name, { kind: 'pull', entity }), c.timeoutMs));
  return done(`Queued a pull of ${entities.join(' and ')} for ${name}: the daemon fetches them into the store ${when(positions[0])}.`, { positions }, back);
}

/** When the daemon gets to a transaction at `position` in the connection's queue (0: next). */
function when(position: number): string {
  return position <= 0 ? 'on its next poll' : `after the ${position} transaction${position === 1 ? '' : 's'} queued before it`;
}

const ACTIONS = new Set(['run-now', 'pause', 'resume', 'reverse-push', 'reverse-pull']);

/** Checks and runs one action; never throws (a source failure is a 502 in words). */
export async function runActionOrReject(c: DataConfig, security: DashboardSecurity, req: { headers: Headers; body?: string }, action: string, bearer: boolean): Promise<ActionOutcome> {
  if (!ACTIONS.has(action)) return fail(404, 'not found');
  const fields = readFields(req);
  if (!fields) return fail(415, 'send the action as a form (application/x-www-form-urlencoded) or a JSON object');
  const why = security.checkPost(req, fields.get('csrf'), bearer);
  if (why) return fail(403, why);
  const name = fields.get('connection') ?? '';
  if (name === '' || name.length > 1024) return fail(400, 'the form must name a connection (field "connection")');
  const reverse = action.startsWith('reverse-');
  try {
    return reverse ? await reverseAction(c, action, fields, name) : await syncAction(c, action, name);
  } catch (err) {
    const label = reverse ? 'the reverse service' : (c.sync?.label ?? 'the sync source');
    const failed = fail(502, `${action} ${name} failed: ${reported(c, err, label, label)}`);
    const index = Number(fields.get('service') ?? '0');
    return reverse && Number.isSafeInteger(index) && c.reverse[index] ? { ...failed, back: `reverse/${index}/${encodeURIComponent(name)}` } : failed;
  }
}
