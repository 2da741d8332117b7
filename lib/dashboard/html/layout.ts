/** The page around every view: header, navigation, notice, and the `<main>` the script refreshes. */
import { html, type SafeHtml } from './html';

export interface LayoutOptions {
  base: string;
  title: string;
  /** Show the link to the raw queue view (bull-board). */
  jobs: boolean;
  /** The sections the overview has: the navigation links only to those. */
  sections: { sync: boolean; reverse: boolean };
  /** Show "Log out" (operator-token mode). */
  logout: boolean;
  csrf: string;
  /** Refresh period of `<main>` by the optional script (ms); 0 turns it off. */
  refreshMs: number;
  notice?: { text: string; bad?: boolean };
  generatedAt: number;
}

/** What `<main>` holds: the notice, the view, and when it was drawn. */
export function mainContent(o: Pick<LayoutOptions, 'notice' | 'generatedAt'>, body: SafeHtml): SafeHtml {
  const notice = o.notice ? html`<p class="notice${o.notice.bad ? ' bad' : ''}" role="status">${o.notice.text}</p>` : '';
  return html`${notice}${body}<p class="muted refreshed">Drawn at <time datetime="${new Date(o.generatedAt).toISOString()}">${new Date(o.generatedAt).toISOString().replace('T', ' ').slice(0, 19)} UTC</time>.</p>`;
}

export function layout(o: LayoutOptions, body: SafeHtml): string {
  const logout = o.logout ? html`<form method="post" action="${o.base}/logout"><input type="hidden" name="csrf" value="${o.csrf}"><button type="submit">Log out</button></form>` : '';
  const refresh = o.refreshMs > 0 ? html` data-refresh-ms="${o.refreshMs}"` : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title}</title><link rel="stylesheet" href="${o.base}/assets/dashboard.css"><script src="${o.base}/assets/dashboard.js" defer></script></head>
<body><header><h1>${o.title}</h1><nav>${o.sections.sync ? html`<a href="${o.base}/#sync">Sync</a>` : ''}${o.sections.reverse ? html`<a href="${o.base}/#reverse-0">Reverse</a>` : ''}${o.jobs ? html`<a href="${o.base}/jobs/">Jobs (BullMQ)</a>` : ''}</nav><span class="who">${logout}</span></header>
<main${refresh}>${mainContent(o, body)}</main>
<footer>storebridge dashboard · <noscript>reload the page to refresh it · </noscript>keys are never shown: connections appear by name</footer></body></html>`.text;
}

/** The operator-token login form. */
export function loginPage(o: { base: string; title: string; csrf: string; error?: string }): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${o.title}: log in</title><link rel="stylesheet" href="${o.base}/assets/dashboard.css"></head>
<body><form class="login" method="post" action="${o.base}/login"><h2>${o.title}</h2>${o.error ? html`<p class="notice bad">${o.error}</p>` : ''}
<label for="token">Operator token</label><input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<input type="hidden" name="csrf" value="${o.csrf}"><button class="primary" type="submit">Log in</button></form></body></html>`.text;
}

/** A rejection for a person's browser: the same words as the JSON `{error}`. */
export function errorPage(o: { base: string; title: string; status: number; error: string }): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${o.title}: ${o.status}</title><link rel="stylesheet" href="${o.base}/assets/dashboard.css"></head>
<body><main><p class="notice bad">${o.error}</p><p><a href="${o.base}/">Back to the dashboard</a></p></main></body></html>`.text;
}
