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

/**
 * Most values any JSON body the kit parses may hold (413 beyond, counted on the text before it is
 * parsed: `[0,0,…]` packs 1.6 million values in 3.2 MB, each of which a parse and a validation
 * would otherwise pay for). A legitimate body holds far fewer: 500 reverse items of this kit's
 * daemon with their variations are about 100,000 values; deployed daemons send 50 items a page.
 */
export const MAX_BODY_VALUES = 1_000_000;

/**
 * Most elements any one array of a store write body may hold (variations, their prices, images,
 * order lines, …; 413 beyond, counted before parsing). Far above a real item, far below what makes
 * one write cost seconds.
 */
export const MAX_WRITE_ARRAY_ITEMS = 10_000;

/**
 * Most stubs an ids-only list page (`listing: 'stubs'`) holds when the caller asks with `limit`:
 * the store's `maxPageSize` is raised to this for stub pages. A stub is about 60 bytes, so 10,000
 * of them are about 600 KB, far under the 10 MB page budget (which still applies), where 1,000
 * whole items are about 2.3 MB. The kit's caller asks for it once a page came back as stubs, so a
 * re-sync of 100,000 items walks 11 pages, not 1,000 (docs/wire-decisions.md "Ids-only listing").
 */
export const MAX_STUB_PAGE_SIZE = 10_000;

/**
 * Most ids one batched by-ID read (`GET /products?ids=a,b,c`, an extension of this kit) may ask
 * for; more is a 400. The store advertises it on its stub list pages (`BY_IDS_HEADER`), and the
 * kit's caller asks in batches of at most this many: a re-sync that fetches 1,000 changed items
 * sends 10 requests, not 1,000 (docs/wire-decisions.md "Batched by-ID read").
 */
export const MAX_BY_IDS = 100;
