/**
 * HTTPS end to end: a store router behind `node:https` with a self-signed certificate for
 * 127.0.0.1 (made here with openssl), and the real `storebridge sync` CLI, whose default transport
 * is `node:https`. Trusted through NODE_EXTRA_CA_CERTS, everything arrives; not trusted, the sync
 * fails at the first request with the TLS reason and exit 1: another attempt would meet the same
 * certificate, so none is made.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { createStoreRouter } from '../../lib/server';
import { runCli } from './cli-process';

const KEY = 'https-Key-4e8a0c2d19';
const catalog = demoCatalog(120);

let dir: string;
let server: Server;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'sb-https-'));
  // prettier-ignore
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const app = express();
  app.use(createStoreRouter({ adapter: createMemoryAdapter(catalog), svcKeys: [KEY], rateLimit: false }));
  server = createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const sync = (env: NodeJS.ProcessEnv) => runCli(['sync', url, '--key', KEY, '--json', '--retries', '1'], env);

test('sync over HTTPS with the store certificate trusted: every product and order arrives', async () => {
  const r = await sync({ NODE_EXTRA_CA_CERTS: path.join(dir, 'cert.pem') });
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toMatchObject({ ok: true, products: { count: 120, duplicates: 0, invalid: 0 }, orders: { count: catalog.orders.length } });
  expect(r.stdout + r.stderr).not.toContain(KEY);
}, 30_000);

test('sync over HTTPS to a certificate nobody trusts: exit 1 with the TLS reason and what to do, not retried, key not printed', async () => {
  const r = await sync({ NODE_EXTRA_CA_CERTS: '' });
  expect(r.code).toBe(1);
  // One attempt per entity (an entity that fails holds no other back), none retried.
  expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toMatchObject({ ok: false, requests: 2, retries: 0, error: { code: 'STORE_NETWORK' } });
  expect(r.stderr).toMatch(/DEPTH_ZERO_SELF_SIGNED_CERT: the TLS certificate is not trusted .*NODE_EXTRA_CA_CERTS/);
  expect(r.stdout + r.stderr).not.toContain(KEY);
}, 30_000);
