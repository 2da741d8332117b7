import { runAdapterConformance } from '../../lib/conformance';
import { sqliteShopAdapter } from '../mapped/mapped-fixtures';

runAdapterConformance({
  describe,
  test,
  name: 'mapped adapter on SQLite (in memory) conformance',
  factory: sqliteShopAdapter,
});
