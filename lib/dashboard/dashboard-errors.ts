/**
 * The dashboard's errors (`docs/errors.md`, `docs/dashboard.md`). Messages never hold a key or the
 * operator token.
 */
import { StorebridgeError } from '../errors';

/** An optional package the dashboard needs for a feature is not installed (one line: what to install). */
export class DashboardDependencyError extends StorebridgeError {
  override readonly name = 'DashboardDependencyError';
  readonly code = 'DASHBOARD_DEPENDENCY';
  constructor(
    readonly feature: string,
    readonly packages: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(`${feature} needs ${packages.join(' and ')}: npm install ${packages.join(' ')}`, options);
  }
}

/** A data source of the dashboard (Redis, a state file, a reverse service) could not be read or refused an action. */
export class DashboardSourceError extends StorebridgeError {
  override readonly name = 'DashboardSourceError';
  readonly code = 'DASHBOARD_SOURCE';
  constructor(
    readonly source: string,
    detail: string,
    readonly status?: number,
  ) {
    super(`${source}: ${detail}`);
  }
}
