/**
 * The interface's limits (docs/interface.md "Limits") and the kit's defaults derived from them, in
 * one place: the store router, the reverse service, the caller, the daemon and the endpoint checker
 * all take their numbers from here.
 */

/** Limits the interface itself states. */
export const INTERFACE_LIMITS = {
  /** "At most 10 MB per page", read strictly: 10,000,000 bytes of serialized list body. */
  maxPageBytes: 10_000_000,
  /** "Processing time per request: 1 minute". */
  requestTimeMs: 60_000,
} as const;

/** The store's default deadline for one request's work: under the minute, with time left to answer. */
export const DEFAULT_TIME_BUDGET_MS = 50_000;

/** Largest write body accepted by default: 10 MiB, so a body just over 10 MB still gets a reasoned answer. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Deepest nesting of objects and arrays in any JSON body the kit parses (store writes, reverse
 * bodies). The contract's own items are at most 5 deep; the limit keeps recursive walks off a
 * hostile body that `JSON.parse` happily builds thousands of levels deep.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects/arrays more than `limit` levels deep (iterative: no recursion). */
export function deeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
