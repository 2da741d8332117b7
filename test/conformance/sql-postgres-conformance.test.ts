import { runAdapterConformance } from '../../lib/conformance';
import { describeDatabase, dropAndClose, isolatedAdapter, sharedDatabase } from '../adapters/sql-databases';

describeDatabase('postgres', 'SQL adapter on PostgreSQL conformance', () => {
  const database = sharedDatabase('postgres');
  afterAll(database.close);
  runAdapterConformance({
    test,
    factory: () => isolatedAdapter(database.db()),
    teardown: dropAndClose,
    propertyRuns: 15,
  });
});
