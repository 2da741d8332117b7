import { runAdapterConformance } from '../../lib/conformance';
import { describeDatabase, dropAndClose, isolatedAdapter, sharedDatabase } from '../adapters/sql-databases';

describeDatabase('mysql', 'SQL adapter on MariaDB conformance', () => {
  const database = sharedDatabase('mysql');
  afterAll(database.close);
  runAdapterConformance({
    test,
    factory: () => isolatedAdapter(database.db()),
    teardown: dropAndClose,
    propertyRuns: 15,
  });
});
