/**
 * The run-history chart, as server-rendered SVG (no chart library, no script): one bar per run
 * for its duration (oldest left), a line for the items in the sink after each run, failed runs
 * drawn red with a cross above the bar, runs with store issues amber. Each bar has a `<title>`
 * (the browser's tooltip) with the run's figures.
 */
import type { RunRecord } from '../../sync/sync-health';
import { countOf, formatDuration, formatTime } from './format';
import { html, raw, type SafeHtml } from './html';

export interface RunChartOptions {
  width: number;
  height: number;
  /** The small variant for table rows: no axis labels or legend. */
  compact?: boolean;
}

const COLOURS = { ok: '#2563eb', store_issues: '#d97706', failed: '#dc2626', items: '#059669' } as const;
const itemsOf = (r: RunRecord) => r.products.count + r.orders.count;
const fixed = (n: number) => (Math.round(n * 10) / 10).toString();

/** The chart of `runs` (newest first, as histories are kept). */
export function runChart(runs: readonly RunRecord[], o: RunChartOptions): SafeHtml {
  const ordered = [...runs].reverse();
  const failed = ordered.filter((r) => r.outcome === 'failed').length;
  const label = `${countOf(ordered.length, 'run')}, ${failed} failed`;
  if (ordered.length === 0) return html`<span class="muted">no runs yet</span>`;
  const pad = o.compact ? { l: 1, r: 1, t: 9, b: 1 } : { l: 56, r: 56, t: 14, b: 22 };
  const w = o.width - pad.l - pad.r;
  const h = o.height - pad.t - pad.b;
  const maxMs = Math.max(1, ...ordered.map((r) => r.durationMs));
  const mostItems = Math.max(0, ...ordered.map(itemsOf));
  const maxItems = Math.max(1, mostItems); // the scale; the label says the real most (0 when every run failed empty)
  const slot = w / ordered.length;
  const barW = Math.max(1, Math.min(slot * 0.7, o.compact ? 8 : 24));
  const y = (v: number, max: number) => pad.t + h - (v / max) * h;

  const bars = ordered.map((r, i) => {
    const x = pad.l + i * slot + (slot - barW) / 2;
    const top = Math.min(y(r.durationMs, maxMs), pad.t + h - 2);
    const tip = `${formatTime(Date.parse(r.at))}: ${r.outcome}, ${formatDuration(r.durationMs)}, ${countOf(itemsOf(r), 'item')} (job ${r.jobid})${r.error ? ` — ${r.error.message.slice(0, 200)}` : ''}`;
    const mark =
      r.outcome === 'failed'
        ? html`<text class="fail-mark" x="${fixed(x + barW / 2)}" y="${fixed(Math.max(top - 1, pad.t - 1))}" text-anchor="middle" font-size="${o.compact ? 9 : 12}" font-weight="bold" fill="${COLOURS.failed}">✕</text>`
        : '';
    return html`<g class="run run-${r.outcome}"><rect x="${fixed(x)}" y="${fixed(top)}" width="${fixed(barW)}" height="${fixed(pad.t + h - top)}" fill="${COLOURS[r.outcome]}" opacity="0.75"><title>${tip}</title></rect>${mark}</g>`;
  });
  const points = ordered.map((r, i) => `${fixed(pad.l + i * slot + slot / 2)},${fixed(y(itemsOf(r), maxItems))}`).join(' ');
  const line = html`<polyline points="${points}" fill="none" stroke="${COLOURS.items}" stroke-width="${o.compact ? 1.2 : 2}"/>`;
  const dots = o.compact ? '' : ordered.map((r, i) => html`<circle cx="${fixed(pad.l + i * slot + slot / 2)}" cy="${fixed(y(itemsOf(r), maxItems))}" r="2.5" fill="${COLOURS.items}"/>`);
  const axes = o.compact
    ? ''
    : html`<line x1="${pad.l}" y1="${pad.t + h}" x2="${pad.l + w}" y2="${pad.t + h}" stroke="#9ca3af"/>
<text x="${pad.l - 4}" y="${pad.t + 4}" text-anchor="end" font-size="10" fill="${COLOURS.ok}">${formatDuration(maxMs)}</text>
<text x="${pad.l - 4}" y="${pad.t + h}" text-anchor="end" font-size="10" fill="#6b7280">0</text>
<text x="${pad.l + w + 4}" y="${pad.t + 4}" font-size="10" fill="${COLOURS.items}">${countOf(mostItems, 'item')}</text>
<text x="${pad.l}" y="${o.height - 6}" font-size="10" fill="#6b7280">${formatTime(Date.parse(ordered[0].at))}</text>
<text x="${pad.l + w}" y="${o.height - 6}" text-anchor="end" font-size="10" fill="#6b7280">${formatTime(Date.parse(ordered[ordered.length - 1].at))}</text>`;
  return html`<svg class="chart${o.compact ? ' spark' : ''}" xmlns="http://www.w3.org/2000/svg" width="${o.width}" height="${o.height}" viewBox="0 0 ${o.width} ${o.height}" role="img" aria-label="${label}"><title>${label}</title>${axes}${bars}${line}${dots}</svg>`;
}

/** The legend under a full-size chart (its colours are in the stylesheet: no inline style under the CSP). */
export const chartLegend: SafeHtml = raw(
  '<p class="legend"><span class="sw sw-ok"></span>duration (ok) <span class="sw sw-issues"></span>store issues <span class="sw sw-failed"></span>failed ✕ <span class="sw sw-items"></span>items in the sink</p>',
);
