/**
 * `storebridge openapi` through the real CLI (needs the build: `npx tsc -p tsconfig.build.json`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createOpenApiDocument } from '../../lib/openapi';

const ROOT = join(__dirname, '..', '..');
const cli = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin', 'storebridge.js'), 'openapi', ...args], { encoding: 'utf8', timeout: 20_000 });

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'lib', 'cli', 'commands', 'openapi.js'))) throw new Error('build first: npx tsc -p tsconfig.build.json');
});

describe('storebridge openapi', () => {
  it('prints the whole document as JSON, the same as createOpenApiDocument()', () => {
    const r = cli();
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(createOpenApiDocument())));
  });

  it('--only webhooks --server URL: the webhooks alone, with the server', () => {
    const r = cli('--only', 'webhooks', '--server', 'https://shop.example.com/sync', '--compact');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.servers).toEqual([{ url: 'https://shop.example.com/sync' }]);
    expect(Object.keys(doc.paths).sort()).toEqual(['/orders', '/orders/{id}', '/products', '/products/{id}']);
  });

  it('--only reverse: the {P}/… API alone, without the SvcKey scheme', () => {
    const doc = JSON.parse(cli('--only', 'reverse').stdout);
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/api/adapters/custom/reverse/connection/{connection_key}/'))).toBe(true);
    expect(doc.components.securitySchemes).toBeUndefined();
  });

  it.each([
    [['--only', 'graphql'], /--only must be webhooks or reverse/],
    [['--server', 'not a url'], /--server must be an absolute http\(s\) URL/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['extra'], /Unexpected argument 'extra'/],
  ])('%j is a usage error (exit 2, nothing on stdout)', (args, message) => {
    const r = cli(...args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it('--help prints the usage', () => {
    const r = cli('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/usage: storebridge openapi/);
  });
});
