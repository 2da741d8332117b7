/**
 * The reverse service's Prometheus metrics (recorded only when the owner passes `metrics`): calls
 * answered by connection, call and status; answers delayed by the pace (`maxCallsPerSecond`) and
 * for how long; and every per-entity counter of the status view as it moves (items delivered,
 * redelivered, succeeded, failed, given up unacknowledged, received, refused, …). Label values come
 * from fixed sets (call names, statuses, entities, counter names) and the connections' configured
 * names, never from request data. Names and labels are listed in docs/observability.md.
 */
import type { Entity } from '../../contract/entities';
import { LATENCY_BUCKETS_SECONDS, metricsOf, type Metrics, type Registry } from '../../metrics';
import type { EntityCounts } from './reverse-machine-state';
import { ENTITIES } from '../../contract/entities';

export interface ReverseMetrics {
  call(connection: string, call: string, status: number): void;
  delayed(connection: string, seconds: number): void;
  /** A call ran again: another service over the same state store (a replica) changed its connection meanwhile. */
  conflict(connection: string): void;
  /** Adds what the counters moved by during a call. */
  counts(connection: string, before: Readonly<Record<Entity, EntityCounts>>, after: Readonly<Record<Entity, EntityCounts>>): void;
}

export function createReverseMetrics(target: Registry | Metrics): ReverseMetrics {
  const metrics = metricsOf(target);
  const calls = metrics.counter({ name: 'reverse_calls_total', help: 'Reverse-connection daemon calls answered, by connection, call and HTTP status', labelNames: ['connection', 'call', 'status'] });
  const delays = metrics.histogram({ name: 'reverse_call_delay_seconds', help: 'Answers delayed because the connection called faster than maxCallsPerSecond, and by how long', labelNames: ['connection'], buckets: [...LATENCY_BUCKETS_SECONDS] });
  const items = metrics.counter({ name: 'reverse_items_total', help: 'Items of reverse connections by connection, entity and what happened (the status view counters)', labelNames: ['connection', 'entity', 'outcome'] });
  const conflicts = metrics.counter({ name: 'reverse_state_conflicts_total', help: 'Reverse calls run again because another replica changed their connection meanwhile', labelNames: ['connection'] });
  return {
    conflict: (connection) => conflicts.inc({ connection }),
    call: (connection, call, status) => calls.inc({ connection, call, status: String(status) }),
    delayed: (connection, seconds) => delays.observe({ connection }, seconds),
    counts(connection, before, after) {
      for (const entity of ENTITIES) {
        for (const outcome of Object.keys(after[entity]) as Array<keyof EntityCounts>) {
          const delta = after[entity][outcome] - (before[entity][outcome] ?? 0);
          if (delta > 0) items.inc({ connection, entity, outcome }, delta);
        }
      }
    },
  };
}
