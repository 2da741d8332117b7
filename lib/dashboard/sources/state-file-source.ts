/**
 * The sync side of the dashboard for a single machine: the checkpoint file of `storebridge sync
 * --state FILE` (`JsonFileCheckpointStore`). It holds, per connection, the last wire `jobid`, the
 * high water per entity, and the checkpoint of a run that has not finished; it keeps no run
 * reports, so rows show those and no last-run figures or history. Read-only: there is no queue to
 * run or pause.
 */
import { promises as fs } from 'node:fs';
import { compareIds } from '../../adapter';
import { parseSyncState, type SyncState } from '../../sync/checkpoint-store';
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
  return {
    label,
    capabilities: { runNow: false, pause: false },
    async connections(): Promise<SyncConnectionView[]> {
      let text: string;
      try {
        text = await fs.readFile(file, 'utf8');
      } catch (err) {
        // No file yet: no run has saved a checkpoint.
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
      const rows: SyncConnectionView[] = [];
      for (const [name, value] of Object.entries(all as Record<string, unknown>)) {
        const state = parseSyncState(value);
        if (!state) throw new DashboardSourceError(label, 'is not a storebridge checkpoint file');
        rows.push({ name, checkpoint: checkpointOf(state) });
      }
      return rows.sort((a, b) => compareIds(a.name, b.name));
    },
    history: async () => [],
  };
}
