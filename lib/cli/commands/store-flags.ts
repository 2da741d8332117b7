/**
 * The flags `sync` and `check` share to say where a store is and how to present the key: a base URL
 * and/or one URL per entity (a deployed connection's `{{URI_PRODUCTS}}` and `{{URI_ORDERS}}`), and
 * the key headers.
 */
import { parseClientOptions, type OperationUrls } from '../../client/client-options';
import { flagProblem, type FlagSpecs } from '../flags';

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

/**
 * Where the store is: a base URL and/or a URL per entity. Without a base URL, the entities given a
 * URL are the ones the connection covers (`--products-url U` alone: a products-only store). The
 * URLs themselves are the client's options: `storeTarget` has the client's reader check them.
 */
export function storeLocation(positionals: readonly string[], productsUrl: string | undefined, ordersUrl: string | undefined): { baseUrl?: string; urls: OperationUrls } | string {
  if (positionals.length > 1) return 'at most one store URL';
  const baseUrl = positionals[0];
  if (baseUrl === undefined && productsUrl === undefined && ordersUrl === undefined) {
    return 'a store URL is required, or --products-url and/or --orders-url';
  }
  const urls: OperationUrls = {};
  if (productsUrl !== undefined) urls.listProducts = productsUrl;
  if (ordersUrl !== undefined) urls.listOrders = ordersUrl;
  return { baseUrl, urls };
}

/** `--key-headers SvcKey,C2SKey`: the names, or a usage message (a string). */
export function keyHeadersArg(text: string): string[] | string {
  const names = text.split(',').map((h) => h.trim());
  if (names.some((h) => !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h))) return '--key-headers must be a comma-separated list of header names';
  return names;
}

/**
 * Where the store is and how to present the key, from the parsed store flags; or a usage message.
 * The URLs and the key are checked once, by the client's own reader (`parseClientOptions`), whose
 * errors name the flag (`STORE_OPTION_FLAGS`).
 */
export function storeTarget(
  positionals: readonly string[],
  values: { readonly productsUrl?: string; readonly ordersUrl?: string; readonly keyHeaders: string; readonly key: string },
): { baseUrl?: string; urls: OperationUrls; host: string; keyHeaders: string[] } | string {
  const where = storeLocation(positionals, values.productsUrl, values.ordersUrl);
  if (typeof where === 'string') return where;
  const keyHeaders = keyHeadersArg(values.keyHeaders);
  if (typeof keyHeaders === 'string') return keyHeaders;
  try {
    parseClientOptions({ ...where, svcKey: values.key, keyHeaders });
  } catch (err) {
    const problem = flagProblem(err, STORE_OPTION_FLAGS);
    if (problem === undefined) throw err;
    return problem;
  }
  const host = new URL((where.baseUrl ?? where.urls.listProducts ?? where.urls.listOrders)!).host;
  return { ...where, host, keyHeaders };
}

