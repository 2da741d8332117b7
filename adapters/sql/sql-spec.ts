/**
 * `--adapter sqlite:FILE | postgres:URL | mysql:URL` (and `postgresql:`, `mariadb:`, bare
 * `postgres://…` / `mysql://…` URLs): the SQL adapter in the CLI's adapter registry
 * (lib/adapter-registry.ts). Found by the CLI because it is `adapters/<name>/<name>-spec`.
 *
 * The adapter module, Kysely and the driver are required only in `open`, so matching a spec (or
 * printing `--help`) loads none of them (the dialect table it reads its schemes from loads nothing).
 */
import type { StoreAdapter } from '../../lib/adapter';
import type { AdapterRegistration } from '../../lib/adapter-registry';
import { SQL_DIALECTS, SQL_KINDS } from './sql-dialects';

export const storebridgeAdapter: AdapterRegistration = {
  prefix: SQL_KINDS.flatMap((kind) => SQL_DIALECTS[kind].schemes),
  describe: 'sqlite:FILE | postgres:URL | mysql:URL',
  open(spec) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sql = require('./sql-adapter') as { openSqlAdapter(spec: string): Promise<StoreAdapter> };
    return sql.openSqlAdapter(spec);
  },
};
