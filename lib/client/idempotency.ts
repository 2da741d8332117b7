/**
 * The `Idempotency-Key` of a write: a create (an item without `_id`) gets a new random one unless
 * the caller gives one, an update only one given; every retry of the write sends the same. The
 * sync connection asks for it before the write, so a push that fails can hand it back.
 */
import { randomUUID } from 'node:crypto';
import { IdempotencyKeySchema } from '../contract/webhook';
import { InvalidOptionError } from '../errors';

/** The key to send with a write of `item` (`undefined`: none); a given key that is no valid value throws `InvalidOptionError`. */
export function idempotencyKeyOf(item: { readonly _id?: string }, given: string | undefined): string | undefined {
  const key = given ?? (item._id === undefined ? randomUUID() : undefined);
  if (key !== undefined && !IdempotencyKeySchema.safeParse(key).success) throw new InvalidOptionError('idempotencyKey', 'must be 1 to 255 printable ASCII characters (a UUID is a good key)');
  return key;
}
