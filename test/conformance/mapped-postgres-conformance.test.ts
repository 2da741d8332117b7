import { runAdapterConformance } from '../../lib/conformance';
import { describeDatabase, sharedDatabase } from '../adapters/sql-databases';
import { dropShopAdapter, shopAdapter } from '../mapped/mapped-fixtures';

describeDatabase('postgres', 'mapped adapter on PostgreSQL conformance', () => {
  const database = sharedDatabase('postgres');
  afterAll(database.close);
  runAdapterConformance({
    test,
    factory: () => shopAdapter(database.db(), 'postgres'),
    teardown: dropShopAdapter,
    propertyRuns: 15,
  });
});
