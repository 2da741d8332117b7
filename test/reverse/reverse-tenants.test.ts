/**
 * A multi-tenant reverse service: connections from a registry (a file for the CLI, a SQL table
 * for the library), each with its own catalog (two daemons pushing the same `_id`s keep theirs
 * apart), the registry re-read while the service runs (an invalid file keeps the last good list),
 * and a removed connection wound down: its running transaction cancelled, its daemon answered 404
 * with the members a deployed daemon reads as "nothing to do", its state kept for a re-add.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryAdapter } from '../../adapters/memory';
import { createSqlAdapter, createSqlConnectionRegistry } from '../../adapters/sql';
import { demoCatalog } from '../../lib/demo';
import { createFileRegistry, createReverseService, followRegistry, parseConnectionsFile } from '../../lib/reverse';
import { REVERSE_BASE_PATH } from '../../lib/contract';
import { runCli } from '../cli/cli-process';
import { startServer, waitUntil, lastJsonLine, crashTraces, type CliServer } from '../faults/fault-kit';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const KEYS = { north: 'tenant-north-key-0001', south: 'tenant-south-key-0002', east: 'tenant-east-key-0003' };

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'sb-tenants-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes the registry file whole and at once (a rename), as a deploy tool would. */
function writeRegistry(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

test('registry files: JSON and CSV, key files relative to the file, digests; every problem names its entry and never the key', () => {
  writeFileSync(join(dir, 'north.key'), `${KEYS.north}\n`);
  const json = parseConnectionsFile(JSON.stringify([{ name: 'north', keyFile: 'north.key', dialect: 'click2sync' }, { name: 'south', keyDigest: sha256(KEYS.south) }]), dir);
  expect(json).toEqual([{ name: 'north', key: KEYS.north, dialect: 'click2sync' }, { name: 'south', keyDigest: sha256(KEYS.south) }]);
  const csv = parseConnectionsFile(`# tenants\nname,key_file,key_digest,dialect\nnorth,north.key,,click2sync\nsouth,,${sha256(KEYS.south)},\n`, dir);
  expect(csv).toEqual(json);
  expect(parseConnectionsFile(JSON.stringify({ connections: [] }), dir)).toEqual([]);
  const bad: Array<[string, RegExp]> = [
    ['[{"name":"North","keyDigest":"' + sha256('x') + '"}]', /connections\[1\].*lower-case/],
    ['[{"name":"a","keyFile":"north.key","keyDigest":"' + sha256('x') + '"}]', /connections\[1\].*one of them/],
    ['[{"name":"a","keyFile":"missing.key"}]', /connections\[1\].*cannot read the key file "missing.key" \(ENOENT\)/],
    ['[{"name":"a","keyDigest":"' + sha256('x') + '"},{"name":"a","keyDigest":"' + sha256('y') + '"}]', /connections\[2\].*used twice/],
    ['[{"name":"a","keyDigest":"' + sha256('x') + '","dialect":"soap"}]', /connections\[1\].*dialect/],
    ['[{"name":', /cannot read the file/],
    ['key,dialect\nabc,spec', /header must name/],
  ];
  for (const [text, message] of bad) {
    expect(() => parseConnectionsFile(text, dir)).toThrow(message);
  }
  try {
    parseConnectionsFile('[{"name":"a","keyFile":"north.key"},{"name":"a","keyFile":"north.key"}]', dir);
  } catch (err) {
    expect((err as Error).message).not.toContain(KEYS.north);
  }
});

describe('reverse-service --connections FILE (SQLite: a table prefix per connection)', () => {
  let service: CliServer;
  let registry: string;
  let db: string;
  afterAll(async () => service?.stop());

  const call = (key: string, method: string, path: string) => fetch(`${service.url}${REVERSE_BASE_PATH}/${key}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });

  /** A daemon's store holding the demo catalog, every title marked with `mark`: same `_id`s, other content. */
  async function daemonStore(mark: string): Promise<string> {
    const file = join(dir, `daemon-${mark}.db`);
    const a = await createSqlAdapter({ connection: `sqlite:${file}` });
    const catalog = demoCatalog(30);
    await a.products.upsertMany(catalog.products.map((p) => ({ ...p, title: `${mark}: ${p.title}` })), { lastUpdated: 'keep', now: Date.now(), signal: AbortSignal.timeout(5000) });
    await a.close();
    return `sqlite:${file}`;
  }

  async function pushFrom(name: keyof typeof KEYS, store: string): Promise<Record<string, any>> {
    const queued = await fetch(`${service.url}/connections/${name}/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind":"push"}' });
    expect(queued.status).toBe(200);
    const run = await runCli(['daemon', '--service', service.url, '--adapter', store, '--once', '--json', '--poll-ms', '20'], { STOREBRIDGE_CONNECTION: KEYS[name] });
    expect(run.code).toBe(0);
    return lastJsonLine(run.stdout);
  }

  test('two connections push the same ids: each catalog holds its own', async () => {
    writeFileSync(join(dir, 'north.key'), `${KEYS.north}\n`);
    registry = join(dir, 'connections.json');
    writeRegistry(registry, JSON.stringify([{ name: 'north', keyFile: 'north.key', dialect: 'click2sync' }, { name: 'south', keyDigest: sha256(KEYS.south) }]));
    db = join(dir, 'service.db');
    service = await startServer(['reverse-service', '--connections', registry, '--adapter', `sqlite:${db}`, '--registry-poll-ms', '200']);
    expect(await pushFrom('north', await daemonStore('N'))).toMatchObject({ ok: true, pushed: { products: 30 } });
    expect(await pushFrom('south', await daemonStore('S'))).toMatchObject({ ok: true, pushed: { products: 30 } });
    for (const [name, mark] of [['north', 'N'], ['south', 'S']] as const) {
      const a = await createSqlAdapter({ connection: `sqlite:${db}`, tablePrefix: `storebridge_c_${name}_`, migrate: false });
      const items = await a.products.list({ sortorder: 'asc', limit: 1000, signal: AbortSignal.timeout(5000) });
      await a.close();
      expect(items).toHaveLength(30);
      expect(items.every((x) => (JSON.parse(x.json) as { title: string }).title.startsWith(`${mark}: `))).toBe(true);
    }
    // The shared tables hold nothing: no connection writes there.
    const shared = await createSqlAdapter({ connection: `sqlite:${db}`, migrate: false });
    expect(await shared.products.count({ signal: AbortSignal.timeout(5000) })).toBe(0);
    await shared.close();
    const views = (await (await fetch(`${service.url}/connections`)).json()) as { connections: Array<{ connection: string; dialect: string; products: { received: number } }> };
    expect(views.connections.map((v) => [v.connection, v.dialect, v.products.received])).toEqual([
      ['north', 'click2sync', 30],
      ['south', 'spec', 30],
    ]);
  }, 120_000);

  test('the file changes while it runs: a connection added is served, an invalid file keeps the last good list, a removed one is wound down and keeps its state', async () => {
    // Added: east.
    writeRegistry(registry, JSON.stringify([{ name: 'north', keyFile: 'north.key', dialect: 'click2sync' }, { name: 'south', keyDigest: sha256(KEYS.south) }, { name: 'east', keyDigest: sha256(KEYS.east) }]));
    await waitUntil('east to be served', async () => (await call(KEYS.east, 'GET', '/ping')).status === 200, 20_000);
    // An invalid file: logged, nothing changes.
    writeRegistry(registry, '[{"name": "north", "keyFile": "north.key"}, {"name": "BAD NAME"}]');
    await waitUntil('the error to be logged', () => /connections\[2\].*"name" must be/.test(service.stderr()), 20_000);
    for (const key of Object.values(KEYS)) expect((await call(key, 'GET', '/ping')).status).toBe(200);
    expect(service.stderr()).not.toContain(KEYS.north);
    // South starts a pull, then is removed mid-transaction.
    await fetch(`${service.url}/connections/south/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind":"pull","entity":"products"}' });
    expect((await call(KEYS.south, 'POST', '/pull/initialize')).status).toBe(200);
    expect((await call(KEYS.south, 'GET', '/pull/products/next')).status).toBe(200);
    writeRegistry(registry, JSON.stringify([{ name: 'north', keyFile: 'north.key', dialect: 'click2sync' }, { name: 'east', keyDigest: sha256(KEYS.east) }]));
    await waitUntil('south to be removed', async () => (await call(KEYS.south, 'GET', '/ping')).status === 404, 20_000);
    // What its daemon reads: a deployed one idles (ping), ends its item loop (hasmore), sees the transaction over (upstreamstatus).
    expect(await (await call(KEYS.south, 'GET', '/ping')).json()).toEqual({ error: 'this connection was removed from the service', connectionstatus: 'idle' });
    expect(await (await call(KEYS.south, 'GET', '/pull/products/hasmore')).json()).toMatchObject({ hasmore: 'done' });
    expect(await (await call(KEYS.south, 'GET', '/upstreamstatus')).json()).toMatchObject({ upstreamstatus: 'finished' });
    // The kit's daemon stops at once.
    const stopped = await runCli(['daemon', '--service', service.url, '--adapter', 'memory', '--once', '--json'], { STOREBRIDGE_CONNECTION: KEYS.south });
    expect(lastJsonLine(stopped.stdout)).toMatchObject({ ok: false });
    expect((await fetch(`${service.url}/connections/south/status`)).status).toBe(404);
    // Added again: its state is back, the pull it was running ended as cancelled, its catalog intact.
    writeRegistry(registry, JSON.stringify([{ name: 'north', keyFile: 'north.key', dialect: 'click2sync' }, { name: 'south', keyDigest: sha256(KEYS.south) }]));
    await waitUntil('south to be served again', async () => (await call(KEYS.south, 'GET', '/ping')).status === 200, 20_000);
    const view = (await (await fetch(`${service.url}/connections/south/status`)).json()) as Record<string, any>;
    expect(view.transactions.map((t: { kind: string; outcome: string }) => `${t.kind}:${t.outcome}`)).toEqual(['push:finished', 'pull:cancelled']);
    expect(view.products.received).toBe(30);
    expect(view.current).toBeNull();
    expect(crashTraces(service.stderr())).toEqual([]);
  }, 120_000);
});

test('the library: connections from a SQL table, followed while the service runs; keyDigest only', async () => {
  const main = await createSqlAdapter({ connection: `sqlite:${join(dir, 'registry.db')}` });
  const registry = await createSqlConnectionRegistry(main);
  await registry.put({ name: 'alpha', key: 'alpha-key-1' });
  const stores = new Map<string, ReturnType<typeof createMemoryAdapter>>();
  const service = createReverseService({
    connections: await registry.list(),
    adapterFor: ({ name }) => stores.get(name) ?? stores.set(name, createMemoryAdapter(demoCatalog(3))).get(name)!,
    maxCallsPerSecond: 0,
  });
  const errors: unknown[] = [];
  const follower = followRegistry(service, registry, { intervalMs: 50, onError: (e) => errors.push(e) });
  try {
    expect((await service.handle({ method: 'GET', key: 'alpha-key-1', path: '/ping' })).status).toBe(200);
    await registry.put({ name: 'beta', key: 'beta-key-2', dialect: 'click2sync' });
    await waitUntil('beta', async () => (await service.handle({ method: 'GET', key: 'beta-key-2', path: '/ping' })).status === 200, 5000);
    expect((await service.status('beta')).dialect).toBe('click2sync');
    await registry.remove('alpha');
    await waitUntil('alpha removed', async () => (await service.handle({ method: 'GET', key: 'alpha-key-1', path: '/ping' })).status === 404, 5000);
    expect(service.connectionNames()).toEqual(['beta']);
    expect(errors).toEqual([]);
  } finally {
    follower.stop();
    await service.close();
    await registry.drop();
    await main.close();
  }
});

test("a connection's store is opened by its first call that reads or writes items, never by polls", async () => {
  const opened: string[] = [];
  const service = createReverseService({
    connections: [
      { name: 'idle', key: 'idle-connection-key-1' },
      { name: 'busy', key: 'busy-connection-key-2' },
    ],
    adapterFor: ({ name }) => {
      opened.push(name);
      return createMemoryAdapter(demoCatalog(3));
    },
    maxCallsPerSecond: 0,
  });
  try {
    // What a deployed daemon polls all day, on both connections: no store opened.
    for (const key of ['idle-connection-key-1', 'busy-connection-key-2']) {
      for (const path of ['/ping', '/strategy', '/mode', '/upstreamstatus', '/entity', '/cursoroffset']) {
        expect((await service.handle({ method: 'GET', key, path })).status).toBeLessThan(500);
      }
    }
    await service.status('idle');
    expect(opened).toEqual([]);
    // A pull lists the connection's items: its store opens then, once.
    await service.enqueue('busy', { kind: 'pull', entity: 'products' });
    expect((await service.handle({ method: 'POST', key: 'busy-connection-key-2', path: '/pull/initialize', body: {} })).status).toBe(200);
    const next = await service.handle({ method: 'GET', key: 'busy-connection-key-2', path: '/pull/products/next' });
    expect(next.status).toBe(200);
    expect(next.body).toHaveProperty('product._id');
    expect(opened).toEqual(['busy']);
  } finally {
    await service.close();
  }
});

test('a registry file is parsed again only when it changed, or when its entries name key files (a key may rotate in place)', async () => {
  const digests = join(dir, 'digests.json');
  writeFileSync(digests, JSON.stringify([{ name: 'north', keyDigest: sha256(KEYS.north) }]));
  const registry = createFileRegistry(digests);
  const first = await registry.list();
  expect(await registry.list()).toBe(first); // unchanged file: the list as parsed before
  writeFileSync(digests, JSON.stringify([{ name: 'south', keyDigest: sha256(KEYS.south) }])); // in place: same inode and size
  expect((await registry.list()).map((c) => c.name)).toEqual(['south']);

  const keyFile = join(dir, 'rotating.key');
  writeFileSync(keyFile, 'rotating-key-version-1');
  const withKeyFile = join(dir, 'key-files.json');
  writeFileSync(withKeyFile, JSON.stringify([{ name: 'east', keyFile: 'rotating.key' }]));
  const byKeyFile = createFileRegistry(withKeyFile);
  expect((await byKeyFile.list())[0].key).toBe('rotating-key-version-1');
  writeFileSync(keyFile, 'rotating-key-version-2');
  expect((await byKeyFile.list())[0].key).toBe('rotating-key-version-2');
});
