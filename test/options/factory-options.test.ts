/**
 * Factories that took their options unchecked before issue 23 (a wrong value ignored, or failing
 * later, a misspelt name silently ignored) read them with the toolkit now: a bad value names the
 * option, an unknown one is refused with the closest name. Only refusals here: nothing connects.
 */
import { createMemoryAdapter } from '../../adapters/memory';
import { createRedisSyncSource, createReverseHttpSource } from '../../lib/dashboard';
import { createRedisStateStore, createReverseService } from '../../lib/reverse';
import { createSqlAdapter, createSqlConnectionRegistry, createSqlReverseStateStore } from '../../adapters/sql';
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

test('createSqlAdapter and createSqlReverseStateStore: declared options, refused before anything opens', async () => {
  await expect(createSqlAdapter({ connection: 'sqlite::memory:', maxWriteAttempts: 0 })).rejects.toThrow('invalid option "maxWriteAttempts": must be an integer');
  await expect(createSqlAdapter({ connection: 'sqlite::memory:', tablprefix: 'x_' } as never)).rejects.toThrow('invalid option "tablprefix": is not an option of createSqlAdapter (did you mean "tablePrefix"?)');
  await expect(createSqlAdapter({ connection: 'sqlite::memory:', kind: 'oracle' as never })).rejects.toThrow('invalid option "kind": must be "sqlite" or "postgres" or "mysql"');
  // A prefix given in a URL spec's query is checked like one given as an option.
  await expect(createSqlAdapter({ connection: 'postgres://127.0.0.1:1/db?tablePrefix=bad-prefix' })).rejects.toThrow(/invalid option "tablePrefix"/);
  const adapter = await createSqlAdapter({ connection: 'sqlite::memory:' });
  try {
    await expect(createSqlReverseStateStore(adapter, { table: '1st' })).rejects.toThrow('invalid option "table": letters, digits and "_" only');
    await expect(createSqlReverseStateStore(adapter, { tabel: 'x' } as never)).rejects.toThrow('invalid option "tabel": is not an option of createSqlReverseStateStore (did you mean "table"?)');
    await expect(createSqlConnectionRegistry(adapter, { table: 'a-b' })).rejects.toThrow('invalid option "table": letters, digits and "_" only');
    const registry = await createSqlConnectionRegistry(adapter);
    await expect(registry.put({ name: 'North', key: 'k-1' })).rejects.toThrow('invalid option "name": must be lower-case letters');
    await expect(registry.put({ name: 'north' })).rejects.toThrow('invalid option "key": give key or keyDigest (one of them)');
    await expect(registry.put({ name: 'north', keyDigest: 'abc' })).rejects.toThrow('invalid option "keyDigest": must be 64 hex digits');
    await expect(registry.put({ name: 'north', key: 'k-1', dialect: 'soap' as never })).rejects.toThrow('invalid option "dialect": must be');
    await expect(registry.put({ name: 'north', key: 'k-1', keyfile: 'x' } as never)).rejects.toThrow('invalid option "keyfile": is not an option');
    await registry.put({ name: 'north', key: 'k-1', dialect: 'click2sync' });
    expect(await registry.list()).toEqual([{ name: 'north', keyDigest: expect.stringMatching(/^[0-9a-f]{64}$/), dialect: 'click2sync' }]);
  } finally {
    await adapter.close();
  }
});

test("the reverse service's per-call arguments: a transaction request, a transaction number, a connection list", async () => {
  const service = createReverseService({ adapter: createMemoryAdapter(), connections: [{ key: 'options-test-key-1', name: 'shop' }] });
  try {
    expect(() => service.enqueue('shop', { kind: 'fetch' } as never)).toThrow('invalid option "request.kind": expected "pull", "push" or "pingsample"');
    expect(() => service.enqueue('shop', { kind: 'pull', entity: 'shoes' } as never)).toThrow('invalid option "request.entity": expected "products" or "orders" (or none: every entity, in order)');
    expect(() => service.enqueue('shop', { kind: 'pull', ids: ['a'] })).toThrow('invalid option "request.ids": a pull of given ids needs its entity');
    expect(() => service.enqueue('shop', { kind: 'push', full: 'yes' } as never)).toThrow('invalid option "request.full": must be true or false');
    expect(() => service.cancel('shop', 1.5)).toThrow('invalid option "transaction": must be an integer');
    await expect(service.setConnections('shop' as never)).rejects.toThrow('invalid option "connections": expected an array of keys');
    // Members a request of its kind does not take are dropped (the deployed service's buttons send some).
    await expect(service.enqueue('shop', { kind: 'push', full: true, note: 'from a button' } as never)).resolves.toBe(0);
    expect((await service.status('shop')).queue).toEqual([expect.objectContaining({ kind: 'push', full: true })]);
  } finally {
    await service.close();
  }
});
