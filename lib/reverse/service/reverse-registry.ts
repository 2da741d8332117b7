/**
 * Where a multi-tenant reverse service's connections come from, and how a change reaches the
 * running service: a `ConnectionRegistry` lists them (a file: `createFileRegistry`, the CLI's
 * `--connections FILE`; a SQL table: `createSqlConnectionRegistry` in `storebridge/adapters/sql`),
 * and `followRegistry` applies each new list with `ReverseService.setConnections`. A list that
 * cannot be read or is invalid changes nothing: the service keeps the last good one, and the
 * error is reported (docs/reverse-connection.md "Multi-tenant").
 */
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DIALECT_NAMES, type DialectName } from '../../contract/dialects';
import { InvalidOptionError } from '../../errors';
import type { ReverseService } from './reverse-service';
import { KEY_DIGEST, KEY_DIGEST_RULE, KeySchema, type ReverseConnectionOption } from './reverse-service-options';
import { z } from 'zod';
import { opt } from '../../options';

/**
 * A source of connections.
 *
 * @example A registry of your own (an HTTP admin API, a config service):
 * ```ts
 * const registry: ConnectionRegistry = {
 *   async list() { return (await fetchTenants()).map((t) => ({ name: t.slug, keyDigest: t.keySha256, dialect: 'click2sync' })); },
 * };
 * const follower = followRegistry(service, registry, { intervalMs: 5000, onError: (e) => log.error(e.message) });
 * ```
 */
export interface ConnectionRegistry {
  /** Every connection, now (`name` required: it names the connection's state and store). */
  list(): Promise<ReverseConnectionOption[]>;
}

/** A connection name in a registry: it also names the connection's tables (`<prefix>c_<name>_products`). */
export const REGISTRY_NAME = /^[a-z][a-z0-9_]{0,23}$/;
export const REGISTRY_NAME_RULE = 'lower-case letters, digits and "_", starting with a letter, at most 24 characters';

/**
 * One registry entry as a library registry takes it (`createSqlConnectionRegistry`'s `put`):
 * a registry name, the key or its digest (one of them), a dialect. Read with `readOption`.
 */
export const REGISTRY_ENTRY = z
  .strictObject({
    name: z.string({ error: `must be ${REGISTRY_NAME_RULE}` }).regex(REGISTRY_NAME, `must be ${REGISTRY_NAME_RULE}`),
    key: KeySchema.optional(),
    keyDigest: z.string({ error: KEY_DIGEST_RULE }).regex(KEY_DIGEST, KEY_DIGEST_RULE).optional(),
    dialect: opt.oneOf(DIALECT_NAMES).optional(),
  })
  .refine((c) => (c.key === undefined) !== (c.keyDigest === undefined), { path: ['key'], message: 'give key or keyDigest (one of them)' });

function field(row: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = row[n];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
    if (v !== undefined && v !== null && v !== '' && typeof v !== 'string') throw new Error(`"${n}" must be a string`);
  }
  return undefined;
}

/** Splits one CSV line (RFC 4180 quotes; no line breaks inside a field). */
function csvFields(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') (cur += '"'), i++;
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') out.push(cur), (cur = '');
    else cur += ch;
  }
  out.push(cur);
  return out.map((f) => f.trim());
}

function rowsOf(text: string): Array<Record<string, unknown>> {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    const parsed: unknown = JSON.parse(trimmed);
    const list = Array.isArray(parsed) ? parsed : (parsed as { connections?: unknown }).connections;
    if (!Array.isArray(list)) throw new Error('expected a JSON array of connections, or {"connections": [...]}');
    return list.map((x, i) => {
      if (!x || typeof x !== 'object' || Array.isArray(x)) throw new Error(`entry ${i + 1} is not an object`);
      return x as Record<string, unknown>;
    });
  }
  const lines = trimmed.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  if (lines.length === 0) return [];
  const header = csvFields(lines[0]).map((h) => h.toLowerCase());
  if (!header.includes('name')) throw new Error('the CSV header must name the columns: name,key_file|key_digest,dialect');
  return lines.slice(1).map((line) => Object.fromEntries(csvFields(line).map((v, i) => [header[i] ?? `column${i + 1}`, v])));
}

/**
 * Reads a registry file's text: JSON (`[{"name", "keyFile" | "keyDigest", "dialect"?}]`, or
 * `{"connections": [...]}`) or CSV with a header (`name,key_file,key_digest,dialect`; `#` lines
 * are comments). A key file path is relative to `baseDir`; its content (one line) is the key. Each
 * problem is an `InvalidOptionError` naming the entry; keys are never repeated in a message.
 */
export function parseConnectionsFile(text: string, baseDir: string): ReverseConnectionOption[] {
  let rows: Array<Record<string, unknown>>;
  try {
    rows = rowsOf(text);
  } catch (err) {
    throw new InvalidOptionError('connections', `cannot read the file: ${(err as Error).message}`);
  }
  const names = new Set<string>();
  return rows.map((row, i) => {
    const where = `connections[${i + 1}]`;
    try {
      const name = field(row, 'name');
      if (!name || !REGISTRY_NAME.test(name)) throw new Error(`"name" must be ${REGISTRY_NAME_RULE}`);
      if (names.has(name)) throw new Error(`the name "${name}" is used twice`);
      names.add(name);
      const keyFile = field(row, 'keyFile', 'key_file');
      const keyDigest = field(row, 'keyDigest', 'key_digest');
      if ((keyFile === undefined) === (keyDigest === undefined)) throw new Error('give keyFile or keyDigest (one of them)');
      const dialect = field(row, 'dialect');
      if (dialect !== undefined && !(DIALECT_NAMES as readonly string[]).includes(dialect)) throw new Error(`"dialect" must be one of ${DIALECT_NAMES.join(', ')}`);
      const common = { name, ...(dialect ? { dialect: dialect as DialectName } : {}) };
      if (keyDigest !== undefined) return { ...common, keyDigest };
      let key: string;
      try {
        key = readFileSync(resolve(baseDir, keyFile!), 'utf8').replace(/\r?\n$/, '');
      } catch (err) {
        throw new Error(`cannot read the key file ${JSON.stringify(keyFile)} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      }
      if (key === '') throw new Error(`the key file ${JSON.stringify(keyFile)} is empty`);
      return { ...common, key };
    } catch (err) {
      throw new InvalidOptionError(where, (err as Error).message);
    }
  });
}

/**
 * A registry in a JSON or CSV file (`parseConnectionsFile`). `list()` reads and parses it again
 * unless the file is the one read last (same inode, size and modification time) and every entry
 * names its key by digest: a registry of 1,000 connections re-read every 2 s cost the service more
 * CPU than its idle connections' polls. Entries with key files are read each time (a key file may
 * be rotated in place while the registry stays unchanged).
 */
export function createFileRegistry(path: string): ConnectionRegistry & { readonly path: string } {
  const full = resolve(path);
  let cached: { version: string; list: ReverseConnectionOption[] } | undefined;
  const failed = (err: unknown) => new InvalidOptionError('connections', `cannot read ${JSON.stringify(path)} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  return {
    path: full,
    async list() {
      let text: string;
      let version: string;
      try {
        const s = await stat(full, { bigint: true });
        version = `${s.ino}:${s.size}:${s.mtimeNs}`;
        if (cached?.version === version) return cached.list;
        text = await readFile(full, 'utf8');
      } catch (err) {
        throw failed(err);
      }
      const list = parseConnectionsFile(text, dirname(full));
      cached = list.every((c) => c.keyDigest !== undefined) ? { version, list } : undefined;
      return list;
    },
  };
}

export interface FollowOptions {
  /** How often the registry is read again (ms); with `watchPath`, a fallback for file systems whose events are lost. Default 2000. */
  readonly intervalMs?: number;
  /** A file whose changes (fs.watch on its directory) trigger a read at once. */
  readonly watchPath?: string;
  /** A list that could not be read or applied: the service keeps the previous one. */
  readonly onError?: (error: unknown) => void;
  /** A new list was applied. */
  readonly onChange?: (names: readonly string[]) => void;
}

/** Keeps a service's connections equal to a registry's; `stop()` ends it. */
export function followRegistry(service: ReverseService, registry: ConnectionRegistry, options: FollowOptions = {}): { stop(): void; refresh(): Promise<void> } {
  let last = '';
  let lastList: readonly ReverseConnectionOption[] | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const once = async (): Promise<void> => {
    try {
      const list = await registry.list();
      if (list === lastList) return; // the registry's own cache: nothing read, nothing changed
      const signature = JSON.stringify(list.map((c) => [c.name, c.key ?? '', c.keyDigest ?? '', c.dialect ?? '']));
      if (signature === last) {
        lastList = list;
        return;
      }
      await service.setConnections(list);
      last = signature;
      lastList = list;
      options.onChange?.(list.map((c) => c.name!));
    } catch (err) {
      options.onError?.(err);
    }
  };
  const refresh = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true; // one more read after the one in progress: it may have read the file half written
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await once();
      } while (again && !stopped);
      running = undefined;
    })();
    return running;
  };
  const timer = setInterval(() => void refresh(), options.intervalMs ?? 2000);
  timer.unref();
  let watcher: FSWatcher | undefined;
  if (options.watchPath) {
    const file = resolve(options.watchPath);
    try {
      // The directory, not the file: an editor or `mv` replaces the file, and a watch on it would go quiet.
      watcher = watch(dirname(file), (_event, name) => {
        if (name === null || resolve(dirname(file), String(name)) === file) void refresh();
      });
      watcher.on('error', () => watcher?.close());
      watcher.unref();
    } catch {
      // No fs.watch here (some network file systems): the interval alone picks changes up.
    }
  }
  void refresh();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      watcher?.close();
    },
    refresh,
  };
}
