/**
 * Reads the sources for one page, each within a time limit (an ioredis client whose Redis is down
 * queues commands forever; a page must still come back, saying which part is unavailable).
 */
import { DashboardSourceError } from './dashboard-errors';
import type { ReverseSource, SyncSource } from './dashboard-sources';
import type { ReverseSection } from './html/reverse-pages';
import type { SyncRow, SyncSection } from './html/sync-pages';

export interface DataConfig {
  sync?: SyncSource;
  reverse: readonly ReverseSource[];
  timeoutMs: number;
  pageSize: number;
  onError(error: unknown, context: FailureContext): void;
}

/** What `onError` is told with a failure: the source, and the failure in the page's words. */
export interface FailureContext {
  readonly source: string;
  /** `Redis redis://… (storebridge:sync) cannot be reached (ECONNREFUSED)`: what the page shows. */
  readonly message: string;
}

class SourceTimeout extends Error {
  constructor(readonly ms: number) {
    super(`did not answer within ${ms} ms`);
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SourceTimeout(ms)), ms);
    timer.unref?.();
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** A source's failure in words for the page (no stack; the message of our own errors, else a code). */
export function describeFailure(err: unknown, what: string): string {
  if (err instanceof SourceTimeout) return `${what} ${err.message}`;
  if (err instanceof DashboardSourceError) return err.message;
  const e = err as { code?: unknown; name?: unknown };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'error';
  return `${what} cannot be read (${code})`;
}

/** A source's failure in words, told to `onError` too. */
export function reported(c: DataConfig, err: unknown, source: string, what: string): string {
  const message = describeFailure(err, what);
  c.onError(err, { source, message });
  return message;
}

/** The sync section of the overview: connections `offset … offset + pageSize`, each with its last `historyRuns` runs. */
export async function readSyncSection(c: DataConfig, offset: number, historyRuns: number): Promise<SyncSection | undefined> {
  const source = c.sync;
  if (!source) return undefined;
  const base = { label: source.label, capabilities: source.capabilities, offset, pageSize: c.pageSize };
  try {
    const all = await withTimeout(source.connections(), c.timeoutMs);
    const shown = all.slice(offset, offset + c.pageSize);
    const histories = await withTimeout(Promise.all(shown.map((r) => (historyRuns > 0 ? source.history(r.name, historyRuns) : Promise.resolve([])))), c.timeoutMs);
    const rows: SyncRow[] = shown.map((r, i) => ({ ...r, history: histories[i] }));
    return { ...base, rows, total: all.length };
  } catch (err) {
    return { ...base, rows: [], total: 0, error: reported(c, err, source.label, source.label) };
  }
}

/** One sync connection with its history (`row` undefined when the source does not list it). */
export async function readSyncConnection(c: DataConfig, name: string, historyRuns: number): Promise<{ section: SyncSection; row?: SyncRow } | undefined> {
  const source = c.sync;
  if (!source) return undefined;
  const base = { label: source.label, capabilities: source.capabilities, offset: 0, pageSize: 1, rows: [], total: 0 };
  try {
    const all = await withTimeout(source.connections(), c.timeoutMs);
    const section = { ...base, total: all.length };
    const row = all.find((r) => r.name === name);
    if (!row) return { section };
    return { section, row: { ...row, history: await withTimeout(source.history(name, historyRuns), c.timeoutMs) } };
  } catch (err) {
    return { section: { ...base, error: reported(c, err, source.label, source.label) } };
  }
}

export async function readReverseSections(c: DataConfig): Promise<ReverseSection[]> {
  return Promise.all(
    c.reverse.map(async (source, index): Promise<ReverseSection> => {
      try {
        return { index, label: source.label, connections: await withTimeout(source.connections(), c.timeoutMs) };
      } catch (err) {
        return { index, label: source.label, error: reported(c, err, source.label, `reverse service ${source.label}`) };
      }
    }),
  );
}
