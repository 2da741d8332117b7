/** connectRedisRateLimit reads its arguments with the options toolkit (lib/options.ts) before it connects. */
import { connectRedisRateLimit, parseRedisRateLimit } from '../../lib/server/redis-rate-limit';

test('a bad URL or option is refused, named, before any connection; an unknown option with the closest name', async () => {
  await expect(connectRedisRateLimit('http://127.0.0.1:6379')).rejects.toThrow('invalid option "url": must be a redis:// or rediss:// URL');
  await expect(connectRedisRateLimit('redis://127.0.0.1:1', { prefix: '' })).rejects.toThrow('invalid option "prefix": must be 1 to 100 visible ASCII characters');
  await expect(connectRedisRateLimit('redis://127.0.0.1:1', { connectTimeoutMs: 0 })).rejects.toThrow('invalid option "connectTimeoutMs": must be an integer from 1 to 600000 (ms)');
  await expect(connectRedisRateLimit('redis://127.0.0.1:1', { prefx: 'a:' } as never)).rejects.toThrow('invalid option "prefx": is not an option of connectRedisRateLimit (did you mean "prefix"?)');
  expect(parseRedisRateLimit('redis://127.0.0.1:6379')).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'storebridge:rl:', connectTimeoutMs: 5000, commandTimeoutMs: 2000 });
});
