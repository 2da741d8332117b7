/**
 * `storebridge map` through the real CLI: its usage mistakes (exit 2, the message first), `map
 * schema` printing the shipped JSON Schema, and `map infer` refusing a SQLite path with no database
 * (rather than creating an empty one) and naming an unreachable server without its password.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli } from './cli-process';

test.each([
  [['map'], 'storebridge map: expected a subcommand: infer, counts or schema'],
  [['map', '--bogus'], "storebridge map: Unknown option '--bogus'"],
  [['map', 'guess'], 'storebridge map: unknown subcommand "guess": expected infer, counts or schema'],
  [['map', 'infer', '--adapter', 'sqlite::memory:'], 'storebridge map infer: --products-table T is required'],
  [['map', 'counts', '--adapter', 'sqlite::memory:'], 'storebridge map counts: --map FILE is required'],
])('storebridge %j: exit 2, the message first', async (args, message) => {
  const r = await runCli(args);
  expect({ code: r.code, stdout: r.stdout, first: r.stderr.split('\n')[0] }).toEqual({ code: 2, stdout: '', first: message });
});

test('map schema prints docs/mapping.schema.json', async () => {
  const r = await runCli(['map', 'schema']);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual(JSON.parse(readFileSync(join(ROOT, 'docs', 'mapping.schema.json'), 'utf8')));
});

test('map infer: no SQLite file is created for a mistyped path; a server\'s password is never printed', async () => {
  const missing = join(ROOT, 'no-such-dir', 'shop.db');
  const r = await runCli(['map', 'infer', '--adapter', `sqlite:${missing}`, '--products-table', 'products']);
  expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 1, stderr: `storebridge map infer: invalid option "connection": there is no SQLite database at ${missing}\n`, stdout: '' });
  expect(existsSync(join(ROOT, 'no-such-dir'))).toBe(false);
  const pg = await runCli(['map', 'infer', '--adapter', 'postgres://shop:s3cr3t-pw@127.0.0.1:1/shop', '--products-table', 'products']);
  expect(pg.code).toBe(1);
  expect(pg.stderr).toMatch(/^storebridge map infer: cannot open postgres:\/\/shop:\*\*\*@127\.0\.0\.1:1\/shop: /);
  expect(pg.stderr).not.toContain('s3cr3t-pw');
});
