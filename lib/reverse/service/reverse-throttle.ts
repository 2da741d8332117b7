/**
 * The pace of each reverse connection's calls: a connection calling faster than `perSecond` calls a
 * second has its answers **delayed, not refused**. Deployed daemons ignore status codes and, after
 * an exception they do not catch, call again at once with no pause: a refusal would only make them
 * call faster, while a delayed answer holds such a loop to `perSecond` calls a second (each daemon
 * call waits for its answer). The delay ends by itself when the daemon slows down.
 *
 * A token bucket per connection, kept as one "theoretical arrival time" (GCRA): calls within
 * `burst` of the allowance are answered at once; each further call waits for its turn, `1/perSecond`
 * after the previous one. A call that would wait longer than `maxDelayMs` (only callers sending
 * many calls at once reach it, never a daemon waiting for each answer) is refused (429) without
 * taking a turn, so parallel floods cannot queue without bound.
 *
 * **Progress credit.** A call that moves a transaction on (an item acknowledged for the first time,
 * a push page with items new to the push; read from the shared state, so every replica sees it)
 * does not count against the pace, and gives back the turns taken since the previous one (`credit`): a working daemon's item cycle (`hasmore`, `next`,
 * `succeded`, `readyfornext`: 4 calls) fits in the burst, so the pace never holds it back (the
 * kit's own daemon moves hundreds of items a second). Calls faster than the pace are still told to
 * close their HTTP connection (`busy`, on a clock the credit does not move), progress or not: a
 * deployed daemon opens a client per call and never closes one, so a fast one would otherwise pile
 * sockets up (the bindings skip the close for a client reusing its connection). A daemon asking for the same item again and again makes
 * no progress (an item the service gives up after `maxDeliveries` earns nothing either), so a
 * crash loop is still held to `perSecond`; progress is bounded by the items there are to move.
 *
 * The pace is per process and safe to lose (a restart starts with a full burst): replicas sharing
 * a state store each allow `perSecond`, so a crash loop spread over N replicas costs at most N×.
 */

export interface ThrottleConfig {
  /** Calls a second allowed per connection; 0 turns the pace off. */
  readonly perSecond: number;
  /** Calls answered at once above the pace, after a quiet time. */
  readonly burst: number;
  /** The longest a call is held; a call that would wait longer is refused. */
  readonly maxDelayMs: number;
}

/**
 * A call's turn: answer now or after `delayMs` (`busy`: the connection calls faster than the pace
 * allows over time, within its burst or beyond it), or refuse it (`retryAfterMs`).
 */
export type Turn = { readonly delayMs: number; readonly busy: boolean } | { readonly refused: true; readonly retryAfterMs: number };

/** What the pace did so far, per connection (this process only). */
export interface ThrottleCounts {
  /** Calls whose answer was delayed. */
  delayed: number;
  /** Their delays added up (ms). */
  delayedMs: number;
  /** Calls refused because they would have waited longer than `maxDelayMs`. */
  refused: number;
}

export class CallThrottle {
  private readonly arrival = new Map<string, number>();
  /** The same clock without the progress credit: whether a connection calls faster than the pace at all (`busy`). */
  private readonly raw = new Map<string, number>();
  private readonly counts = new Map<string, ThrottleCounts>();

  constructor(
    private readonly config: ThrottleConfig,
    /** A monotonic clock in ms. */
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Takes a turn for a call of `connection`. */
  turn(connection: string): Turn {
    const { perSecond, burst, maxDelayMs } = this.config;
    if (perSecond <= 0) return { delayMs: 0, busy: false };
    const now = this.clock();
    const interval = 1000 / perSecond;
    const previous = this.arrival.get(connection) ?? now;
    const tat = Math.max(previous, now);
    const delayMs = Math.max(0, tat - now - burst * interval);
    const counts = this.countsOf(connection);
    if (delayMs > maxDelayMs) {
      counts.refused++;
      return { refused: true, retryAfterMs: Math.ceil(delayMs - maxDelayMs) };
    }
    this.arrival.set(connection, tat + interval);
    const rawPrevious = this.raw.get(connection) ?? now;
    this.raw.set(connection, Math.max(rawPrevious, now) + interval);
    if (delayMs > 0) {
      counts.delayed++;
      counts.delayedMs += delayMs;
    }
    return { delayMs, busy: rawPrevious > now };
  }

  /**
   * A call of `connection` made progress: it does not count against the pace, nor do the calls
   * since the previous progress (the connection's next calls have the full burst again).
   */
  credit(connection: string): void {
    if (this.config.perSecond <= 0) return;
    const now = this.clock();
    const tat = this.arrival.get(connection);
    if (tat !== undefined && tat > now) this.arrival.set(connection, now);
  }

  countsOf(connection: string): ThrottleCounts {
    let c = this.counts.get(connection);
    if (!c) this.counts.set(connection, (c = { delayed: 0, delayedMs: 0, refused: 0 }));
    return c;
  }
}
