/**
 * `--adapter` / `--into` values: `memory`, `sqlite:FILE`, `postgres:URL` (or a `postgres://` URL),
 * `mysql:URL` (or a `mysql://` URL). The SQL adapter is loaded only when asked for, so its optional
 * drivers are needed only by those who use them.
 */
import type { StoreAdapter } from '../adapter';
import { createMemoryAdapter } from '../../adapters/memory';

export const ADAPTER_SPEC_HELP = 'memory | sqlite:FILE | postgres:URL | mysql:URL';

/** How `--help` names the default of `defaultAdapterSpec()` (which creates its file when called). */
export const DEFAULT_ADAPTER_HELP = 'a fresh SQLite file in a temp dir, removed on exit';

let defaultSpec: string | undefined;

/**
 * The adapter `serve` and `demo` use when no `--adapter` is given: SQLite, in a fresh file in a new
 * directory under the OS temp dir (one per process, removed when the process exits). Fresh per run
 * so `--demo N` always serves exactly the demo catalog, and two runs never share data; pass
 * `--adapter sqlite:./store.db` to keep a database across runs.
 */
export function defaultAdapterSpec(): string {
  if (defaultSpec === undefined) {
    const { join } = require('node:path') as typeof import('node:path');
    const { tmpdir } = require('node:os') as typeof import('node:os');
    const { randomBytes } = require('node:crypto') as typeof import('node:crypto');
    const { rmSync } = require('node:fs') as typeof import('node:fs');
    const dir = join(tmpdir(), `storebridge-${process.pid}-${randomBytes(4).toString('hex')}`);
    defaultSpec = `sqlite:${join(dir, 'store.db')}`;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return defaultSpec;
}

export async function openAdapter(spec: string): Promise<StoreAdapter> {
  if (spec === 'memory') return createMemoryAdapter();
  if (/^(sqlite|postgres|postgresql|mysql|mariadb):/.test(spec)) {
    const sql = require('../../adapters/sql') as { openSqlAdapter(spec: string): Promise<StoreAdapter> };
    return sql.openSqlAdapter(spec);
  }
  throw new Error(`unknown adapter "${spec.replace(/\/\/[^@/]*@/, '//***@')}": expected ${ADAPTER_SPEC_HELP}`);
}
