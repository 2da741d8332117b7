/**
 * A read-only sync source over any health source: `MemorySyncHealth` in a process that runs its
 * connections itself (`createSyncConnection({ observers: [health] })`), or a `RedisSyncHealth`
 * without a queue. Rows show last runs and histories; there is no schedule to run or pause.
 */
import { compareIds } from '../../adapter';
import { hasHistory, type SyncHealthSource } from '../../sync/sync-health';
import type { SyncSource } from '../dashboard-sources';

/**
 * @example
 * ```ts
 * const health = new MemorySyncHealth();
 * const conn = createSyncConnection({ id: 'shop-1', client, sink, observers: [health], intervalMs: 60_000 });
 * app.use(createDashboardRouter({ sync: createHealthSyncSource(health) }));
 * ```
 */
export function createHealthSyncSource(health: SyncHealthSource, label = 'sync health (this process)'): SyncSource {
  return {
    label,
    capabilities: { runNow: false, pause: false },
    async connections() {
      return (await health.lastRuns()).map((r) => ({ name: r.connection, lastRun: r })).sort((a, b) => compareIds(a.name, b.name));
    },
    history: async (name, limit) => (hasHistory(health) ? health.history(name, limit) : []),
  };
}
