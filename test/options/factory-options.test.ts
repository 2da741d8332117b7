/**
 * Factories that took their options unchecked before issue 23 (a wrong value ignored, or failing
 * later, a misspelt name silently ignored) read them with the toolkit now: a bad value names the
 * option, an unknown one is refused with the closest name. Only refusals here: nothing connects.
 */
import { createMemoryAdapter } from '../../adapters/memory';
import { createRedisSyncSource, createReverseHttpSource } from '../../lib/dashboard';
import { createRedisStateStore } from '../../lib/reverse';
import { createStoreFetchHandler, createStoreListener } from '../../lib/server';

const store = { adapter: createMemoryAdapter(), svcKeys: ['k'] };

test('createStoreListener and createStoreFetchHandler: basePath and clientAddress', () => {
  expect(() => createStoreListener(store, { basePath: 'sync' })).toThrow('invalid option "basePath": must be a path starting with "/"');
  expect(() => createStoreFetchHandler(store, { clientAddress: 'x' as never })).toThrow('invalid option "clientAddress": must be a function');
  expect(() => createStoreListener(store, { basepath: '/sync' } as never)).toThrow('invalid option "basepath": is not an option of createStoreListener (did you mean "basePath"?)');
  expect(() => createStoreFetchHandler(store, { basePath: '/sync', clientAddress: () => '127.0.0.1' })).not.toThrow();
});

test('createRedisStateStore: prefix and quitOnClose', () => {
  const redis = {} as never;
  expect(() => createRedisStateStore(redis, { prefix: 5 } as never)).toThrow('invalid option "prefix": must be a string');
  expect(() => createRedisStateStore(redis, { quitOnclose: true } as never)).toThrow('invalid option "quitOnclose": is not an option of createRedisStateStore (did you mean "quitOnClose"?)');
  expect(() => createRedisStateStore(redis, { prefix: '', quitOnClose: true })).not.toThrow();
});

test('the dashboard sources: createReverseHttpSource options, createRedisSyncSource before it connects', () => {
  expect(() => createReverseHttpSource('http://127.0.0.1:1', { timeoutMs: 0 })).toThrow('invalid option "timeoutMs": must be an integer from 1 to 600000 (ms)');
  expect(() => createReverseHttpSource('http://127.0.0.1:1', { timeout: 5 } as never)).toThrow('invalid option "timeout": is not an option of createReverseHttpSource (did you mean "timeoutMs"?)');
  expect(() => createRedisSyncSource({ connection: 'redis://127.0.0.1:1', attempts: 0 })).toThrow('invalid option "attempts": must be an integer ≥ 1');
  expect(() => createRedisSyncSource({ connection: 'redis://127.0.0.1:1', queue: 'q' } as never)).toThrow('invalid option "queue": is not an option of createRedisSyncSource');
  expect(() => createRedisSyncSource({ connection: 'http://x' })).toThrow('invalid option "connection": must be a redis:// or rediss:// URL, ioredis options, or an ioredis client');
});
