/**
 * Reading one value ahead of an async iterator: the sync engine asks for page n + 1 before it
 * writes page n, so fetching and writing overlap, with at most one page in flight ahead.
 */

/**
 * Wraps an async iterator so that the next value can be requested (`prefetch`) while the current
 * one is processed. A request made ahead that fails is not an unhandled rejection: its error is
 * thrown by the `next()` that takes it, or dropped by `close()`.
 *
 * @example
 * ```ts
 * const pages = new ReadAhead(walk.pages());
 * try {
 *   for (let r = await pages.next(); !r.done; r = await pages.next()) {
 *     pages.prefetch(); // page n + 1 is fetched while page n is written
 *     await write(r.value);
 *   }
 * } finally {
 *   abortController.abort(); // cancels a request in flight (pass its signal to the source)
 *   await pages.close();
 * }
 * ```
 */
export class ReadAhead<T> {
  private pending: Promise<IteratorResult<T>> | undefined;
  private closed = false;

  constructor(private readonly source: AsyncIterator<T>) {}

  /** The next value: the one requested ahead, if any, else a new request. */
  next(): Promise<IteratorResult<T>> {
    if (this.closed) return Promise.resolve({ done: true, value: undefined });
    const p = this.pending ?? this.source.next();
    this.pending = undefined;
    return p;
  }

  /** Requests the next value now (at most one ahead: a second call before `next()` does nothing). */
  prefetch(): void {
    if (this.closed || this.pending) return;
    const p = this.source.next();
    p.catch(() => undefined);
    this.pending = p;
  }

  /**
   * Waits for a request in flight (abort it first through the source's signal to make this quick),
   * drops its value or error, and closes the source (`return()`, which runs its `finally`).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const p = this.pending;
    this.pending = undefined;
    let sourceDone = false;
    if (p) sourceDone = await p.then((r) => r.done === true, () => true);
    if (!sourceDone) await this.source.return?.();
  }
}
