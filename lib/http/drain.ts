/**
 * Draining a refused request body so its answer arrives (both servers: the store bindings and the
 * reverse service's bindings).
 */
import type { Readable } from 'node:stream';

/**
 * A refused body (over the limit, or not JSON) is read and thrown away up to this many more bytes
 * before the answer goes out, then the connection closes. Answering while the caller is still
 * sending makes many clients (Node's `http.request`, `fetch`) see a connection reset instead of
 * the 413: the server closes the socket with unread data in it. Beyond the bound (or the time
 * below) the answer goes out anyway.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
export const DRAIN_TIMEOUT_MS = 30_000;

/** Reads and discards what is left of `stream`, up to the bounds; resolves when done either way. */
export function drain(stream: Readable, limitBytes = DRAIN_LIMIT_BYTES, timeoutMs = DRAIN_TIMEOUT_MS): Promise<void> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let seen = 0;
    const finish = () => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', finish);
      stream.off('error', finish);
      stream.off('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limitBytes) {
        stream.pause();
        finish();
      }
    };
    const timer = setTimeout(() => {
      stream.pause();
      finish();
    }, timeoutMs);
    timer.unref?.();
    stream.on('data', onData);
    stream.once('end', finish);
    stream.once('error', finish);
    stream.once('close', finish);
    stream.resume();
  });
}
