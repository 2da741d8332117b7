import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defineCommand, flagProblem } from '../../lib/cli/flags';
import { InvalidOptionError } from '../../lib/errors';

const command = defineCommand({
  name: 'demo-cmd',
  usage: 'URL [options]',
  summary: 'A command for the tests.',
  positionals: { name: 'URL', min: 1, max: 1 },
  flags: {
    key: { type: 'secret', env: 'TEST_KEY', required: true, metavar: 'K', help: 'the key' },
    'page-size': { type: 'int', min: 0, max: 1000, default: 100, help: 'items per page' },
    timeout: { type: 'int', min: 1, max: 60_000, unit: 'ms', help: 'time limit' },
    mode: { type: 'string', choices: ['offset', 'cursor'], default: 'offset', help: 'paging' },
    'jwt-key': { type: 'list', metavar: 'KID=ENV', help: 'a JWT key', section: 'scale' },
    json: { type: 'boolean', help: 'JSON output' },
  },
});

const parse = (args: string[], env: NodeJS.ProcessEnv = {}) => command.parse(args, env);

describe('defineCommand: one declaration per flag', () => {
  it('parses typed, camel-cased values with defaults', () => {
    const r = parse(['http://x', '--key', 'k1', '--page-size', '5', '--jwt-key', 'a=A', '--jwt-key', 'b=B', '--json']);
    expect(r).toEqual({
      ok: true,
      args: { positionals: ['http://x'], values: { key: 'k1', pageSize: 5, timeout: undefined, mode: 'offset', jwtKey: ['a=A', 'b=B'], json: true } },
    });
    if (r.ok) {
      // Compile-time: the types follow the declaration.
      const size: number = r.args.values.pageSize;
      const mode: 'offset' | 'cursor' = r.args.values.mode;
      const timeout: number | undefined = r.args.values.timeout;
      expect([size, mode, timeout]).toEqual([5, 'offset', undefined]);
    }
  });

  it('refuses each mistake with one message naming the flag', () => {
    const message = (args: string[], env?: NodeJS.ProcessEnv) => {
      const r = parse(args, env);
      return r.ok ? undefined : r.message;
    };
    expect(message(['u', '--key', 'k', '--page-size', 'abc'])).toBe('--page-size must be an integer from 0 to 1000, got "abc"');
    expect(message(['u', '--key', 'k', '--timeout', '0'])).toBe('--timeout must be an integer from 1 to 60000 (ms), got "0"');
    expect(message(['u', '--key', 'k', '--mode', 'up'])).toBe('--mode must be offset or cursor, got "up"');
    expect(message(['u', '--key', 'k', '--bogus'])).toMatch(/Unknown option '--bogus'/);
    expect(message(['--key', 'k'])).toBe('expected exactly 1 URL argument, got 0');
    expect(message(['u'])).toMatch(/a key is required: --key-file FILE, the TEST_KEY environment variable, or --key K/);
  });

  it('a secret comes from the flag, a file or the environment, never echoed', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-flags-'));
    const file = path.join(dir, 'key');
    writeFileSync(file, 'from-file-secret\n');
    const key = (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const r = parse(['u', ...args], env);
      return r.ok ? r.args.values.key : r.message;
    };
    expect(key(['--key-file', file])).toBe('from-file-secret');
    expect(key([], { TEST_KEY: 'from-env' })).toBe('from-env');
    expect(key(['--key', 'inline'], { TEST_KEY: 'from-env' })).toBe('inline');
    expect(key(['--key', 'inline-secret', '--key-file', file])).toBe('give --key or --key-file, not both');
    const missing = key(['--key-file', path.join(dir, 'nope')]);
    expect(missing).toMatch(/--key-file: cannot read .*nope.* \(ENOENT\)/);
    writeFileSync(file, 'two\nlines-secret\n');
    const twoLines = key(['--key-file', file]);
    expect(twoLines).toMatch(/must be one line/);
    expect(twoLines).not.toMatch(/lines-secret/);
  });

  it('the help lists every flag once, secrets with their file form first', () => {
    const help = command.help();
    expect(help).toMatch(/^usage: storebridge demo-cmd URL \[options\]/);
    for (const flag of ['--key-file FILE', '--key K', '--page-size N', '--timeout N', '--mode V', '--jwt-key KID=ENV', '--json', '-h, --help']) {
      expect(help.split(flag).length - 1).toBe(1);
    }
    expect(help.indexOf('--key-file')).toBeLessThan(help.indexOf('--key K'));
    expect(help).toMatch(/default 100/);
    expect(help).toMatch(/\nscale:\n/);
  });

  it('refuses a declaration that clashes with a generated flag', () => {
    expect(() => defineCommand({ name: 'x', usage: '', summary: '', flags: { key: { type: 'secret', env: 'K', help: '' }, 'key-file': { type: 'string', help: '' } } })).toThrow(/clashes/);
  });
});

describe('flagProblem: a factory checks a value once; its option error names the flag', () => {
  const flags = { connection: '--redis', retry: '--retry' };
  it('maps an option (or a member of one) to the flag, with the factory\'s words', () => {
    expect(flagProblem(new InvalidOptionError('connection', 'must be a redis:// or rediss:// URL'), flags)).toBe('--redis must be a redis:// or rediss:// URL');
    expect(flagProblem(new InvalidOptionError('retry.limit', 'must be an integer ≥ 0'), flags)).toBe('--retry must be an integer ≥ 0');
  });
  it('leaves other errors, and options no flag set, to the caller', () => {
    expect(flagProblem(new InvalidOptionError('adapter', 'must be an adapter'), flags)).toBeUndefined();
    expect(flagProblem(new Error('connection refused'), flags)).toBeUndefined();
  });
});
