import { createMemoryAdapter } from '../../adapters/memory';
import { runAdapterConformance } from '../../lib/conformance';

runAdapterConformance({ describe, test, name: 'memory adapter conformance', factory: () => createMemoryAdapter() });
