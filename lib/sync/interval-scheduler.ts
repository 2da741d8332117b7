/**
 * Runs a task on a fixed interval, never two at once: a tick that comes while the previous run is
 * still going is skipped (counted in `skipped`), not queued. `stop()` clears the timer and waits
 * for a run in progress to finish.
 */
import { z } from 'zod';
import { defineOptions, opt } from '../options';

const MILLISECONDS = 'must be a positive integer (milliseconds)';

/** The scheduler's options, through the toolkit (`lib/options.ts`). */
const parseSchedulerOptions = defineOptions('IntervalScheduler', {
  intervalMs: z.number({ error: MILLISECONDS }).int(MILLISECONDS).min(1, MILLISECONDS).max(Number.MAX_SAFE_INTEGER, MILLISECONDS),
  task: opt.fn<() => Promise<unknown>>(),
  runImmediately: opt.boolean().optional(),
  onError: opt.fn<(err: unknown) => void>().optional(),
  onSkip: opt.fn<() => void>().optional(),
});

export interface IntervalSchedulerOptions {
  /** Time between run starts (ms). */
  intervalMs: number;
  task: () => Promise<unknown>;
  /** Run once at `start()` (default true), then on every tick. */
  runImmediately?: boolean;
  /** Called when the task rejects (the schedule goes on). */
  onError?: (err: unknown) => void;
  /** Called when a tick is skipped because a run is still in progress. */
  onSkip?: () => void;
}

export class IntervalScheduler {
  private timer: NodeJS.Timeout | undefined;
  private active: Promise<void> | undefined;
  /** Ticks skipped because a run was still in progress. */
  skipped = 0;
  /** Runs started. */
  runs = 0;

  constructor(private readonly options: IntervalSchedulerOptions) {
    parseSchedulerOptions(options);
  }

  get started(): boolean {
    return this.timer !== undefined;
  }

  get running(): boolean {
    return this.active !== undefined;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    if (this.options.runImmediately ?? true) void this.tick();
  }

  /** Starts a run now unless one is in progress; resolves when the run (or the one in progress) ends. */
  tick(): Promise<void> {
    if (this.active) {
      this.skipped++;
      try {
        this.options.onSkip?.();
      } catch {
        // a skip callback must not break the schedule
      }
      return this.active;
    }
    this.runs++;
    const run = (async () => {
      try {
        await this.options.task();
      } catch (err) {
        this.options.onError?.(err);
      } finally {
        this.active = undefined;
      }
    })();
    this.active = run;
    return run;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.active;
  }
}
