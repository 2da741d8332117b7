/**
 * One request's time budget: an AbortSignal handed to the adapter, and `race`, which stops waiting
 * for an adapter that ignores the signal. The signal also fires when the caller goes away.
 */
import { AdapterTimeoutError } from '../errors';

export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly unlink: (() => void) | undefined;
  private readonly unhook: (() => void) | undefined;
  /** Whether the work was stopped because the caller went away (not a failure of the store). */
  callerGone = false;

  /**
   * `parent`: a signal that aborts the work too. `onClose`: a host's way to say the caller went away
   * without an AbortController per request (it registers a listener and returns its removal).
   */
  constructor(budgetMs: number, parent?: AbortSignal, onClose?: (listener: () => void) => () => void) {
    this.timer = setTimeout(() => this.controller.abort(new AdapterTimeoutError('this request')), budgetMs);
    this.timer.unref?.();
    if (parent) {
      const onParentAbort = () => this.controller.abort(parent.reason);
      if (parent.aborted) onParentAbort();
      else {
        parent.addEventListener('abort', onParentAbort, { once: true });
        this.unlink = () => parent.removeEventListener('abort', onParentAbort);
      }
    }
    if (onClose) {
      this.unhook = onClose(() => {
        this.callerGone = true;
        this.controller.abort(new Error('the caller closed the connection'));
      });
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get expired(): boolean {
    return this.controller.signal.aborted;
  }

  /** `work`'s result, or the abort reason as soon as the budget runs out (whichever is first). */
  race<T>(work: Promise<T>): Promise<T> {
    const signal = this.controller.signal;
    if (signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(signal.reason);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.unlink?.();
    this.unhook?.();
  }
}
