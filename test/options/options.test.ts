import { InvalidOptionError } from '../../lib/errors';
import { z } from 'zod';
import { closest, defineOptions, opt, readOption } from '../../lib/options';

const parseWidget = defineOptions('createWidget', {
  pageSize: opt.int({ min: 1, max: 100 }).default(20),
  mode: opt.oneOf(['offset', 'cursor']).optional(),
  logger: opt.logger().optional(),
  onError: opt.fn<(e: unknown) => void>().optional(),
  url: opt.httpUrl().optional(),
  retry: opt.object<{ limit?: number }>('an object').optional(),
});

const failure = (options: unknown) => {
  try {
    parseWidget(options);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidOptionError);
    return { option: (err as InvalidOptionError).option, message: (err as Error).message };
  }
  throw new Error('expected a failure');
};

describe('defineOptions: one declaration per option, one policy', () => {
  it('returns the typed config with defaults', () => {
    const c = parseWidget({ mode: 'cursor' });
    const size: number = c.pageSize;
    expect(size).toBe(20);
    expect(c.mode).toBe('cursor');
  });

  it('a bad value names the option and says what was expected', () => {
    expect(failure({ pageSize: 0 })).toEqual({ option: 'pageSize', message: 'invalid option "pageSize": must be an integer from 1 to 100' });
    expect(failure({ pageSize: '5' }).option).toBe('pageSize');
    expect(failure({ mode: 'up' })).toEqual({ option: 'mode', message: 'invalid option "mode": must be "offset" or "cursor"' });
    expect(failure({ logger: { info() {} } }).message).toMatch(/pino-like logger/);
    expect(failure({ url: 'https://user:pw@x.example' }).message).toBe('invalid option "url": must not carry credentials (they would end up in logs; the key has its own option)');
    expect(failure({ url: 'ftp://x.example' }).message).toBe('invalid option "url": must be an http(s) URL');
    expect(failure({ url: 'x.example/p' }).message).toBe('invalid option "url": must be an absolute http(s) URL');
    expect(failure(null)).toEqual({ option: 'options', message: 'invalid option "options": createWidget expects an options object' });
  });

  it('an unknown option is refused, with the closest known name', () => {
    expect(failure({ pagesize: 5 })).toEqual({ option: 'pagesize', message: 'invalid option "pagesize": is not an option of createWidget (did you mean "pageSize"?)' });
    expect(failure({ zzzzzzzz: 1 }).message).toBe('invalid option "zzzzzzzz": is not an option of createWidget');
    expect(closest('ratelimit', ['rateLimit', 'logger'])).toBe('rateLimit');
    // A misspelt required option is told as a misspelling, not as a missing option.
    const parseNeeds = defineOptions('createGadget', { baseUrl: opt.httpUrl() });
    expect(() => parseNeeds({ baseURL: 'http://x' })).toThrow('invalid option "baseURL": is not an option of createGadget (did you mean "baseUrl"?)');
  });
});

describe('readOption: a value outside an options object, with the same readers and messages', () => {
  it('names the value, and a member below it by its path', () => {
    expect(readOption('lockTtlMs', opt.int({ min: 100 }), 500)).toBe(500);
    expect(() => readOption('lockTtlMs', opt.int({ min: 100, unit: 'ms' }), 5)).toThrow('invalid option "lockTtlMs": must be an integer ≥ 100 (ms)');
    const entry = z.strictObject({ key: opt.text(), expiresAt: z.number().optional() });
    expect(() => readOption('keys', z.array(entry), [{ key: 'a' }, { key: '' }])).toThrow('invalid option "keys.1.key": must be a non-empty string');
    expect(() => readOption('keys', z.array(entry), [{ key: 'a', expiresAT: 1 }])).toThrow('invalid option "keys.0.expiresAT": is not an option of keys (did you mean "expiresAt"?)');
  });

  it("'' as the name: members of a per-call argument, named alone", () => {
    expect(() => readOption('', z.object({ jobid: opt.int({ min: 0 }) }), { jobid: -1, other: 'kept' })).toThrow('invalid option "jobid": must be an integer ≥ 0');
  });
});

describe('opt.redis and opt.redisUrl', () => {
  it('a redis:// or rediss:// URL, or (opt.redis) an object: options or a client', () => {
    const parse = defineOptions('createQueue', { connection: opt.redis<unknown>(), url: opt.redisUrl().optional() });
    expect(parse({ connection: 'rediss://h:6380/1' }).connection).toBe('rediss://h:6380/1');
    expect(parse({ connection: { host: 'h' }, url: 'redis://h' }).url).toBe('redis://h');
    expect(() => parse({ connection: 'http://h' })).toThrow('invalid option "connection": must be a redis:// or rediss:// URL, ioredis options, or an ioredis client');
    expect(() => parse({ connection: 'redis://h', url: { host: 'h' } })).toThrow('invalid option "url": must be a redis:// or rediss:// URL');
  });
});
