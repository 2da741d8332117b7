/**
 * What the daemon's pull and push share during a pass: the config, the transport, the pass's report,
 * a progress counter (a pass the service asked for that moved nothing is "stalled"), events, and the
 * stoppable sleep. Also the lenient readers of the service's small replies: deployed daemons read one
 * member and treat anything else as its absence, so do we.
 */
import { isEntity } from '../../contract/entities';
import { UPSTREAM_STATUS_MEMBERS } from '../../contract/messages';
import type { Entity } from '../../contract/entities';
import type { DaemonConfig, DaemonEvent, DaemonReport } from './daemon-options';
import type { Reply, Transport } from './daemon-transport';

export interface Session {
  readonly config: DaemonConfig;
  readonly transport: Transport;
  /** What this pass did. */
  readonly run: DaemonReport;
  /**
   * Real work in this pass: a transaction initialized, an item acknowledged, a page with items sent.
   * Finishes alone do not count: a service that keeps asking and never hands anything out must not
   * keep `runOnce` going.
   */
  progress: number;
  emit(event: DaemonEvent): void;
  sleep(ms: number): Promise<void>;
  /** Throws `StopRequested` when `stop()` was called (only at points where stopping is clean). */
  checkStop(): void;
}

/** Thrown inside a run when `stop()` was asked for, at a point where stopping is clean. */
export class StopRequested extends Error {
  override readonly name = 'StopRequested';
}

/** The connection status of an `upstreamstatus` (or initialize) reply: the first of `UPSTREAM_STATUS_MEMBERS` present. */
export function statusOf(reply: Reply): string | undefined {
  const found = UPSTREAM_STATUS_MEMBERS.map((m) => reply.body[m]).find((v) => v !== undefined && v !== null);
  return typeof found === 'string' ? found : undefined;
}

/** The entity of a `GET entity` reply, if it names one. */
export function entityIn(reply: Reply): Entity | undefined {
  return isEntity(reply.body.entity) ? reply.body.entity : undefined;
}

/** A string member of a reply. */
export function member(reply: Reply, name: string): string | undefined {
  const v = reply.body[name];
  return typeof v === 'string' ? v : undefined;
}
