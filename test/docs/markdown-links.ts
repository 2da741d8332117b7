/**
 * Relative links of Markdown files, and the anchors GitHub gives their headings: what
 * links.test.ts needs to tell a link that leads nowhere. Links inside code (fenced blocks and
 * inline code spans) are text, not links, and are left alone.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';

export interface MarkdownLink {
  readonly line: number;
  readonly target: string;
}

/** The lines of a Markdown text, with those of fenced code blocks (and the fences) as `undefined`. */
function proseLines(text: string): Array<string | undefined> {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return undefined;
    }
    if (marker) {
      fence = marker;
      return undefined;
    }
    return line;
  });
}

/** A line without its inline code spans. */
const withoutCodeSpans = (line: string) => line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, '');

/** Every link and image target: `[text](target)`, `[text](<target>)`, `[id]: target`. */
export function markdownLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseLines(text).forEach((prose, i) => {
    if (prose === undefined) return;
    const line = withoutCodeSpans(prose);
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g)) {
      links.push({ line: i + 1, target: m[1].replace(/^<|>$/g, '') });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line);
    if (definition) links.push({ line: i + 1, target: definition[1].replace(/^<|>$/g, '') });
  });
  return links;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors a Markdown file offers: its headings' slugs (repeats numbered as GitHub does) and HTML ids/names. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    if (line === undefined) continue;
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of withoutCodeSpans(line).matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** What is wrong with one relative link of `file`, or undefined when it leads somewhere. */
export function brokenLink(file: string, target: string, root: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined; // absolute URL, mailto:
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = decodeURIComponent(pathPart.split('?')[0]);
  const resolved = path === '' ? file : path.startsWith('/') ? resolve(root, `.${path}`) : resolve(dirname(file), path);
  if (resolved !== root && !resolved.startsWith(root + sep)) return `${target}: leads outside the repository`;
  if (!existsSync(resolved)) return `${target}: no such file or directory`;
  if (anchor === undefined || anchor === '' || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) return undefined;
  if (!anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) return `${target}: no heading "#${anchor}" in ${path || 'this file'}`;
  return undefined;
}
