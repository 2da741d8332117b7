import { InvalidOptionError } from '../../lib/errors';
import { closest, defineOptions, opt } from '../../lib/options';

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
    expect(failure({ url: 'https://user:pw@x.example' }).message).toMatch(/without credentials/);
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
