/**
 * Ids the kit emits are safe in a raw URL. The deployed Click2Sync daemons concatenate ids into
 * paths without percent-encoding them (a `#` turns the rest of the path into a fragment, a space
 * makes Java's `HttpPost` throw), so no id the kit makes (generated ids, demo data) holds any of
 * `#`, `?`, `/`, `%` or a space. Ids an owner already stores are theirs: they are served as they
 * are, and a write that introduces one is answered with a warning (docs/wire-decisions.md "Ids").
 */

import { STORE_DIALECT } from '../contract/dialects';

/** The characters that break a URL path or query when an id is concatenated raw (`STORE_DIALECT.urlUnsafeIdCharacters`). */
const URL_UNSAFE = new RegExp(`[${STORE_DIALECT.urlUnsafeIdCharacters.replace(/[\\\]^-]/g, '\\$&')}]`, 'g');

/** `"#" and " "`-style list of the unsafe characters in `id`, or `undefined` when it has none. */
export function urlUnsafeCharacters(id: string): string | undefined {
  const found = id.match(URL_UNSAFE);
  if (!found) return undefined;
  const distinct = [...new Set(found)].map((c) => (c === ' ' ? 'a space' : `"${c}"`));
  return distinct.length === 1 ? distinct[0] : `${distinct.slice(0, -1).join(', ')} and ${distinct[distinct.length - 1]}`;
}

