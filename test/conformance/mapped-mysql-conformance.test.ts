import { runAdapterConformance } from '../../lib/conformance';
import { describeDatabase, sharedDatabase } from '../adapters/sql-databases';
import { dropShopAdapter, shopAdapter } from '../mapped/mapped-fixtures';

describeDatabase('mysql', 'mapped adapter on MariaDB conformance', () => {
  const database = sharedDatabase('mysql');
  afterAll(database.close);
  runAdapterConformance({
    test,
    factory: () => shopAdapter(database.db(), 'mysql'),
    teardown: dropShopAdapter,
    propertyRuns: 15,
  });
});
