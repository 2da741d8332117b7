/**
 * The sync side of the pages: the connections table (one row per connection: last run, items,
 * counts, error in words, next run, a small history chart, actions) and a connection's page (a
 * larger chart and its run history).
 */
import type { LastRun, LastRunEntity, RunRecord } from '../../sync/sync-health';
import type { SyncCapabilities, SyncConnectionView } from '../dashboard-sources';
import { countOf, errorInWords, formatCount, formatDuration, formatRelative, formatTime } from './format';
import { html, raw, type SafeHtml } from './html';
import { chartLegend, runChart } from './run-chart';
import type { Entity } from '../../contract/entities';

export interface PageContext {
  /** Where the dashboard is mounted ('' at the root), for links and form actions. */
  base: string;
  /** The synchronizer token of this browser session, put in every form. */
  csrf: string;
  now: number;
}

export interface SyncRow extends SyncConnectionView {
  history: RunRecord[];
}

export interface SyncSection {
  label: string;
  capabilities: SyncCapabilities;
  rows: SyncRow[];
  total: number;
  offset: number;
  pageSize: number;
  /** Why the source could not be read (the section then shows this instead of rows). */
  error?: string;
}

const SYNC_COLUMNS = '<th>Connection</th><th>Status</th><th>Last run</th><th class="num">Products</th><th class="num">Orders</th><th>Duplicates / invalid</th><th>Last error</th><th>Next run</th><th>History</th>';

/** A read-only source (a state file) has no Actions column: a note says why instead. */
const hasActions = (caps: SyncCapabilities) => caps.runNow || caps.pause;

const syncHead = (caps: SyncCapabilities) => raw(`<thead><tr>${SYNC_COLUMNS}${hasActions(caps) ? '<th>Actions</th>' : ''}</tr></thead>`);

/** A wide table scrolls inside its own box, so the page itself never scrolls sideways. */
export const scrollBox = (table: SafeHtml): SafeHtml => html`<div class="scroll">${table}</div>`;

const READ_ONLY = raw(
  '<p class="muted readonly">Read-only: this source cannot start, pause or resume runs. The sync service\'s Redis (<code>--redis URL</code>, <code>createRedisSyncSource</code>) can.</p>',
);

const connectionHref = (ctx: PageContext, name: string) => `${ctx.base}/connections/${encodeURIComponent(name)}`;

/** A POST form with one button (and the CSRF token): works without JavaScript. */
export function actionForm(ctx: PageContext, action: string, fields: Record<string, string>, label: string, extra: SafeHtml | string = '', primary = false, tooltip?: string): SafeHtml {
  const inputs = Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="post" action="${ctx.base}/actions/${action}"><input type="hidden" name="csrf" value="${ctx.csrf}">${inputs}${extra}<button type="submit"${primary ? html` class="primary"` : ''}${tooltip ? html` title="${tooltip}"` : ''}>${label}</button></form>`;
}

function sum(run: Pick<LastRun, Entity>, k: keyof LastRunEntity): number | undefined {
  const a = run.products[k];
  const b = run.orders[k];
  return a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
}

/** `0 duplicates · 2 invalid · 3 normalised` (normalised only when the run counted it). */
export function qualityCounts(run: Pick<LastRun, Entity>): SafeHtml {
  const norm = sum(run, 'normalised');
  const fetched = sum(run, 'fetchedById');
  return html`<span title="products + orders">${formatCount(sum(run, 'duplicates'))} dup · ${formatCount(sum(run, 'invalid'))} invalid${norm !== undefined ? html` · ${formatCount(norm)} normalised` : ''}${fetched ? html` · ${formatCount(fetched)} by id` : ''}</span>`;
}

function statusBadge(row: SyncConnectionView): SafeHtml {
  if (row.paused) return html`<span class="badge paused">paused</span>`;
  if (row.lastRun) return html`<span class="badge ${row.lastRun.outcome}">${row.lastRun.outcome === 'store_issues' ? 'store issues' : row.lastRun.outcome}</span>`;
  if (row.checkpoint?.unfinished) return html`<span class="badge running">unfinished</span>`;
  if (row.checkpoint) return html`<span class="badge ok">synced</span>`;
  return html`<span class="badge none">never run</span>`;
}

function lastRunCell(ctx: PageContext, row: SyncConnectionView): SafeHtml {
  const r = row.lastRun;
  if (r) {
    const at = Date.parse(r.at);
    return html`<time datetime="${r.at}" title="${formatTime(at)}">${formatRelative(at, ctx.now)}</time><br><span class="muted">took ${formatDuration(r.durationMs)} · job ${r.jobid}${r.resumed ? ' · resumed' : ''}</span>`;
  }
  const c = row.checkpoint;
  if (c?.unfinished) return html`job ${c.unfinished.jobid} started <time title="${formatTime(c.unfinished.startedAt)}">${formatRelative(c.unfinished.startedAt, ctx.now)}</time>, not finished (the next run resumes it)`;
  if (c) return html`job ${c.jobid}<br><span class="muted">no run report in a state file</span>`;
  return html`<span class="muted">–</span>`;
}

function itemsCell(row: SyncConnectionView, entity: Entity): SafeHtml {
  if (row.lastRun?.entities && !row.lastRun.entities.includes(entity)) return html`<span class="muted" title="the connection has no ${entity} URL">not covered</span>`;
  const e = row.lastRun?.[entity];
  if (e) return html`${formatCount(e.count)}<br><span class="muted" title="received / written this run">${formatCount(e.seen)} / ${formatCount(e.written)}</span>`;
  const u = row.checkpoint?.unfinished?.[entity];
  if (u) return html`<span class="muted" title="received so far">${formatCount(u.seen)} so far</span>`;
  const hw = row.checkpoint?.highWater?.[entity];
  return hw !== undefined ? html`<span class="muted" title="newest last_updated synced">up to ${formatTime(hw)}</span>` : html`<span class="muted">–</span>`;
}

function scheduleCell(ctx: PageContext, row: SyncConnectionView): SafeHtml {
  if (row.paused) return html`<span class="muted">paused ${formatRelative(Date.parse(row.paused.pausedAt), ctx.now)} (every ${formatDuration(row.paused.intervalMs)})</span>`;
  const s = row.schedule;
  if (!s) return html`<span class="muted">not scheduled</span>`;
  const next = s.next !== undefined && s.next > ctx.now + 1000 ? html`<time title="${formatTime(s.next)}">${formatRelative(s.next, ctx.now)}</time>` : html`due now`;
  return html`${next}<br><span class="muted">every ${formatDuration(s.intervalMs)}${s.mode ? ` · ${s.mode}` : ''}</span>`;
}

function errorCell(run: LastRun | RunRecord | undefined): SafeHtml {
  const e = errorInWords(run?.error);
  if (!e) return html``;
  return html`<div class="error">${e.words}<details><summary>detail</summary>${e.detail}</details></div>`;
}

function actionsCell(ctx: PageContext, caps: SyncCapabilities, row: SyncConnectionView): SafeHtml {
  if (!hasActions(caps)) return html``;
  const f = { connection: row.name };
  const run = caps.runNow ? actionForm(ctx, 'run-now', f, 'Run now', '', true) : '';
  const pause = !caps.pause ? '' : row.paused ? actionForm(ctx, 'resume', f, 'Resume') : row.schedule ? actionForm(ctx, 'pause', f, 'Pause') : '';
  return html`<td class="actions">${run} ${pause}</td>`;
}

function syncRow(ctx: PageContext, section: SyncSection, row: SyncRow): SafeHtml {
  const r = row.lastRun;
  return html`<tr data-connection="${row.name}" class="${r?.outcome === 'failed' ? 'failed' : ''}">
<td><a href="${connectionHref(ctx, row.name)}">${row.name}</a></td><td>${statusBadge(row)}</td><td>${lastRunCell(ctx, row)}</td>
<td class="num">${itemsCell(row, 'products')}</td><td class="num">${itemsCell(row, 'orders')}</td><td>${r ? qualityCounts(r) : ''}</td>
<td>${errorCell(r)}</td><td>${scheduleCell(ctx, row)}</td><td>${section.capabilities.runNow || row.history.length ? runChart(row.history, { width: 130, height: 30, compact: true }) : ''}</td>${actionsCell(ctx, section.capabilities, row)}</tr>`;
}

function pager(ctx: PageContext, s: SyncSection): SafeHtml {
  if (s.total <= s.pageSize) return html``;
  const prev = s.offset > 0 ? html`<a href="${ctx.base}/?offset=${Math.max(0, s.offset - s.pageSize)}">← previous</a>` : '';
  const next = s.offset + s.pageSize < s.total ? html`<a href="${ctx.base}/?offset=${s.offset + s.pageSize}">next →</a>` : '';
  return html`<p>${prev} connections ${s.offset + 1}–${Math.min(s.total, s.offset + s.pageSize)} of ${s.total} ${next}</p>`;
}

/** Counts over every connection of the section (this page's rows only when paged). */
function summaryCards(rows: readonly SyncConnectionView[], total: number): SafeHtml {
  const n = (p: (r: SyncConnectionView) => boolean) => rows.filter(p).length;
  const card = (label: string, value: number, cls = '') => html`<div class="card ${cls}"><b>${formatCount(value)}</b>${label}</div>`;
  return html`<div class="cards">${card('connections', total)}${card('last run ok', n((r) => r.lastRun?.outcome === 'ok'))}${card('store issues', n((r) => r.lastRun?.outcome === 'store_issues'))}${card('failed', n((r) => r.lastRun?.outcome === 'failed'), 'bad')}${card('paused', n((r) => Boolean(r.paused)))}</div>`;
}

export function syncSection(ctx: PageContext, s: SyncSection): SafeHtml {
  const head = html`<h2 id="sync">Sync connections <small>${s.label}</small></h2>`;
  if (s.error) return html`${head}<p class="unavailable">${s.error}</p>`;
  if (s.total === 0) return html`${head}<p class="muted">No connection yet: none has run or been scheduled.</p>`;
  const table = html`<table class="connections">${syncHead(s.capabilities)}
<tbody>${s.rows.map((r) => syncRow(ctx, s, r))}</tbody></table>`;
  return html`${head}${summaryCards(s.rows, s.total)}${hasActions(s.capabilities) ? '' : READ_ONLY}${pager(ctx, s)}${scrollBox(table)}`;
}

function historyRow(r: RunRecord): SafeHtml {
  return html`<tr class="${r.outcome === 'failed' ? 'failed' : ''}"><td><time datetime="${r.at}">${formatTime(Date.parse(r.at))}</time></td><td><span class="badge ${r.outcome}">${r.outcome}</span></td>
<td class="num">${formatDuration(r.durationMs)}</td><td class="num">${r.jobid}${r.resumed ? ' (resumed)' : ''}</td><td class="num">${formatCount(r.products.count)} <span class="muted">(+${formatCount(r.products.written)})</span></td>
<td class="num">${formatCount(r.orders.count)} <span class="muted">(+${formatCount(r.orders.written)})</span></td><td>${qualityCounts(r)}</td><td class="num">${r.requests} / ${r.retries}</td><td>${r.attempt}${r.worker ? html`<br><span class="muted">${r.worker}</span>` : ''}</td><td>${errorCell(r)}</td></tr>`;
}

/** A connection's page: its row's figures, a larger chart, and its runs. */
export function syncConnectionPage(ctx: PageContext, s: SyncSection, row: SyncRow): SafeHtml {
  const runs = row.history;
  const chart = runs.length ? html`${runChart(runs, { width: 760, height: 200 })}${chartLegend}` : html`<p class="muted">No run history ${s.capabilities.runNow ? 'yet' : 'in this source'}.</p>`;
  const table = runs.length
    ? scrollBox(html`<table><thead><tr><th>Ended</th><th>Outcome</th><th class="num">Duration</th><th class="num">Job</th><th class="num">Products</th><th class="num">Orders</th><th>Duplicates / invalid</th><th class="num">Requests / retries</th><th>Attempt</th><th>Error</th></tr></thead><tbody>${runs.map(historyRow)}</tbody></table>`)
    : '';
  return html`<p><a href="${ctx.base}/">← all connections</a></p><h2>${row.name} ${statusBadge(row)}</h2>
${hasActions(s.capabilities) ? '' : READ_ONLY}${scrollBox(html`<table class="connections">${syncHead(s.capabilities)}<tbody>${syncRow(ctx, s, { ...row, history: runs.slice(0, 20) })}</tbody></table>`)}
<h2>Run history <small>last ${countOf(runs.length, 'run')}, newest first</small></h2>${chart}${table}`;
}
