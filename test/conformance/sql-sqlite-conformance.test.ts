import { createSqlAdapter } from '../../adapters/sql';
import { runAdapterConformance } from '../../lib/conformance';

runAdapterConformance({
  describe,
  test,
  name: 'SQL adapter on SQLite (in memory) conformance',
  factory: () => createSqlAdapter({ connection: 'sqlite::memory:' }),
});
