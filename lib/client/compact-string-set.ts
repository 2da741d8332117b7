/**
 * An exact set of strings stored off the JavaScript heap, for the catalog walk's "each item once":
 * it remembers every `_id` of a walk, and a walk can have millions. A `Set<string>` of 1,000,000
 * twelve-character ids holds ~51 MB of heap, and V8 sizes its collection thresholds from the live
 * heap, so a process grew by several times that. Here each string costs its UTF-8 bytes plus a
 * one-to-five-byte length in one growing buffer, and four to eight bytes of slot in an
 * open-addressing table (load at most 3/4): ~21 bytes for such an id, none of it on the JS heap.
 *
 * Exact: a lookup compares the bytes, a hash only picks the slot. The hash is seeded per set, so a
 * store cannot choose ids that all collide. The bytes live in chunks that are never copied (16 KiB,
 * doubling to 1 MiB): growing never holds two copies, and at most one chunk is slack.
 */
import { randomBytes } from 'node:crypto';

const INITIAL_SLOTS = 1024;
const FIRST_CHUNK = 16 * 1024;
/** An entry's address is `chunk index × 2^20 + position`; chunks hold at most 2^20 bytes of starts. */
const CHUNK_BITS = 20;
const MAX_CHUNK = 2 ** CHUNK_BITS;
/** Addresses + 1 fit a Uint32Array slot. */
const MAX_CHUNKS = 4095;

export class CompactStringSet {
  /** Entries back to back: a varint byte length, then the UTF-8 bytes. */
  private readonly chunks: Buffer[] = [Buffer.allocUnsafe(FIRST_CHUNK)];
  /** Bytes used in the last chunk. */
  private used = 0;
  /** Address of an entry plus one; 0 is an empty slot. */
  private slots = new Uint32Array(INITIAL_SLOTS);
  private count = 0;
  private scratch = Buffer.allocUnsafe(256);
  private readonly seed = randomBytes(4).readUInt32LE(0);

  /** Number of strings in the set. */
  get size(): number {
    return this.count;
  }

  /** Bytes held (chunks and table), for reports and tests. */
  get byteSize(): number {
    return this.chunks.reduce((sum, c) => sum + c.byteLength, 0) + this.slots.byteLength;
  }

  has(value: string): boolean {
    const n = this.encode(value);
    return this.slots[this.find(this.scratch, 0, n, this.hash(this.scratch, 0, n))] !== 0;
  }

  /** Adds `value`; false when it was already there. */
  add(value: string): boolean {
    const n = this.encode(value);
    const slot = this.find(this.scratch, 0, n, this.hash(this.scratch, 0, n));
    if (this.slots[slot] !== 0) return false;
    const chunk = this.reserve(varintLength(n) + n);
    const at = (this.chunks.length - 1) * MAX_CHUNK + this.used;
    let p = this.used;
    for (let v = n; ; ) {
      if (v < 0x80) {
        chunk[p++] = v;
        break;
      }
      chunk[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.scratch.copy(chunk, p, 0, n);
    this.used = p + n;
    this.slots[slot] = at + 1;
    this.count++;
    if (this.count * 4 > this.slots.length * 3) this.grow();
    return true;
  }

  /** Writes `value` as UTF-8 into the scratch buffer; returns its byte length. */
  private encode(value: string): number {
    if (value.length * 3 > this.scratch.length) this.scratch = Buffer.allocUnsafe(Math.max(value.length * 3, this.scratch.length * 2));
    return this.scratch.write(value, 0, 'utf8');
  }

  /** FNV-1a over the bytes, seeded, with a final avalanche (the low bits pick the slot). */
  private hash(bytes: Buffer, start: number, n: number): number {
    let h = 0x811c9dc5 ^ this.seed;
    for (let i = start; i < start + n; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  }

  /** The slot holding these bytes, or the empty slot where they would go (linear probing). */
  private find(bytes: Buffer, start: number, n: number, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot];
      if (entry === 0 || this.equals(entry - 1, bytes, start, n)) return slot;
    }
  }

  private chunkOf(at: number): Buffer {
    return this.chunks[Math.floor(at / MAX_CHUNK)];
  }

  /** Byte length of the entry at address `at` (its bytes start `varintLength(length)` further on). */
  private lengthAt(at: number): number {
    const chunk = this.chunkOf(at);
    let len = 0;
    for (let shift = 0, p = at % MAX_CHUNK; ; shift += 7) {
      const b = chunk[p++];
      len |= (b & 0x7f) << shift;
      if (b < 0x80) return len;
    }
  }

  private equals(at: number, bytes: Buffer, start: number, n: number): boolean {
    if (this.lengthAt(at) !== n) return false;
    const chunk = this.chunkOf(at);
    const p = (at % MAX_CHUNK) + varintLength(n);
    for (let i = 0; i < n; i++) if (chunk[p + i] !== bytes[start + i]) return false;
    return true;
  }

  /** The chunk that takes the next `extra` bytes (a new one when the last is full). */
  private reserve(extra: number): Buffer {
    const last = this.chunks[this.chunks.length - 1];
    if (this.used + extra <= last.length) return last;
    if (this.chunks.length >= MAX_CHUNKS) throw new RangeError('CompactStringSet is full (4 GiB of strings)');
    // An entry longer than a chunk gets a chunk of its own size (it starts at position 0).
    const chunk = Buffer.allocUnsafe(Math.max(Math.min(last.length * 2, MAX_CHUNK), extra));
    this.chunks.push(chunk);
    this.used = 0;
    return chunk;
  }

  /** Doubles the table and places every entry again. */
  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    const mask = this.slots.length - 1;
    for (const entry of old) {
      if (entry === 0) continue;
      const at = entry - 1;
      const len = this.lengthAt(at);
      let slot = this.hash(this.chunkOf(at), (at % MAX_CHUNK) + varintLength(len), len) & mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = entry;
    }
  }
}

function varintLength(n: number): number {
  let bytes = 1;
  while (n >= 0x80) {
    n >>>= 7;
    bytes++;
  }
  return bytes;
}
