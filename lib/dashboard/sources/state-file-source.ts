/**
 * The sync side of the dashboard for a single machine: the checkpoint file of `storebridge sync
 * --state FILE` (`JsonFileCheckpointStore`: per connection the last wire `jobid`, the high water
 * per entity, the checkpoint of a run that has not finished) and the run reports `sync` keeps
 * beside it (`JsonFileSyncHealth` in `runsFileBeside(FILE)`: last run, history). Read-only: there
 * is no queue to run or pause.
 */
import { promises as fs } from 'node:fs';
import { compareIds } from '../../adapter';
import { parseSyncState, type SyncState } from '../../sync/checkpoint-store';
import { JsonFileSyncHealth, runsFileBeside } from '../../sync/file-sync-health';
import { DashboardSourceError } from '../dashboard-errors';
import type { CheckpointView, SyncConnectionView, SyncSource } from '../dashboard-sources';

function checkpointOf(state: SyncState): CheckpointView {
  const view: CheckpointView = { jobid: state.jobid };
  if (state.highWater && Object.keys(state.highWater).length > 0) view.highWater = { ...state.highWater };
  const run = state.run;
  if (run) {
    const counts = (e: 'products' | 'orders') => {
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
  /** Reads through `runs`, every failure a one-line source error (never a path or stack beyond the file's name). */
  const read = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new DashboardSourceError(runsLabel, code ? `cannot be read (${code})` : err instanceof SyntaxError ? 'is not JSON' : 'is not a storebridge run-report file');
    }
  };
  return {
    label,
    capabilities: { runNow: false, pause: false },
    async connections(): Promise<SyncConnectionView[]> {
      const rows = new Map<string, SyncConnectionView>();
      for (const [name, state] of await readStates(file, label)) rows.set(name, { name, checkpoint: checkpointOf(state) });
      for (const run of await read(() => runs.lastRuns())) rows.set(run.connection, { ...rows.get(run.connection), name: run.connection, lastRun: run });
      return [...rows.values()].sort((a, b) => compareIds(a.name, b.name));
    },
    history: (name, limit) => read(() => runs.history(name, limit)),
  };
}

/** The checkpoint file's connections (none while no run has saved one). */
async function readStates(file: string, label: string): Promise<Array<[string, SyncState]>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new DashboardSourceError(label, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let all: unknown;
  try {
    all = JSON.parse(text);
  } catch {
    throw new DashboardSourceError(label, 'is not JSON');
  }
  if (!all || typeof all !== 'object' || Array.isArray(all)) throw new DashboardSourceError(label, 'is not a storebridge checkpoint file');
  return Object.entries(all as Record<string, unknown>).map(([name, value]) => {
    const state = parseSyncState(value);
    if (!state) throw new DashboardSourceError(label, 'is not a storebridge checkpoint file');
    return [name, state];
  });
}
