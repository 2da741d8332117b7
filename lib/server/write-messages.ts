/**
 * Wording of write reasons and warnings: every message is `path: what is wrong`, in plain
 * English, with the offending value quoted (and shortened, so a hostile body cannot blow up the
 * answer). `docs/writes.md` lists every pattern.
 */
import type { z } from 'zod';
import { STORE_DIALECT } from '../contract/dialects';

/** At most this many reasons, and separately warnings, are answered; the rest are summarized. */
export const MAX_MESSAGES = 100;

/** Longest quoted value inside a message. */
const MAX_QUOTED = 80;

/** A value as JSON, shortened: `"SKU-1"`, `7`, `"aaaa…"`. */
export function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  const short = text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
  return typeof value === 'string' ? JSON.stringify(short) : short;
}

/** Joins path segments: `orderItems.2.quantity`. */
export function pathOf(path: ReadonlyArray<PropertyKey>): string {
  return path.map(String).join('.');
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  object: 'an object',
  array: 'an array',
  boolean: 'true or false',
  record: 'an object',
};

/** What a JSON value is, for "got …". */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return TYPE_NAMES[typeof value] ?? typeof value;
}

/** Reads the value at `path` inside `root` (for "got …" in type errors). */
function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = root;
  for (const key of path) {
    if (typeof v !== 'object' || v === null || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** One schema issue as a reason: `orderItems.0.quantity: must be an integer, got a number (1.5)`. */
export function issueReason(issue: z.core.$ZodIssue, input: unknown): string {
  const where = pathOf(issue.path) || 'body';
  const got = valueAt(input, issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      const expected = TYPE_NAMES[issue.expected] ?? issue.expected;
      const detail = typeof got === 'number' || typeof got === 'string' || typeof got === 'boolean' ? ` (${quote(got)})` : '';
      return `${where}: must be ${expected}, got ${kindOf(got)}${detail}`;
    }
    case 'too_big':
      if (issue.origin === 'string') return `${where}: must be at most ${String(issue.maximum)} characters`;
      if (issue.origin === 'array') return `${where}: must have at most ${String(issue.maximum)} elements`;
      return `${where}: must be at most ${String(issue.maximum)}, got ${quote(got)}`;
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return `${where}: must not be empty`;
      if (issue.origin === 'string') return `${where}: must be at least ${String(issue.minimum)} characters`;
      if (issue.origin === 'array') return `${where}: must have at least ${String(issue.minimum)} elements`;
      return `${where}: must be at least ${String(issue.minimum)}, got ${quote(got)}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

/** Longest single message; longer ones (a huge unknown key name, say) are cut with `…`. */
export const MAX_MESSAGE_LENGTH = 500;

/** A message cut to `MAX_MESSAGE_LENGTH`. */
export function clip(message: string): string {
  return message.length > MAX_MESSAGE_LENGTH ? `${message.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : message;
}

/** Caps a message list, replacing the tail with one summary line. */
export function capMessages(messages: readonly string[]): { msg: string }[] {
  if (messages.length <= MAX_MESSAGES) return messages.map((msg) => ({ msg: clip(msg) }));
  const shown = messages.slice(0, MAX_MESSAGES - 1).map((msg) => ({ msg: clip(msg) }));
  shown.push({ msg: `… and ${messages.length - (MAX_MESSAGES - 1)} more` });
  return shown;
}

/**
 * Caps a reason list like `capMessages`; each reason is in both forms (`STORE_DIALECT.reason`: the
 * spec's `msg`, the deployed form's `message` and `code`), so readers of either form find it.
 */
export function capReasons(reasons: readonly string[], code: number): { msg: string; message: string; code: number }[] {
  return capMessages(reasons).map(({ msg }) => STORE_DIALECT.reason(msg, code));
}
