/**
 * A controller aborted when a parent signal aborts (a linked controller, not `AbortSignal.any`:
 * Node 20.0 lacks it), shared by the catalog walk and the sync engine.
 */
import { setMaxListeners } from 'node:events';

export interface LinkedController {
  readonly controller: AbortController;
  /** Stops following the parent signal (call once the controller's work is over). */
  release(): void;
}

/**
 * A controller aborted with `signal`'s reason when it aborts (at once if it already has).
 * `maxListeners`: how many listeners the controller's signal may have before Node warns of a leak,
 * for work that makes many requests in parallel on it.
 */
export function linkedController(signal: AbortSignal | undefined, maxListeners?: number): LinkedController {
  const controller = new AbortController();
  if (maxListeners !== undefined) setMaxListeners(maxListeners, controller.signal);
  const onAbort = () => controller.abort(signal!.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  return { controller, release: () => signal?.removeEventListener('abort', onAbort) };
}
