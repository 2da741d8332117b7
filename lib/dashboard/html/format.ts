/** Numbers, times and errors in words, for the pages. */

/** `850 ms`, `12.3 s`, `4 min 5 s`, `2 h 3 min`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1).replace(/\.?0+$/, '')} s`;
  const s = Math.round(ms / 1000);
  const [big, small] = s < 3600 ? [`${Math.floor(s / 60)} min`, s % 60 ? `${s % 60} s` : ''] : [`${Math.floor(s / 3600)} h`, Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)} min` : ''];
  return small ? `${big} ${small}` : big;
}

/** `12 s ago`, `in 3 min`, relative to `now`. */
export function formatRelative(at: number, now: number): string {
  const d = at - now;
  const words = formatDuration(Math.abs(d)).replace(/^(\d+(?:\.\d+)?) ms$/, 'now');
  if (words === 'now') return 'just now';
  const short = words.replace(/\.\d+ s$/, ' s');
  return d < 0 ? `${short} ago` : `in ${short}`;
}

/** `2030-01-02 03:04:05 UTC`. */
export function formatTime(at: number): string {
  return Number.isFinite(at) ? new Date(at).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC') : '–';
}

export const formatCount = (n: number | undefined): string => (n === undefined ? '–' : n.toLocaleString('en-US'));

/** `1 item`, `2 items`, `1,500 items`. */
export const countOf = (n: number, noun: string): string => `${formatCount(n)} ${noun}${n === 1 ? '' : 's'}`;

const ERROR_WORDS: Record<string, string> = {
  STORE_AUTH: 'The store refused the key (HTTP 401): the connection\'s SvcKey is wrong or was revoked.',
  STORE_BAD_REQUEST: 'The store refused the request as malformed (HTTP 400).',
  STORE_NOT_FOUND: 'The store answered 404: the connection\'s URL is wrong, or the webhook is not there.',
  STORE_RATE_LIMITED: 'The store kept answering 429 (rate limited) after the retries.',
  STORE_SERVER: 'The store failed (HTTP 5xx) after the retries.',
  STORE_HTTP: 'The store answered an unexpected HTTP status.',
  STORE_TIMEOUT: 'The store did not answer in time.',
  STORE_RESPONSE_TOO_LARGE: 'The store sent a page larger than the 10 MB limit.',
  STORE_CONTRACT: 'The store answered something that breaks the interface.',
  STORE_NETWORK: 'The store could not be reached (network error).',
  STORE_PAGING: 'The store\'s paging went wrong (a page repeated or skipped items).',
  STORE_ABORTED: 'The run was stopped (worker shutting down or lock lost).',
  SYNC_LOCK_LOST: 'The worker lost the connection\'s run lock; another worker took over.',
  ADAPTER_FAILED: 'The service\'s own database (the sink) failed.',
  ADAPTER_TIMEOUT: 'The service\'s own database (the sink) did not answer in time.',
};

/** A run's error as a sentence a person reads, with the original message for detail. */
export function errorInWords(error: { name: string; code?: string; message: string } | undefined): { words: string; detail: string } | undefined {
  if (!error) return undefined;
  const words = (error.code && ERROR_WORDS[error.code]) || `${error.name}: ${error.message.split('[')[0].trim()}`;
  return { words, detail: error.message };
}
