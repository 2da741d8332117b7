/**
 * The dashboard's stylesheet and its one optional script, served as files (`/assets/…`) so the
 * Content-Security-Policy allows no inline script or style. The script only refreshes the page's
 * `<main>` every few seconds (polling, paused while the tab is hidden); everything reads without it.
 */

export const DASHBOARD_CSS = `
:root { color-scheme: light; --fg:#111827; --muted:#6b7280; --line:#e5e7eb; --ok:#047857; --warn:#b45309; --bad:#b91c1c; --accent:#2563eb; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #f9fafb; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .4rem 1.5rem; padding: .7rem 1.2rem; background: #111827; color: #f9fafb; }
header h1 { font-size: 1.05rem; margin: 0; }
header nav a { color: #bfdbfe; margin-right: 1rem; }
header .who { margin-left: auto; color: #9ca3af; font-size: .85rem; }
header form { display: inline; }
main { padding: 1rem 1.2rem 2rem; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
h2 small, .muted { color: var(--muted); font-weight: normal; }
h2, .notice, .unavailable { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: .35rem .55rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f3f4f6; font-weight: 600; font-size: .85rem; white-space: nowrap; }
th small { display: block; white-space: normal; font-weight: normal; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.counts { white-space: nowrap; }
tr.failed td:first-child { box-shadow: inset 3px 0 var(--bad); }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 9px; font-size: .8rem; font-weight: 600; white-space: nowrap; }
.badge.ok { background: #d1fae5; color: var(--ok); } .badge.store_issues { background: #fef3c7; color: var(--warn); }
.badge.failed { background: #fee2e2; color: var(--bad); } .badge.none, .badge.paused { background: #e5e7eb; color: #374151; }
.badge.running { background: #dbeafe; color: #1d4ed8; }
.error { color: var(--bad); min-width: 10rem; max-width: 24rem; overflow-wrap: anywhere; }
.error details { color: var(--muted); font-size: .8rem; word-break: break-all; }
.actions { white-space: nowrap; }
.actions form { display: inline; }
.actions.stacked { white-space: normal; min-width: 13rem; }
.actions.stacked form { display: block; margin: 0 0 .3rem; }
button { font: inherit; font-size: .85rem; padding: .15rem .6rem; border: 1px solid #9ca3af; border-radius: 4px; background: #fff; cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button:hover { filter: brightness(0.95); }
select { font: inherit; font-size: .85rem; }
.notice { padding: .5rem .8rem; border-radius: 4px; background: #dbeafe; border: 1px solid #93c5fd; margin-bottom: .8rem; }
.notice.bad { background: #fee2e2; border-color: #fca5a5; }
.unavailable { padding: .5rem .8rem; background: #fff7ed; border: 1px solid #fdba74; border-radius: 4px; }
.cards { display: flex; flex-wrap: wrap; gap: .8rem; margin: .4rem 0 1rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .5rem .8rem; min-width: 8rem; }
.card b { display: block; font-size: 1.2rem; }
svg.chart { background: #fff; border: 1px solid var(--line); max-width: 100%; height: auto; }
svg.chart.spark { border: 0; background: transparent; vertical-align: middle; }
.legend { color: var(--muted); font-size: .8rem; }
.sw { display: inline-block; width: .8rem; height: .8rem; margin: 0 .25rem 0 .7rem; vertical-align: -1px; }
.sw-ok { background: #2563eb; } .sw-issues { background: #d97706; } .sw-failed { background: #dc2626; } .sw-items { height: 2px; vertical-align: 3px; background: #059669; }
code { font-size: .85rem; }
footer { color: var(--muted); font-size: .8rem; padding: 0 1.2rem 1rem; }
body.stale main { opacity: .6; }
form.login { max-width: 22rem; margin: 4rem auto; background: #fff; padding: 1.2rem; border: 1px solid var(--line); border-radius: 6px; }
form.login input { width: 100%; font: inherit; padding: .3rem; margin: .4rem 0 .8rem; }
@media (max-width: 1000px) {
  main { padding: .8rem .6rem 2rem; }
  header { padding: .6rem; }
  th, td { padding: .3rem .4rem; }
}
`;

export const DASHBOARD_JS = `(function () {
  'use strict';
  var main = document.querySelector('main[data-refresh-ms]');
  if (!main || !window.fetch) return;
  var every = Number(main.getAttribute('data-refresh-ms')) || 5000;
  var busy = false;
  function tick() {
    var active = document.activeElement;
    if (busy || document.hidden || (active && active.form)) return;
    busy = true;
    fetch(location.href, { headers: { 'X-Dashboard-Partial': '1' }, credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then(function (text) { main.innerHTML = text; document.body.classList.remove('stale'); })
      .catch(function () { document.body.classList.add('stale'); })
      .then(function () { busy = false; });
  }
  setInterval(tick, every);
})();
`;
