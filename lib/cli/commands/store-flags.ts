/**
 * The flags `sync` and `check` share to say where a store is and how to present the key: a base URL
 * and/or one URL per entity (a deployed connection's `{{URI_PRODUCTS}}` and `{{URI_ORDERS}}`), and
 * the key headers.
 */
import type { OperationUrls } from '../../client/client-options';
import type { FlagSpecs } from '../flags';

/** The flags both commands take, declared once (`lib/cli/flags.ts`). */
export const STORE_FLAGS = {
  key: { type: 'secret', env: 'STOREBRIDGE_KEY', required: true, metavar: 'K', help: "the connection's key (sent in the --key-headers)" },
  'products-url': {
    type: 'string',
    metavar: 'U',
    help: 'the products URL of a connection configured per entity ({{URI_PRODUCTS}}), instead of URL; it may carry its own query (…/c2s.php?entity=products); by-ID reads use ?id= on it',
  },
  'orders-url': { type: 'string', metavar: 'U', help: 'the orders URL, the same way ({{URI_ORDERS}}); without URL, a connection given only one of the two covers that entity alone' },
  'key-headers': {
    type: 'string',
    metavar: 'H,…',
    default: 'SvcKey,C2SKey',
    help: 'the headers the key is sent in: stores of the spec read SvcKey, deployed Click2Sync stores read C2SKey',
  },
} as const satisfies FlagSpecs;

/**
 * The flag behind each store client option (`flagProblem`): an option error of `createStoreClient`
 * (or `checkEndpoints`) is a usage error naming the flag.
 */
export const STORE_OPTION_FLAGS: Readonly<Record<string, string>> = {
  baseUrl: 'the URL',
  'urls.listProducts': '--products-url',
  'urls.listOrders': '--orders-url',
  keyHeaders: '--key-headers',
  svcKey: 'the key',
  timeoutMs: '--timeout',
  pageSize: '--page-size',
  retry: '--retries',
};

/** A URL the command accepts: http(s), no credentials. Its host, or a usage message. */
function hostOf(url: string, flag: string): { host: string } | string {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return `${flag} must be an http(s) URL`;
    if (u.username || u.password) return `${flag} must not carry credentials; pass the key with --key`;
    return { host: u.host };
  } catch {
    return `${flag}: "${url}" is not a URL`;
  }
}

/**
 * Where the store is: a base URL and/or a URL per entity. Without a base URL, the entities given a
 * URL are the ones the connection covers (`--products-url U` alone: a products-only store).
 */
export function storeLocation(positionals: readonly string[], productsUrl: string | undefined, ordersUrl: string | undefined): { baseUrl?: string; urls: OperationUrls; host: string } | string {
  if (positionals.length > 1) return 'at most one store URL';
  const baseUrl = positionals[0];
  if (baseUrl === undefined && productsUrl === undefined && ordersUrl === undefined) {
    return 'a store URL is required, or --products-url and/or --orders-url';
  }
  let host: string | undefined;
  for (const [url, flag] of [[baseUrl, 'the URL'], [productsUrl, '--products-url'], [ordersUrl, '--orders-url']] as const) {
    if (url === undefined) continue;
    const h = hostOf(url, flag);
    if (typeof h === 'string') return h;
    host ??= h.host;
  }
  const urls: OperationUrls = {};
  if (productsUrl !== undefined) urls.listProducts = productsUrl;
  if (ordersUrl !== undefined) urls.listOrders = ordersUrl;
  return { baseUrl, urls, host: host! };
}

/** `--key-headers SvcKey,C2SKey`: the names, or a usage message (a string). */
export function keyHeadersArg(text: string): string[] | string {
  const names = text.split(',').map((h) => h.trim());
  if (names.some((h) => !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h))) return '--key-headers must be a comma-separated list of header names';
  return names;
}

/** Where the store is and how to present the key, from the parsed store flags; or a usage message. */
export function storeTarget(
  positionals: readonly string[],
  values: { readonly productsUrl?: string; readonly ordersUrl?: string; readonly keyHeaders: string },
): { baseUrl?: string; urls: OperationUrls; host: string; keyHeaders: string[] } | string {
  const where = storeLocation(positionals, values.productsUrl, values.ordersUrl);
  if (typeof where === 'string') return where;
  const keyHeaders = keyHeadersArg(values.keyHeaders);
  if (typeof keyHeaders === 'string') return keyHeaders;
  return { ...where, keyHeaders };
}

