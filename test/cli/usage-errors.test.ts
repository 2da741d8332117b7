/**
 * A usage mistake is the message, then one line saying where the help is; exit status 2; nothing
 * on stdout (issue 21: one error line used to arrive above 33 lines of help). Run on the real CLI,
 * for every command `storebridge help` lists, so a command added later is held to it too.
 */
import { runCli } from './cli-process';

const POINTER = (name: string) => `Run "storebridge help ${name}" for its options.`;

/** The commands as `storebridge help` lists them (two-space indent, name, two spaces, summary). */
async function commands(): Promise<string[]> {
  const { stdout } = await runCli(['help']);
  return [...stdout.matchAll(/^ {2}([a-z][a-z-]*) {2,}\S/gm)].map((m) => m[1]);
}

it('every command: an unknown flag is two lines on stderr, exit 2', async () => {
  const names = await commands();
  expect(names).toEqual(expect.arrayContaining(['serve', 'demo', 'sync', 'check', 'reverse-service', 'daemon', 'openapi', 'dashboard']));
  for (const name of names) {
    const r = await runCli([name, '--bogus']);
    expect({ name, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ name, code: 2, stdout: '', stderr: `storebridge ${name}: Unknown option '--bogus'\n${POINTER(name)}\n` });
  }
}, 60_000);

it.each([
  [['serve', '--port'], "storebridge serve: Option '--port <value>' argument missing"],
  [['serve', '--port', '80x', '--key', 'k'], 'storebridge serve: --port must be an integer from 0 to 65535, got "80x"'],
  [['dashboard', '--host', '0.0.0.0', '--state', 'x.json'], 'storebridge dashboard: listening on 0.0.0.0 (not loopback) needs an operator token: --token-env ENV'],
  [['reverse-service', '--port', '0', '--connection', 'C', '--state', 'file.json'], 'storebridge reverse-service: --state must be adapter, memory or a redis:// URL'],
  // Values a factory's options check, checked there only: its message, naming the flag (lib/cli/flags.ts flagProblem).
  [['serve', '--port', '0', '--key', 'has space'], 'storebridge serve: the key must be a non-empty string of visible ASCII characters (no spaces)'],
  [['serve', '--port', '0', '--key', 'k', '--redis', 'http://127.0.0.1:6379'], 'storebridge serve: --redis must be a redis:// or rediss:// URL'],
  [['serve', '--port', '0', '--key', 'k', '--redis-prefix', 'a b'], 'storebridge serve: --redis-prefix must be 1 to 100 visible ASCII characters'],
  [['dashboard', '--redis', 'redis://127.0.0.1:1', '--queue', 'a b'], 'storebridge dashboard: --queue must be 1-100 letters, digits, or . _ -'],
  [['daemon', '--service', 'ftp://x', '--connection', 'k', '--adapter', 'memory'], 'storebridge daemon: --service must be an http(s) URL'],
  [['sync', 'http://a.example/kkkkkkkk', '--key', 'kkkkkkkk'], 'storebridge sync: the URL must not contain the key (it is sent in the key headers)'],
  [['openapi', '--server', 'http://x/?q'], 'storebridge openapi: --server must be an absolute http(s) URL without credentials, query or fragment'],
])('storebridge %j: the message and the pointer to the help', async (args, message) => {
  const r = await runCli(args);
  expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 2, stdout: '', stderr: `${message}\n${POINTER(args[0])}\n` });
});

it('an unknown command points to the list of commands', async () => {
  const r = await runCli(['sevre']);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: 'storebridge: unknown command "sevre"\nRun "storebridge help" for the commands.\n' });
});

it('the help is still there when asked for, on stdout, exit 0', async () => {
  const r = await runCli(['help', 'serve']);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^usage: storebridge serve /);
  expect(r.stdout.split('\n').length).toBeGreaterThan(20);
});
