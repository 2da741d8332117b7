/**
 * The sync side of the dashboard for a single machine: the checkpoint file of `storebridge sync
 * --state FILE` (`JsonFileCheckpointStore`: per connection the last wire `jobid`, the high water
 * per entity, the checkpoint of a run that has not finished) and the run reports `sync` keeps
 * beside it (`JsonFileSyncHealth` in `runsFileBeside(FILE)`: last run, history). Read-only: there
 * is no queue to run or pause.
 */
import { compareIds } from '../../adapter';
import { JsonFileCheckpointStore, type SyncState } from '../../sync/checkpoint-store';
import { JsonFileSyncHealth, runsFileBeside } from '../../sync/file-sync-health';
import { DashboardSourceError } from '../dashboard-errors';
import type { CheckpointView, SyncConnectionView, SyncSource } from '../dashboard-sources';
import type { Entity } from '../../contract/entities';

function checkpointOf(state: SyncState): CheckpointView {
  const view: CheckpointView = { jobid: state.jobid };
  if (state.highWater && Object.keys(state.highWater).length > 0) view.highWater = { ...state.highWater };
  const run = state.run;
  if (run) {
    const counts = (e: Entity) => {
      const p = run.progress[e];
      return { seen: p.seen, written: p.written, duplicates: p.duplicates, invalid: p.invalid };
    };
    view.unfinished = { jobid: run.jobid, mode: run.mode, startedAt: run.startedAt, ...(run.entity ? { entity: run.entity } : {}), products: counts('products'), orders: counts('orders') };
  }
  return view;
}

/**
 * @example
 * ```ts
 * import { createDashboardRouter, createStateFileSource } from 'storebridge/dashboard';
 * app.use(createDashboardRouter({ sync: createStateFileSource('./sync-state.json') }));
 * ```
 */
export function createStateFileSource(file: string): SyncSource {
  if (typeof file !== 'string' || file === '') throw new DashboardSourceError('state file', 'a file path is required');
  const label = `state file ${file}`;
  const runs = new JsonFileSyncHealth(runsFileBeside(file));
  const runsLabel = `run-report file ${runs.file}`;
  const checkpoints = new JsonFileCheckpointStore(file);
  /** Reads one of the files, every failure a one-line source error (never a path or stack beyond the file's name). */
  const read = async <T>(fileLabel: string, kind: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new DashboardSourceError(fileLabel, code ? `cannot be read (${code})` : err instanceof SyntaxError ? 'is not JSON' : `is not a storebridge ${kind} file`);
    }
  };
  return {
    label,
    capabilities: { runNow: false, pause: false },
    async connections(): Promise<SyncConnectionView[]> {
      const rows = new Map<string, SyncConnectionView>();
      for (const [name, state] of Object.entries(await read(label, 'checkpoint', () => checkpoints.readAll()))) rows.set(name, { name, checkpoint: checkpointOf(state) });
      for (const run of await read(runsLabel, 'run-report', () => runs.lastRuns())) rows.set(run.connection, { ...rows.get(run.connection), name: run.connection, lastRun: run });
      return [...rows.values()].sort((a, b) => compareIds(a.name, b.name));
    },
    history: (name, limit) => read(runsLabel, 'run-report', () => runs.history(name, limit)),
  };
}
