/**
 * The store's daemon: from inside the store's network it starts every call of the reverse
 * connection, in the deployed daemons' order. A pass: `GET /` (reachability, first and after a
 * failure), `GET ping` → `fetchingremote`: run the push (`daemon-push.ts`); `GET ping` again →
 * `pulling`: run the pull (`daemon-pull.ts`); neither: the service is idle.
 *
 * Restart-safe: the daemon keeps no state of its own between calls. Where it is in a transaction is
 * read back from the service (`upstreamstatus`, `entity`, `cursoroffset`, `hasmore`), so a daemon that
 * died anywhere resumes where the service says: the item it held is handed out again, an acknowledged
 * one is not, a push resumes at the entity and the cursor the service holds.
 *
 * `runOnce` always ends: at idle (ok), after `maxConsecutiveErrors` failed passes, at once when the
 * service does not know the key (404), or after `maxStalledPasses` passes that changed nothing.
 */
import { ReverseServiceError, ReverseStalledError } from '../reverse-errors';
import { addReport, emptyReport, parseDaemonOptions, type DaemonConfig, type DaemonEvent, type DaemonOptions, type DaemonReport } from './daemon-options';
import { runPull } from './daemon-pull';
import { runPush } from './daemon-push';
import { member, StopRequested, type Session } from './daemon-session';
import { createTransport, type Transport } from './daemon-transport';

export { FAILURE_CODES, type DaemonEvent, type DaemonOptions, type DaemonReport } from './daemon-options';
export { newStoreId } from './daemon-store';

export interface Daemon {
  /** Does what the service asks until it is idle, then returns what was done. Always ends (see the module). */
  runOnce(): Promise<DaemonReport>;
  /** Runs until `stop()`: works while there is work, polls with back-off while idle. */
  start(): void;
  /** Stops between items (an item being stored is finished and acknowledged first). */
  stop(): Promise<void>;
  /** Totals since the daemon was created. */
  report(): DaemonReport;
}

type PassResult = 'idle' | 'worked' | 'stalled';

/** The stoppable sleep and the stop flag of one daemon. */
class Waker {
  stopping = false;
  private wake = new AbortController();

  reset(): void {
    this.stopping = false;
    this.wake = new AbortController();
  }

  stop(): void {
    this.stopping = true;
    this.wake.abort();
  }

  sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    const signal = this.wake.signal;
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done);
    });
  }
}

/**
 * One pass: reachability when needed, then the two pings. `stalled`: the service asked for work and
 * nothing moved (it is not ready, or refuses what is sent).
 */
async function pass(config: DaemonConfig, transport: Transport, waker: Waker, run: DaemonReport, emit: (e: DaemonEvent) => void, reach: boolean): Promise<PassResult> {
  const s: Session = {
    config,
    transport,
    run,
    progress: 0,
    emit,
    sleep: (ms) => waker.sleep(ms),
    checkStop: () => {
      if (waker.stopping) throw new StopRequested('stop requested');
    },
  };
  if (reach) await transport.reach();
  let asked = false;
  if (member(await transport.call('ping'), 'connectionstatus') === 'fetchingremote') {
    const strategy = member(await transport.call('strategy'), 'strategy');
    emit({ type: 'mode', mode: strategy === 'pingsample' ? 'pingsample' : 'push' });
    asked = true;
    await runPush(s);
  }
  s.checkStop();
  if (member(await transport.call('ping'), 'connectionstatus') === 'pulling') {
    emit({ type: 'mode', mode: 'pull' });
    asked = true;
    await runPull(s);
  }
  if (!asked) emit({ type: 'mode', mode: 'idle' });
  return !asked ? 'idle' : s.progress > 0 ? 'worked' : 'stalled';
}

/**
 * Creates the store's daemon.
 *
 * @example
 * ```ts
 * import { createDaemon } from 'storebridge/reverse';
 * import { openSqlAdapter } from 'storebridge/adapters/sql';
 *
 * const daemon = createDaemon({
 *   serviceUrl: 'https://sync.example.com',
 *   connectionKey: process.env.CONNECTION_KEY!,
 *   adapter: await openSqlAdapter('sqlite:store.db'),
 *   dialect: 'click2sync',
 *   onEvent: (e) => console.log(e.type),
 * });
 * const report = await daemon.runOnce(); // or daemon.start() … await daemon.stop()
 * ```
 */
export function createDaemon(options: DaemonOptions): Daemon {
  return new DaemonRunner(parseDaemonOptions(options));
}

/** The loop around passes: `runOnce` until idle or given up, `start()` forever with back-off, the totals. */
class DaemonRunner implements Daemon {
  private readonly totals = emptyReport();
  private readonly waker = new Waker();
  private readonly transport: Transport;
  private loop: Promise<void> | undefined;

  constructor(private readonly config: DaemonConfig) {
    this.transport = createTransport(config, (ms) => this.waker.sleep(ms));
  }

  private readonly emit = (event: DaemonEvent): void => {
    try {
      this.config.onEvent(event);
    } catch {
      // A failing listener must not stop the daemon.
    }
  };

  private recordError(run: DaemonReport, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    run.errors.push(message);
    if (run.errors.length > 20) run.errors.shift();
    this.emit({ type: 'error', error: message });
  }

  /** One pass whose counts go into `run` and the totals, whatever happens. */
  private async countedPass(run: DaemonReport, reach: boolean): Promise<PassResult> {
    const delta = emptyReport();
    try {
      return await pass(this.config, this.transport, this.waker, delta, this.emit, reach);
    } finally {
      addReport(run, delta);
      addReport(this.totals, { ...delta, errors: [] });
    }
  }

  /** After a failed pass: whether to give up (a 404: the service does not know the key; or too many in a row). */
  private givesUp(err: unknown, failures: number): boolean {
    return (err instanceof ReverseServiceError && err.status === 404) || failures >= this.config.maxConsecutiveErrors;
  }

  async runOnce(): Promise<DaemonReport> {
    this.waker.reset();
    const run = emptyReport();
    let failures = 0;
    let stalled = 0;
    let reach = true;
    while (!this.waker.stopping) {
      try {
        const result = await this.countedPass(run, reach);
        reach = false;
        failures = 0;
        if (result === 'idle') break;
        stalled = result === 'stalled' ? stalled + 1 : 0;
        if (stalled >= this.config.maxStalledPasses) {
          this.recordError(run, new ReverseStalledError(`the service asked for work ${stalled} times in a row and nothing moved`));
          run.ok = false;
          break;
        }
        if (result === 'stalled') await this.waker.sleep(this.config.pollIntervalMs);
      } catch (err) {
        if (err instanceof StopRequested) break;
        this.recordError(run, err);
        reach = true;
        if (this.givesUp(err, ++failures)) {
          run.ok = false;
          break;
        }
        await this.waker.sleep(Math.min(this.config.idlePollMaxMs, this.config.pollIntervalMs * 2 ** failures));
      }
    }
    addReport(this.totals, { ...emptyReport(), errors: run.errors });
    return run;
  }

  private async forever(): Promise<void> {
    let wait = this.config.pollIntervalMs;
    let reach = true;
    while (!this.waker.stopping) {
      const run = emptyReport();
      try {
        const result = await this.countedPass(run, reach);
        reach = false;
        if (result === 'worked') {
          wait = this.config.pollIntervalMs;
          continue;
        }
        if (result === 'idle') this.emit({ type: 'idle', nextPollMs: wait });
      } catch (err) {
        if (err instanceof StopRequested) break;
        this.recordError(run, err);
        addReport(this.totals, { ...emptyReport(), errors: run.errors });
        reach = true;
      }
      await this.waker.sleep(wait);
      wait = Math.min(this.config.idlePollMaxMs, wait * 2);
    }
  }

  start(): void {
    if (this.loop) return;
    this.waker.reset();
    this.loop = this.forever().finally(() => {
      this.loop = undefined;
    });
  }

  async stop(): Promise<void> {
    this.waker.stop();
    await this.loop;
  }

  report(): DaemonReport {
    const t = this.totals;
    return { ...t, pulled: { ...t.pulled }, failedByEntity: { ...t.failedByEntity }, pushed: { ...t.pushed }, sampled: { ...t.sampled }, errors: [...t.errors] };
  }
}
