/**
 * The `Idempotency-Key` of a write: a create (an item without `_id`) gets a new random one unless
 * the caller gives one, an update only one given; every retry of the write sends the same. The
 * sync connection asks for it before the write, so a push that fails can hand it back.
 */
import { randomUUID } from 'node:crypto';
import { InvalidOptionError } from '../errors';

/** A key's value: 1–255 printable ASCII characters (a UUID is a good key). */
const KEY_VALUE = /^[\x20-\x7e]{1,255}$/;

/** The key to send with a write of `item` (`undefined`: none); a given key that is no valid value throws `InvalidOptionError`. */
export function idempotencyKeyOf(item: { readonly _id?: string }, given: string | undefined): string | undefined {
  const key = given ?? (item._id === undefined ? randomUUID() : undefined);
  if (key !== undefined && !KEY_VALUE.test(key)) throw new InvalidOptionError('idempotencyKey', 'must be 1 to 255 printable ASCII characters (a UUID is a good key)');
  return key;
}
