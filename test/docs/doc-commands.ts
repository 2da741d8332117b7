/**
 * The commands the documentation tells a reader to run: every fenced `sh` block (also `bash`,
 * `shell`) of the README and of docs/, and the command lines of each example's header comment
 * (lines indented three spaces or more after ` * `). commands.test.ts runs them as written, one
 * session per page; this module only finds them and says which are not run here, and why.
 *
 * Conventions for writers (docs/README.md, "Commands in these pages"): a `sh` block holds commands
 * that run as written in a checkout, in order; a comment line after a command is its expected
 * output; a template with placeholders goes in a `text` block.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface DocCommand {
  /** `README.md:161` (the line where the command starts). */
  readonly where: string;
  /** The command as written, continuation lines joined, a trailing `&` kept. */
  readonly text: string;
}

export interface DocPage {
  /** The page, relative to the repository: `README.md`, `docs/dashboard.md`, `examples/sync-workers.ts`. */
  readonly page: string;
  readonly commands: DocCommand[];
}

const SHELL_FENCES = new Set(['sh', 'bash', 'shell']);

/** The `sh` blocks of a Markdown text: each block's first line number and its lines. */
function shellBlocks(text: string): Array<{ line: number; lines: string[] }> {
  const blocks: Array<{ line: number; lines: string[] }> = [];
  let open: { fence: string; shell: boolean; line: number; lines: string[] } | undefined;
  text.split('\n').forEach((line, i) => {
    const m = /^\s{0,3}(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (open) {
      if (m && m[1][0] === open.fence[0] && m[1].length >= open.fence.length && m[2] === '') {
        if (open.shell) blocks.push({ line: open.line, lines: open.lines });
        open = undefined;
      } else open.lines.push(line);
      return;
    }
    if (m) open = { fence: m[1], shell: SHELL_FENCES.has(m[2]), line: i + 2, lines: [] };
  });
  return blocks;
}

/** Whether bash reads `script` as complete (a `for … do` without its `done` is not). */
function complete(script: string): boolean {
  return spawnSync('bash', ['-n', '-c', script], { stdio: 'ignore' }).status === 0;
}

/**
 * The commands of consecutive lines: comment and blank lines dropped, `\` continuations joined,
 * and a construct spanning lines (`for …; do` … `done`) kept whole.
 */
export function commandsOf(lines: readonly string[], firstLine: number, page: string): DocCommand[] {
  const out: DocCommand[] = [];
  let pending: { start: number; text: string } | undefined;
  lines.forEach((raw, i) => {
    const line = raw.trimEnd();
    if (!pending && (line.trim() === '' || /^\s*#/.test(line))) return;
    const text = pending ? `${pending.text}\n${line}` : line.trim();
    const start = pending?.start ?? firstLine + i;
    if (line.endsWith('\\') || !complete(text)) {
      pending = { start, text };
      return;
    }
    pending = undefined;
    out.push({ where: `${page}:${start}`, text: text.replace(/\\\n\s*/g, '') });
  });
  if (pending) out.push({ where: `${page}:${pending.start}`, text: pending.text });
  return out;
}

/** The commands of a Markdown page's `sh` blocks, in order. */
export function markdownCommands(text: string, page: string): DocCommand[] {
  return shellBlocks(text).flatMap((b) => commandsOf(b.lines, b.line, page));
}

/** The command lines of a source file's header comment (the first `/** … *\/`). */
export function headerCommands(text: string, page: string): DocCommand[] {
  const end = text.indexOf('*/');
  if (!text.startsWith('/**') || end < 0) return [];
  const lines = text.slice(0, end).split('\n');
  // ` *   npx tsc …`: a command; ` * prose` (one space) is not.
  const commands = lines.map((l) => /^ \* {3,}(\S.*)$/.exec(l)?.[1] ?? '');
  return commandsOf(commands, 1, page);
}

function markdownFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? markdownFiles(join(dir, d.name)) : d.name.endsWith('.md') ? [join(dir, d.name)] : []))
    .sort();
}

/** Every page with commands: the README first (it builds the checkout), then docs/, then the examples. */
export function documentedCommands(root: string): DocPage[] {
  const pages: DocPage[] = [];
  for (const file of [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))]) {
    const page = relative(root, file);
    pages.push({ page, commands: markdownCommands(readFileSync(file, 'utf8'), page) });
  }
  const examples = join(root, 'examples');
  for (const name of readdirSync(examples).filter((n) => n.endsWith('.ts')).sort()) {
    const page = `examples/${name}`;
    pages.push({ page, commands: headerCommands(readFileSync(join(examples, name), 'utf8'), page) });
  }
  return pages.filter((p) => p.commands.length > 0);
}

/**
 * Commands not run by the test, each with the reason; everything else in a `sh` block runs.
 * Matched against each `&&` step of a command (`npm install && npm start`: the install is not
 * run, the start is). Keep this list short: a command that cannot run as written belongs in a
 * `text` block, not here.
 */
export const NOT_RUN_HERE: ReadonlyArray<{ readonly match: RegExp; readonly reason: string }> = [
  { match: /^npm (install|i|ci)\b/, reason: 'installs packages, and node_modules is shared on this machine (test/packaging installs the package as a user does)' },
  { match: /^npm test\b/, reason: 'runs the whole suite, this test included' },
  { match: /^(npm run bench|node bench\/run\.js)/, reason: 'a benchmark: minutes of CPU, and figures are noise on a shared machine (docs/benchmarks.md)' },
  { match: /^npm run faults\b/, reason: 'the fault suite: minutes of CPU, and it cuts the shared databases; npm test runs its short version' },
  {
    match: /https:\/\/(shop\.example|sync\.example\.com|api\.click2sync\.com)(?=[/'"\s]|$)/,
    reason: 'talks to a store or a service on the Internet (an example host, or the deployed Click2Sync service)',
  },
];

/** The command with its not-run steps taken out, and those steps with their reasons. */
export function runnablePart(command: string): { run?: string; skipped: Array<{ step: string; reason: string }> } {
  const steps = command.split(/\s+&&\s+/);
  const skipped: Array<{ step: string; reason: string }> = [];
  const kept = steps.filter((step) => {
    const rule = NOT_RUN_HERE.find((r) => r.match.test(step.trim()));
    if (rule) skipped.push({ step: step.trim(), reason: rule.reason });
    return !rule;
  });
  if (skipped.length === 0) return { run: command, skipped };
  return { ...(kept.length ? { run: kept.join(' && ') } : {}), skipped };
}
