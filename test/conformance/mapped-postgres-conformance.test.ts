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
    // The shop's text columns are PostgreSQL text, which cannot hold U+0000: the adapter refuses
    // such a write with UnstorableValueError and stores nothing (tested in mapped-writes.test.ts),
    // where this case wants a NUL in a title stored exactly (the SQL adapter keeps its documents as
    // JSON text, where a NUL is the escape \u0000, so it can).
    skip: ['a NUL in a written _id or sku is refused with UnstorableValueError or stored exactly; in other fields it is stored exactly'],
  });
});
