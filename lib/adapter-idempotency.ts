/**
 * Where a store keeps the writes made under an `Idempotency-Key` header (docs/writes.md
 * "Idempotency-Key"): one record per key, claimed atomically by the first request, completed with
 * what it wrote, replayed to every repeat until it expires.
 *
 * An adapter offers one as `StoreAdapter.idempotency`, kept in its own database so that records
 * survive a restart and replicas share them (the SQL adapter: a table with the key as primary key).
 * `MemoryIdempotencyStore` is the in-process one: the memory adapter's, and a router's own when its
 * adapter has none.
 */
import type { SignalOptions } from './adapter';
import type { Entity } from './contract/webhook';

/** What a completed write under a key did: the item it wrote and the warnings it answered. */
export interface IdempotencyOutcome {
  readonly entity: Entity;
  readonly id: string;
  readonly warnings: readonly string[];
}

/** One key's record. */
export interface IdempotencyRecord {
  /** SHA-256 (hex) of the request the key was first used with: a repeat must carry the same. */
  readonly fingerprint: string;
  /** Unix ms from which the record is forgotten (and the key may be used again). */
  readonly expiresAt: number;
  /** The completed write; absent while the first request is still running. */
  readonly outcome?: IdempotencyOutcome;
}

/**
 * The records of one store. Keys are opaque (the kit passes a SHA-256 hex digest of the caller and
 * the header's value: 64 characters).
 *
 * @example In the same database as the items (a sketch over a `Map`; see `MemoryIdempotencyStore`):
 * ```ts
 * class MyAdapter extends BaseStoreAdapter {
 *   readonly idempotency = new MemoryIdempotencyStore(); // or your table, with `claim` as one transaction
 * }
 * ```
 */
export interface IdempotencyStore {
  /**
   * Atomically: when `key` has no record, or only one that expired before `now`, stores `record`
   * and answers `undefined` (this request owns the key); otherwise answers the live record and
   * changes nothing. Two concurrent claims of one key: exactly one answers `undefined`.
   */
  claim(key: string, record: IdempotencyRecord, options: SignalOptions & { readonly now: number }): Promise<IdempotencyRecord | undefined>;
  /** Replaces the record of `key` (the owner completing its claim with the outcome). */
  settle(key: string, record: IdempotencyRecord, options: SignalOptions): Promise<void>;
  /**
   * Removes the record of `key` if it still has this fingerprint and no outcome: the first request
   * failed, so a retry runs again instead of waiting for the claim to expire.
   */
  release(key: string, fingerprint: string, options: SignalOptions): Promise<void>;
}

/** Records kept in this process: lost on restart, not shared with replicas. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();
  private sweptAt = 0;

  async claim(key: string, record: IdempotencyRecord, { now, signal }: SignalOptions & { now: number }): Promise<IdempotencyRecord | undefined> {
    signal.throwIfAborted();
    this.sweep(now);
    const live = this.records.get(key);
    if (live && live.expiresAt > now) return live;
    this.records.set(key, record);
    return undefined;
  }

  async settle(key: string, record: IdempotencyRecord, { signal }: SignalOptions): Promise<void> {
    signal.throwIfAborted();
    this.records.set(key, record);
  }

  async release(key: string, fingerprint: string, { signal }: SignalOptions): Promise<void> {
    signal.throwIfAborted();
    const r = this.records.get(key);
    if (r && r.fingerprint === fingerprint && !r.outcome) this.records.delete(key);
  }

  /** Drops expired records, at most once a minute (a claim stays O(1) on average). */
  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [key, r] of this.records) if (r.expiresAt <= now) this.records.delete(key);
  }
}
