/**
 * `--adapter` / `--into` values: `memory`, `sqlite:FILE`, `postgres:URL` (or a `postgres://` URL),
 * `mysql:URL` (or a `mysql://` URL). The SQL adapter is loaded only when asked for, so its optional
 * drivers are needed only by those who use them.
 */
import type { StoreAdapter } from '../adapter';
import { createMemoryAdapter } from '../../adapters/memory';

export const ADAPTER_SPEC_HELP = 'memory | sqlite:FILE | postgres:URL | mysql:URL';

/** The adapter `serve` and `demo` use when no `--adapter` is given. */
export function defaultAdapterSpec(): string {
  return 'memory';
}

export async function openAdapter(spec: string): Promise<StoreAdapter> {
  if (spec === 'memory') return createMemoryAdapter();
  if (/^(sqlite|postgres|postgresql|mysql|mariadb):/.test(spec)) {
    const sql = require('../../adapters/sql') as { openSqlAdapter(spec: string): Promise<StoreAdapter> };
    return sql.openSqlAdapter(spec);
  }
  throw new Error(`unknown adapter "${spec.replace(/\/\/[^@/]*@/, '//***@')}": expected ${ADAPTER_SPEC_HELP}`);
}
