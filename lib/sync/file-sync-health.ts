/**
 * The sync health of one machine, in a JSON file: each connection's last run and its last
 * `historySize` runs. `storebridge sync --state FILE` keeps it beside its checkpoint file
 * (`runsFileBeside`), and `storebridge dashboard --state FILE` reads it, so a single-machine setup
 * shows last runs, errors and history as a Redis one does.
 */
import { z } from 'zod';
import { compareIds, KeyedMutex } from '../adapter';
import { readJsonEntries, writeJsonFileAtomically } from './json-file';
import { checkHistorySize, lastRunOf, runRecordOf, type LastRun, type RunRecord, type SyncHistorySource } from './sync-health';
import type { SyncObservation, SyncObserver } from './sync-observer';

/** What the file keeps per connection. */
interface ConnectionRuns {
  lastRun: LastRun;
  /** Newest first. */
  history: RunRecord[];
}

// The records are the kit's own (`lastRunOf`): checked for shape, not member by member.
const RecordSchema = z.looseObject({ connection: z.string(), outcome: z.string(), at: z.string() });
const ConnectionRunsSchema = z.object({ lastRun: RecordSchema, history: z.array(RecordSchema) });
const parseConnectionRuns = (value: unknown): ConnectionRuns | undefined => {
  const parsed = ConnectionRunsSchema.safeParse(value);
  return parsed.success ? (parsed.data as unknown as ConnectionRuns) : undefined;
};

/** The run-report file kept beside a checkpoint file: `sync-state.json` → `sync-state.runs.json`. */
export function runsFileBeside(stateFile: string): string {
  return stateFile.endsWith('.json') ? `${stateFile.slice(0, -'.json'.length)}.runs.json` : `${stateFile}.runs.json`;
}

/**
 * An observer and a health source over a JSON file (written whole and replaced atomically after
 * each run). Runs of one process are serialized; two processes writing the same file at the same
 * moment may lose one record, so give each machine its own file.
 *
 * @example
 * ```ts
 * const health = new JsonFileSyncHealth('./sync-state.runs.json');
 * createSyncConnection({ id: 'shop-1', client, sink, observers: [health], intervalMs: 60_000 });
 * // later, or in another process:
 * console.log(await health.lastRuns());
 * ```
 */
export class JsonFileSyncHealth implements SyncObserver, SyncHistorySource {
  private readonly lock = new KeyedMutex();
  private readonly historySize: number;

  constructor(
    readonly file: string,
    options: { historySize?: number } = {},
  ) {
    this.historySize = checkHistorySize(options.historySize);
  }

  async observe(o: SyncObservation): Promise<void> {
    if (o.type !== 'run') return;
    await this.lock.run('file', async () => {
      const all = await this.readAll();
      const previous = all[o.connection];
      const lastRun = lastRunOf(o, previous?.lastRun);
      const history = this.historySize === 0 ? [] : [runRecordOf(lastRun), ...(previous?.history ?? [])].slice(0, this.historySize);
      all[o.connection] = { lastRun, history };
      await writeJsonFileAtomically(this.file, all);
    });
  }

  async lastRuns(): Promise<LastRun[]> {
    const all = await this.readAll();
    return Object.keys(all)
      .sort(compareIds)
      .map((name) => all[name].lastRun);
  }

  async lastRun(connection: string): Promise<LastRun | undefined> {
    return (await this.readAll())[connection]?.lastRun;
  }

  async history(connection: string, limit?: number): Promise<RunRecord[]> {
    const list = (await this.readAll())[connection]?.history ?? [];
    return list.slice(0, limit ?? list.length);
  }

  /** Every connection's runs, in a prototype-less map (a connection may be named `__proto__`). */
  private readAll(): Promise<Record<string, ConnectionRuns>> {
    return readJsonEntries(this.file, parseConnectionRuns, `run-report file ${this.file} is not a storebridge run-report file`);
  }
}
