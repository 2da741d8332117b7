/**
 * The reverse side of the pages: per reverse service, a table of its connections (state, queue,
 * items delivered/succeeded/failed/received, the last failure reason, and the two actions: ask the
 * daemon to push its changes, or to pull the service's items), and a connection's page (current transaction, queue, failures with their reasons, the
 * pulled-id → store-id map, ended transactions: finished, expired or cancelled).
 */
import type { ReverseConnectionView, ReverseEntityCounts } from '../dashboard-sources';
import { formatCount, formatTime } from './format';
import { html, raw, type SafeHtml } from './html';
import { actionForm, scrollBox, type PageContext } from './sync-pages';

export interface ReverseSection {
  /** Position of the service in the dashboard's list (used in links and forms). */
  index: number;
  label: string;
  connections?: ReverseConnectionView[];
  error?: string;
}

const reverseHref = (ctx: PageContext, index: number, name: string) => `${ctx.base}/reverse/${index}/${encodeURIComponent(name)}`;

function countsCell(c: ReverseEntityCounts): SafeHtml {
  // Items the service gave up on (a daemon that crashes on them) are among the failed; said apart.
  const givenUp = c.unacknowledged ? html`<br><small class="error" title="handed out too often without an acknowledgement">${formatCount(c.unacknowledged)} never acknowledged</small>` : html``;
  return html`<span class="counts" title="delivered / succeeded / failed / received">${formatCount(c.delivered ?? 0)} / ${formatCount(c.succeeded ?? 0)} / <span class="${c.failed ? 'error' : ''}">${formatCount(c.failed ?? 0)}</span> / ${formatCount(c.received ?? 0)}</span>${givenUp}`;
}

function currentText(c: ReverseConnectionView): string {
  const cur = c.current;
  if (!cur) return 'idle';
  const what = [cur.kind, cur.entity].filter(Boolean).join(' ');
  return `${what} #${cur.transaction ?? '?'} (${cur.phase ?? '…'}${cur.remaining !== undefined ? `, ${cur.remaining} left` : ''})`;
}

function queueText(c: ReverseConnectionView): string {
  return c.queue.length === 0 ? 'empty' : c.queue.map((q) => (q.entity ? `${q.kind} ${q.entity}` : q.kind)).join(', ');
}

/**
 * The two actions, labelled by what happens (Click2Sync's buttons, "Fetch updates" and "Send
 * updates", are named from the service's side and read backwards to a store's operator; their
 * names stay in the tooltips).
 */
function reverseActions(ctx: PageContext, index: number, name: string): SafeHtml {
  const f = { service: String(index), connection: name };
  const entity = raw('<select name="entity" aria-label="what the daemon fetches"><option value="both">products and orders</option><option value="products">products</option><option value="orders">orders</option></select> ');
  const push = actionForm(ctx, 'reverse-push', f, 'Ask the daemon to send its changes (push)', '', true, 'Click2Sync\'s "Fetch updates": the daemon sends the store\'s changed items to the service');
  const pull = actionForm(ctx, 'reverse-pull', f, 'Ask the daemon to fetch (pull)', entity, false, 'Click2Sync\'s "Send updates": the daemon fetches the service\'s items into the store');
  return html`<td class="actions stacked">${push}${pull}</td>`;
}

function lastFailure(c: ReverseConnectionView): SafeHtml {
  const f = c.failures[c.failures.length - 1];
  if (!f) return html``;
  const reason = f.reasons[0]?.message;
  return html`<div class="error">${f.entity ?? ''} ${f.id ?? ''}: ${f.error}${reason && reason !== f.error ? ` — ${reason}` : ''}</div>${c.failures.length > 1 ? html`<span class="muted">${c.failures.length} failures</span>` : ''}`;
}

function reverseRow(ctx: PageContext, s: ReverseSection, c: ReverseConnectionView): SafeHtml {
  return html`<tr data-reverse="${c.name}"><td><a href="${reverseHref(ctx, s.index, c.name)}">${c.name}</a></td><td><span class="badge none">${c.connectionstatus}</span><br><span class="muted">mode ${c.mode}</span></td>
<td>${currentText(c)}</td><td>${queueText(c)}</td><td class="num">${countsCell(c.products)}</td><td class="num">${countsCell(c.orders)}</td><td>${lastFailure(c)}</td>${reverseActions(ctx, s.index, c.name)}</tr>`;
}

const REVERSE_HEAD = raw(
  '<thead><tr><th>Connection</th><th>State</th><th>Current</th><th>Queue</th><th class="num">Products<br><small>delivered / succeeded / failed / received</small></th><th class="num">Orders<br><small>delivered / succeeded / failed / received</small></th><th>Failures</th><th>Actions</th></tr></thead>',
);

export function reverseSection(ctx: PageContext, s: ReverseSection): SafeHtml {
  const head = html`<h2 id="reverse-${s.index}">Reverse connections <small>${s.label}</small></h2>`;
  if (s.error) return html`${head}<p class="unavailable">${s.error}</p>`;
  const list = s.connections ?? [];
  if (list.length === 0) return html`${head}<p class="muted">The service has no connection.</p>`;
  return html`${head}${scrollBox(html`<table class="reverse">${REVERSE_HEAD}<tbody>${list.map((c) => reverseRow(ctx, s, c))}</tbody></table>`)}`;
}

function failuresTable(c: ReverseConnectionView): SafeHtml {
  if (c.failures.length === 0) return html`<p class="muted">No failure.</p>`;
  const rows = [...c.failures].reverse().map(
    (f) =>
      html`<tr><td>${f.at !== undefined ? formatTime(f.at) : ''}</td><td class="num">${f.transaction ?? ''}</td><td>${f.entity ?? ''}</td><td><code>${f.id ?? ''}</code></td><td>${f.source ?? ''}</td><td class="error">${f.error}</td><td>${f.reasons.map((r) => html`<div>${r.message ?? ''}${r.code ? html` <code>${r.code}</code>` : ''}</div>`)}</td></tr>`,
  );
  return scrollBox(html`<table><thead><tr><th>When</th><th class="num">Transaction</th><th>Entity</th><th>Item</th><th>By</th><th>Error</th><th>Reasons</th></tr></thead><tbody>${rows}</tbody></table>`);
}

function idMapTable(c: ReverseConnectionView): SafeHtml {
  if (!c.idMap) return html`<p class="muted">This reverse service does not report the ids the store gave pulled items.</p>`;
  // The service maps only the items a store gave an id of its own (its succeded body named another).
  if (c.idMap.length === 0) return html`<p class="muted">No pulled item was stored under an id of the store's own (items stored under the id they were pulled with are not listed).</p>`;
  const rows = c.idMap.map((m) => html`<tr><td>${m.entity}</td><td><code>${m.pulledId}</code></td><td><code>${m.storeId}</code></td></tr>`);
  return scrollBox(html`<table class="idmap"><thead><tr><th>Entity</th><th>Pulled id</th><th>Store id</th></tr></thead><tbody>${rows}</tbody></table>`);
}

function transactionsTable(c: ReverseConnectionView): SafeHtml {
  if (c.transactions.length === 0) return html`<p class="muted">No ended transaction.</p>`;
  const items = (t: ReverseConnectionView['transactions'][number]) => (typeof t.items === 'number' ? formatCount(t.items) : t.items ? `${formatCount(t.items.products)} products, ${formatCount(t.items.orders)} orders` : '');
  const rows = [...c.transactions]
    .reverse()
    .map(
      (t) =>
        html`<tr><td class="num">${t.transaction ?? ''}</td><td>${t.kind ?? ''} ${t.entity ?? ''}</td><td>${t.outcome ?? ''}</td><td>${t.startedAt !== undefined ? formatTime(t.startedAt) : ''}</td><td>${t.endedAt !== undefined ? formatTime(t.endedAt) : ''}</td><td>${items(t)}${t.remaining ? ` (${formatCount(t.remaining)} not acknowledged)` : ''}</td></tr>`,
    );
  return scrollBox(html`<table class="transactions"><thead><tr><th class="num">#</th><th>Kind</th><th>Outcome</th><th>Started</th><th>Ended</th><th>Items</th></tr></thead><tbody>${rows}</tbody></table>`);
}

/** One reverse connection's page. */
export function reverseConnectionPage(ctx: PageContext, s: ReverseSection, c: ReverseConnectionView): SafeHtml {
  return html`<p><a href="${ctx.base}/#reverse-${s.index}">← all connections</a></p><h2>${c.name} <small>${s.label}</small></h2>
${scrollBox(html`<table class="reverse">${REVERSE_HEAD}<tbody>${reverseRow(ctx, s, c)}</tbody></table>`)}
<h2>Failures</h2>${failuresTable(c)}<h2>Pulled id → store id</h2>${idMapTable(c)}<h2>Ended transactions</h2>${transactionsTable(c)}`;
}
