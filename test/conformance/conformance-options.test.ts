/**
 * The conformance entry points read their options with the kit's one policy (lib/options.ts): a bad
 * value names the option, an unknown one is refused with the closest known name.
 */
import { createMemoryAdapter } from '../../adapters/memory';
import { InvalidOptionError } from '../../lib/errors';
import { ADAPTER_CONFORMANCE_TESTS, runAdapterConformance } from '../../lib/conformance/adapter-suite';
import { checkEndpoints } from '../../lib/conformance/endpoint-checker';

describe('runAdapterConformance options', () => {
  const registered: string[] = [];
  const register = (name: string) => void registered.push(name);
  const factory = () => createMemoryAdapter();

  test('good options register the tests, less the skipped ones', () => {
    registered.length = 0;
    runAdapterConformance({ test: register, factory, skip: [ADAPTER_CONFORMANCE_TESTS[0]], propertyRuns: 1 });
    expect(registered).toEqual(ADAPTER_CONFORMANCE_TESTS.slice(1));
  });

  test('a bad value or an unknown option is refused, naming it; nothing is registered', () => {
    registered.length = 0;
    expect(() => runAdapterConformance({ factory } as never)).toThrow('invalid option "test": must be your test runner\'s test function');
    expect(() => runAdapterConformance({ test: register, factory: createMemoryAdapter() } as never)).toThrow('invalid option "factory": must be a function returning a fresh adapter');
    expect(() => runAdapterConformance({ test: register, factory, propertyRuns: 0 })).toThrow('invalid option "propertyRuns": must be an integer ≥ 1');
    expect(() => runAdapterConformance({ test: register, factory, skip: ['no such test'] })).toThrow('invalid option "skip": no test is named "no such test"');
    expect(() => runAdapterConformance({ test: register, factory, propertRuns: 3 } as never)).toThrow('invalid option "propertRuns": is not an option of runAdapterConformance (did you mean "propertyRuns"?)');
    expect(registered).toEqual([]);
  });
});

describe('checkEndpoints options', () => {
  const base = { baseUrl: 'http://127.0.0.1:1/store', svcKey: 'k' };

  test("its own options and the client's are refused with the option named, before any request", async () => {
    await expect(checkEndpoints({ ...base, byIdSamples: -1 })).rejects.toThrow('invalid option "byIdSamples": must be an integer ≥ 0');
    await expect(checkEndpoints({ ...base, writes: 'yes' } as never)).rejects.toThrow('invalid option "writes": must be true or false');
    await expect(checkEndpoints({ ...base, timeoutMs: 0 })).rejects.toThrow(/"timeoutMs": must be an integer ≥ 1/);
    await expect(checkEndpoints({ ...base, pagesize: 5 } as never)).rejects.toThrow(/"pagesize": is not an option of createStoreClient \(did you mean "pageSize"\?\)/);
    await expect(checkEndpoints(null as never)).rejects.toThrow(InvalidOptionError);
  });
});
