/**
 * Reading a response body under a byte cap: every body the kit's callers read (the store caller,
 * the reverse daemon) goes through here, so a peer that answers with an endless or huge body costs
 * at most `maxBytes` of memory.
 */
import type { ExchangeResponse } from './exchange';

export type CappedBody =
  | { readonly ok: true; readonly text: string; readonly bytes: number }
  /** Over the cap: `bytes` is what was read (or declared) when reading stopped. */
  | { readonly ok: false; readonly bytes: number };

/**
 * Reads the whole body as UTF-8 text, or stops as soon as it (or its declared `Content-Length`)
 * passes `maxBytes`. On `ok: false` the caller must abort the exchange: the rest is never read,
 * and aborting closes the connection rather than draining it.
 */
export async function readCappedBody(res: ExchangeResponse, maxBytes: number): Promise<CappedBody> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) return { ok: false, bytes: declared };
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  if (res.body) {
    for await (const chunk of res.body) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) return { ok: false, bytes };
      chunks.push(chunk);
    }
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8'), bytes };
}
