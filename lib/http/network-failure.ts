/**
 * Why a request never got an answer, in words, and whether another attempt can help: shared by the
 * caller and the reverse daemon.
 */

/** OpenSSL's and Node's certificate verdicts: another attempt gets the same certificate. */
const TLS_TRUST_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * What a failed request says about why: the system error code (` (ECONNREFUSED)`), or the inner
 * message. `fetch` fails at once, without connecting, on the Fetch standard's "bad ports" (6000,
 * 6665-6669, 10080, …) while curl and browsers' address bars connect fine: that one is spelt out
 * and is not retryable, nor is a certificate that is not trusted. Messages carry no URL (so no
 * key), only the port.
 */
export function networkFailure(cause: unknown, url: string): { detail: string; retryable: boolean } {
  if (!cause || typeof cause !== 'object') return { detail: '', retryable: true };
  const c = cause as { code?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = typeof c.code === 'string' ? c.code : typeof c.cause?.code === 'string' ? c.cause.code : undefined;
  if (code && TLS_TRUST_CODES.has(code)) {
    return { detail: ` (${code}: the TLS certificate is not trusted or does not match the host; a private CA is trusted with NODE_EXTRA_CA_CERTS=ca.pem)`, retryable: false };
  }
  if (code) return { detail: ` (${code})`, retryable: true };
  const inner = typeof c.cause?.message === 'string' ? c.cause.message : undefined;
  if (inner === 'bad port') {
    let port = '';
    try {
      port = new URL(url).port;
    } catch {
      // not a URL: leave the port out
    }
    return { detail: ` (fetch refuses port ${port || 'of this URL'}: it is one of the Fetch standard's "bad ports"; use another port)`, retryable: false };
  }
  return { detail: inner ? ` (${inner})` : '', retryable: true };
}
