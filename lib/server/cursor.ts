/**
 * Paging cursors: opaque, URL-safe, tamper-evident keyset positions.
 *
 * A cursor is `base64url(mac ‖ payload)`: `payload` is the UTF-8 JSON `[1, entity, sortorder,
 * last_updated, _id]` (the last item sent), `mac` the first 16 bytes of HMAC-SHA256(secret,
 * payload). The secret binds a cursor to its router (its connection); the entity and sort order
 * inside it bind it to one list, so a cursor from another list, another store or a hand edit is
 * refused instead of silently paging from a wrong place.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SortKey } from '../adapter';
import { SORT_ORDERS, type SortOrder } from '../contract/messages';
import { ENTITIES, entityOf, type Entity } from '../contract/entities';
import { hasForbiddenCharacter, MAX_ID_LENGTH } from '../contract/webhook';
import { InvalidCursorError } from '../http/http-errors';

const VERSION = 1;
const MAC_BYTES = 16;
/** Longer `next` values are refused before any decoding. */
export const MAX_CURSOR_LENGTH = 1024;
const SORT_TAGS: Record<SortOrder, string> = { asc: 'a', desc: 'd' };
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface CursorPosition {
  readonly entity: Entity;
  readonly sortorder: SortOrder;
  readonly after: SortKey;
}

export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  private mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest().subarray(0, MAC_BYTES);
  }

  private static payload(position: CursorPosition): string {
    return JSON.stringify([VERSION, entityOf(position.entity).cursorTag, SORT_TAGS[position.sortorder], position.after.last_updated, position.after._id]);
  }

  encode(position: CursorPosition): string {
    const payload = Buffer.from(CursorCodec.payload(position), 'utf8');
    return Buffer.concat([this.mac(payload), payload]).toString('base64url');
  }

  /** `encode(position).length`, without computing the MAC (page budgeting asks it per item). */
  static encodedLength(position: CursorPosition): number {
    return Math.ceil(((MAC_BYTES + Buffer.byteLength(CursorCodec.payload(position), 'utf8')) * 4) / 3);
  }

  /** The position in `token`, checked against the list it was sent to. Throws `InvalidCursorError`. */
  decode(token: string, expected: { entity: Entity; sortorder: SortOrder }): SortKey {
    if (token.length > MAX_CURSOR_LENGTH) throw new InvalidCursorError(`longer than ${MAX_CURSOR_LENGTH} characters`);
    if (!BASE64URL.test(token)) throw new InvalidCursorError('not URL-safe Base64');
    const raw = Buffer.from(token, 'base64url');
    // Non-canonical spellings (stray trailing bits) would give a second token for one position.
    if (raw.toString('base64url') !== token || raw.length <= MAC_BYTES) throw new InvalidCursorError('not a cursor issued by this store');
    const mac = raw.subarray(0, MAC_BYTES);
    const payload = raw.subarray(MAC_BYTES);
    if (!timingSafeEqual(mac, this.mac(payload))) throw new InvalidCursorError('not a cursor issued by this store, or it was altered');
    let fields: unknown;
    try {
      fields = JSON.parse(payload.toString('utf8'));
    } catch {
      throw new InvalidCursorError('unreadable');
    }
    if (
      !Array.isArray(fields) ||
      fields.length !== 5 ||
      fields[0] !== VERSION ||
      !Number.isSafeInteger(fields[3]) ||
      fields[3] < 0 ||
      typeof fields[4] !== 'string' ||
      fields[4] === '' ||
      fields[4].length > MAX_ID_LENGTH ||
      hasForbiddenCharacter(fields[4])
    ) {
      throw new InvalidCursorError('unsupported cursor version');
    }
    const [, entityTag, sortTag, last_updated, _id] = fields as [number, string, string, number, string];
    if (entityTag !== entityOf(expected.entity).cursorTag) {
      const issuer = ENTITIES.find((e) => entityOf(e).cursorTag === entityTag);
      throw new InvalidCursorError(issuer ? `it was issued by the ${issuer} list` : 'unsupported cursor version');
    }
    if (sortTag !== SORT_TAGS[expected.sortorder]) {
      const issued = SORT_ORDERS.find((o) => SORT_TAGS[o] === sortTag);
      throw new InvalidCursorError(issued ? `it was issued for sortorder=${issued}` : 'unsupported cursor version');
    }
    return { last_updated, _id };
  }
}
