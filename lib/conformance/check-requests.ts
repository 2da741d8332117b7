/**
 * The checks made of single list requests: the key (refused when missing or wrong, accepted in each
 * header) and the parameters (defaults deployed callers rely on, 400 for invalid values).
 */
import { entityOf } from '../contract/entities';
import { KEY_HEADERS } from '../contract/dialects';
import type { Entity } from '../contract/entities';
import type { ListQuery } from '../client/client-urls';
import { hasErrorMember, textOf, type CheckContext, type CheckLevel } from './check-context';

/** One list request with a query and key of the probe's choosing, no retry. */
async function listProbe(ctx: CheckContext, entity: Entity, query: ListQuery, key?: { svcKey?: string | null; keyHeaders?: readonly string[] }) {
  const operation = entityOf(entity).operations.list;
  return ctx.client.probe({ operation, method: 'GET', url: ctx.client.urlOf(operation, query), signal: ctx.signal, ...key });
}

/** A request that must be refused with `status` and a JSON `{error}`. */
async function expectRefusal(ctx: CheckContext, name: string, level: CheckLevel, entity: Entity, status: number, queries: ListQuery[], key?: { svcKey?: string | null }): Promise<void> {
  const problems: string[] = [];
  try {
    for (const query of queries) {
      const res = await listProbe(ctx, entity, query, key);
      const hasError = hasErrorMember(res.text);
      if (res.status !== status || !hasError) problems.push(`got HTTP ${res.status}${hasError ? '' : textOf(res.text) || ' without {error}'}${queries.length > 1 ? ` for ${new URLSearchParams(query as Record<string, string>).toString()}` : ''}`);
    }
    ctx.add(`${entity}.${name}`, level, problems.length === 0, problems.length ? `expected HTTP ${status} with a JSON {error} body, ${problems.join('; ')}` : `HTTP ${status} {error}`);
  } catch (err) {
    ctx.add(`${entity}.${name}`, level, false, `request failed: ${(err as Error).message}`);
  }
}

/** A request that must be answered with a list page (HTTP 200, the entity's array). */
async function expectList(ctx: CheckContext, name: string, level: CheckLevel, entity: Entity, query: ListQuery, key: { keyHeaders?: readonly string[] } | undefined, why: string): Promise<void> {
  try {
    const res = await listProbe(ctx, entity, query, key);
    let listed = false;
    try {
      listed = Array.isArray((JSON.parse(res.text) as Record<string, unknown>)[entity]);
    } catch {
      // not JSON
    }
    const ok = res.status === 200 && listed;
    ctx.add(`${entity}.${name}`, level, ok, ok ? `HTTP 200 with a list (${why})` : `expected HTTP 200 with a list (${why}), got HTTP ${res.status}${listed ? '' : textOf(res.text) || ` without "${entity}"`}`);
  } catch (err) {
    ctx.add(`${entity}.${name}`, level, false, `request failed: ${(err as Error).message}`);
  }
}

/**
 * The key: refused when missing or wrong (must), accepted in `SvcKey` alone (must) and in `C2SKey`
 * alone (should). The probes carry `offset=0`, as a walk's first request does (a PHP store that
 * warns about a missing `offset` would otherwise be judged on its warning, not on its key check).
 */
export async function checkAuth(ctx: CheckContext, entity: Entity): Promise<void> {
  const query: ListQuery = { sortorder: 'asc', jobid: ctx.jobid, offset: 0 };
  await expectRefusal(ctx, 'auth-missing-key', 'must', entity, 401, [query], { svcKey: null });
  await expectRefusal(ctx, 'auth-wrong-key', 'must', entity, 401, [query], { svcKey: `${ctx.key}-not-this-one` });
  const [spec, deployed] = KEY_HEADERS;
  await expectList(ctx, 'auth-svckey', 'must', entity, query, { keyHeaders: [spec] }, `the key in ${spec} alone, the spec's header`);
  await expectList(ctx, 'auth-c2skey', 'should', entity, query, { keyHeaders: [deployed] }, `the key in ${deployed} alone, as the deployed service sends it`);
}

/** The parameters: defaults deployed callers rely on, and 400 for invalid values (hardening). */
export async function checkParameters(ctx: CheckContext, entity: Entity): Promise<void> {
  const { jobid } = ctx;
  await expectList(ctx, 'params-default-sortorder', 'should', entity, { jobid, offset: 0 }, undefined, 'no sortorder means asc: deployed callers leave it out');
  await expectList(ctx, 'params-default-jobid', 'should', entity, { sortorder: 'asc', offset: 0 }, undefined, 'no jobid is an untracked read: deployed callers leave it out');
  await expectRefusal(ctx, 'params-invalid-sortorder', 'should', entity, 400, [{ sortorder: 'sideways', jobid, offset: 0 }]);
  await expectRefusal(ctx, 'params-invalid-jobid', 'should', entity, 400, [{ sortorder: 'asc', jobid: 'abc', offset: 0 }]);
  await expectRefusal(ctx, 'params-invalid-offset', 'should', entity, 400, [{ sortorder: 'asc', jobid, offset: -1 }, { sortorder: 'asc', jobid, offset: 'abc' }]);
  await expectRefusal(ctx, 'params-invalid-next', 'should', entity, 400, [{ sortorder: 'asc', jobid, next: '%%not-a-cursor%%' }]);
}
