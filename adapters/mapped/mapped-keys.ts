/**
 * The sort key of a mapped table, `(last_updated, _id)`, in the database's own terms.
 *
 * - **Time**: the mapped column holds epoch milliseconds, epoch seconds, a timestamp or ISO text.
 *   The database sorts and compares the column itself (so an index on it serves the pages); the
 *   adapter turns values into milliseconds when it reads them, and a keyset position's
 *   milliseconds into the column's terms (`timeBound`). Every column has a resolution (1 ms,
 *   1 s, …): a position between two representable values becomes "from the next one on".
 *   Timestamps finer than milliseconds are sorted by their truncation to milliseconds, so that
 *   two rows in one millisecond tie and their ids decide, exactly as the kit compares them.
 * - **Id**: ids compare by UTF-8 bytes (`compareIds`). A text id column that already compares so
 *   is sorted as it is; any other (an integer, a linguistic collation) is sorted by a byte-ordered
 *   expression of it (`CAST(id AS TEXT)`, `id COLLATE "C"`, `CAST(id AS BINARY)`), which an
 *   expression index (SQLite, PostgreSQL) or a generated column (`sortColumn`, MariaDB) can serve.
 *
 * docs/mapping.md "Time columns" and "Ids and the paging index" say the same for users.
 */
import type { RawBuilder } from 'kysely';
import { loadKysely, SQL_DIALECTS, type CatalogColumn, type SqlKind } from '../sql/sql-dialects';
import { columnText } from '../sql/sql-run';
import type { TimeType } from './mapping';
import { MappingMismatchError } from './mapping-errors';

/** What the start-up inspection learned about a column. */
export type ColumnInfo = CatalogColumn;

// ---------------------------------------------------------------------------------------------
// Time
// ---------------------------------------------------------------------------------------------

/** The layout of an ISO 8601 text column, learned from one of its values. */
export interface IsoFormat {
  /** `T` or a space between date and time. */
  readonly separator: 'T' | ' ';
  /** Digits after the seconds (0 to 3). */
  readonly fraction: number;
  /** The zone suffix as written (`Z`, `+02:00`, `+0200`, or empty: read as UTC). */
  readonly zone: string;
  /** The zone's offset from UTC, in ms. */
  readonly offsetMs: number;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})([T ])(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * The last time written as ISO text or a timestamp: four-digit years end in 9999, and a day of
 * margin keeps every zone offset's local time inside them.
 */
const MAX_DATE_MS = 253_402_214_399_999; // 9999-12-30T23:59:59.999Z

/** An ISO text value in milliseconds, with its layout; `undefined` when it is not ISO 8601 text. */
export function parseIso(value: string): { ms: number; format: IsoFormat } | undefined {
  const m = ISO.exec(value);
  if (!m) return undefined;
  const zone = m[9] ?? '';
  let offsetMs = 0;
  if (zone !== '' && zone !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    offsetMs = (zone[0] === '-' ? -1 : 1) * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0')) * 60_000;
  }
  const fraction = m[8] ?? '';
  const local = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[5]), Number(m[6]), Number(m[7]), Number(fraction.padEnd(3, '0').slice(0, 3)));
  return { ms: local - offsetMs, format: { separator: m[4] as 'T' | ' ', fraction: fraction.length, zone, offsetMs } };
}

/** The layout of an ISO text value that can serve as `last_updated`, or why it cannot. Text without a zone is UTC. */
export function isoFormatOf(value: string): IsoFormat | string {
  const parsed = parseIso(value);
  if (!parsed) return `${JSON.stringify(value.slice(0, 40))} is not ISO 8601 text (YYYY-MM-DD HH:MM:SS[.fff][Z|±HH:MM])`;
  if (parsed.format.fraction > 3) return `${JSON.stringify(value)} has more than millisecond precision; store milliseconds or use a timestamp column`;
  return parsed.format;
}

/** Milliseconds as ISO text in `format` (the column's own layout, so text order stays time order). */
export function formatIso(ms: number, format: IsoFormat): string {
  const iso = new Date(ms + format.offsetMs).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const seconds = `${iso.slice(0, 10)}${format.separator}${iso.slice(11, 19)}`;
  return `${seconds}${format.fraction > 0 ? `.${iso.slice(20, 20 + format.fraction)}` : ''}${format.zone}`;
}

/** The layout a new ISO text column gets (JavaScript's `toISOString`). */
export const DEFAULT_ISO_FORMAT: IsoFormat = { separator: 'T', fraction: 3, zone: 'Z', offsetMs: 0 };

/**
 * One time column, as the adapter reads, sorts, compares and writes it. `select` reads it (as
 * milliseconds for timestamps), `toMs` turns what was read into milliseconds, `sort` is what ORDER
 * BY and the keyset compare, and `value(ms)` is `ms` in the column's terms.
 */
export interface TimeKey {
  readonly type: TimeType;
  readonly column: string;
  /** The distance between two representable values, in ms. */
  readonly resolutionMs: number;
  readonly sort: RawBuilder<unknown>;
  readonly select: RawBuilder<unknown>;
  toMs(raw: unknown): number | undefined;
  /** `ms` (a multiple of the resolution, within the Date range) as `sort` compares it: a parameter or an expression. */
  value(ms: number): unknown;
  /** `ms` as a write stores it in the column. */
  write(ms: number): unknown;
}

const numeric = (raw: unknown): number | undefined => {
  const n = typeof raw === 'number' ? raw : typeof raw === 'bigint' ? Number(raw) : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  return Number.isFinite(n) ? n : undefined;
};

/** Whether the declared type is an integer type (SQLite: by its affinity rule, "INT" anywhere). */
export function isIntegerType(kind: SqlKind, type: string): boolean {
  return SQL_DIALECTS[kind].isIntegerType(type);
}

function isTimestampType(type: string): boolean {
  return /^(timestamp|datetime)/.test(type);
}

function isTextType(type: string): boolean {
  return /char|text|clob|string/.test(type) || type === '';
}

/**
 * The time key of a column, after checking that its declared type fits the mapped type. `iso`
 * is the layout of the column's text (iso-text, and SQLite's timestamp, which is text there).
 */
export function timeKey(kind: SqlKind, table: string, info: ColumnInfo, type: TimeType, iso: IsoFormat | undefined): TimeKey {
  const { sql } = loadKysely();
  const dialect = SQL_DIALECTS[kind];
  const ref = sql.ref(info.name);
  const mismatch = (want: string) =>
    new MappingMismatchError(`${table}.${info.name} is declared ${info.type || 'without a type'}, which cannot hold ${type} (${want})`, table, info.name);
  const plain = { type, column: info.name, sort: ref, select: ref };
  if (type === 'epoch-ms' || type === 'epoch-s') {
    if (dialect.typedColumns && !isIntegerType(kind, info.type) && !/^(numeric|decimal|double|real|float)/.test(info.type)) throw mismatch('a number column');
    const scale = type === 'epoch-ms' ? 1 : 1000;
    return {
      ...plain,
      resolutionMs: scale,
      toMs: (raw) => {
        const n = numeric(raw);
        return n === undefined ? undefined : Math.floor(n) * scale;
      },
      value: (ms) => ms / scale,
      write: (ms) => ms / scale,
    };
  }
  // Where there is no date-time type (SQLite), a timestamp column holds ISO text.
  if (type === 'iso-text' || !dialect.timestampColumn) {
    if (dialect.typedColumns && !isTextType(info.type)) throw mismatch('a text column');
    const format = iso ?? DEFAULT_ISO_FORMAT;
    return {
      ...plain,
      resolutionMs: 10 ** (3 - format.fraction),
      toMs: (raw) => (raw === null || raw === undefined ? undefined : parseIso(columnText(raw))?.ms),
      value: (ms) => formatIso(ms, format),
      write: (ms) => formatIso(ms, format),
    };
  }
  if (!isTimestampType(info.type)) throw mismatch('a timestamp or datetime column');
  // Sorted, read and written in the database's terms (the dialect's `timestampColumn`), compared in milliseconds.
  return { ...dialect.timestampColumn(info), type, column: info.name, toMs: numeric };
}

/**
 * A keyset position's time in the column's terms: the representable value at or before `ms`, and
 * whether it is `ms` exactly. When it is not, "after (ms, id)" is "from the next representable
 * value on" whatever the id: the caller then compares with `(next, '')` (no id is empty).
 * `undefined`: `ms` lies beyond every value the column can hold.
 */
export function timeBound(key: TimeKey, ms: number): { value: unknown; exact: boolean } | undefined {
  const res = key.resolutionMs;
  const floor = Math.floor(ms / res) * res;
  const exact = floor === ms;
  const at = exact ? floor : floor + res;
  if (key.type !== 'epoch-ms' && key.type !== 'epoch-s' && at > MAX_DATE_MS) return undefined;
  return { value: key.value(at), exact };
}

/** `last_updated` as a write stores it: a multiple of the column's resolution, at most `MAX_DATE_MS` for dates. */
export function storableMs(key: TimeKey, ms: number): number {
  const floored = Math.floor(ms / key.resolutionMs) * key.resolutionMs;
  return key.type === 'epoch-ms' || key.type === 'epoch-s' ? floored : Math.min(floored, MAX_DATE_MS - (MAX_DATE_MS % key.resolutionMs));
}

// ---------------------------------------------------------------------------------------------
// Ids
// ---------------------------------------------------------------------------------------------

/** How the id column is sorted, matched and written. */
export interface IdKey {
  readonly column: string;
  /** What ORDER BY and the keyset compare: byte order of the id's text. */
  readonly sort: RawBuilder<unknown>;
  /** Whether `sort` is a plain column an ordinary index serves in that order. */
  readonly direct: boolean;
  readonly integer: boolean;
  /** PostgreSQL `uuid`. */
  readonly uuid: boolean;
  /** `column = value`, exact (see `exactlyEquals`). */
  equals(value: unknown): RawBuilder<unknown>;
  /** The `_id` of a read value. */
  text(raw: unknown): string;
  /** The value to look up or write for an `_id`, or why the column cannot hold it. */
  param(id: string): { value: unknown } | { problem: string };
}

/**
 * `column = value` that matches exactly: on MySQL/MariaDB a text column in a case-insensitive or
 * PAD SPACE collation (`'mug-1' = 'MUG-1 '`) is compared on its bytes too, after the indexed
 * comparison has narrowed the rows.
 */
export function exactlyEquals(kind: SqlKind, info: ColumnInfo, value: unknown): RawBuilder<unknown> {
  return SQL_DIALECTS[kind].exactlyEquals(loadKysely().sql.ref(info.name), info, value);
}

/** A canonical decimal integer of at most 19 digits: what the database gives back as text for it. */
const CANONICAL_INTEGER = /^(0|-?[1-9]\d{0,18})$/;

export function idKey(kind: SqlKind, info: ColumnInfo, sortColumn: string | undefined): IdKey {
  const { sql } = loadKysely();
  const ref = sql.ref(info.name);
  const dialect = SQL_DIALECTS[kind];
  const integer = isIntegerType(kind, info.type);
  const uuid = dialect.uuidType !== undefined && info.type === dialect.uuidType;
  // A sort column (MariaDB's generated one) is byte-ordered already; otherwise the dialect's byte-ordered expression, if the column needs one.
  const byteOrder = sortColumn === undefined ? dialect.byteOrder(ref, info, integer) : undefined;
  const sort: RawBuilder<unknown> = sortColumn !== undefined ? sql.ref(sortColumn) : (byteOrder ?? ref);
  const direct = byteOrder === undefined;
  return {
    column: info.name,
    sort,
    direct,
    integer,
    uuid,
    equals: (value) => exactlyEquals(kind, info, value),
    text: columnText,
    param(id) {
      if (integer) {
        if (!CANONICAL_INTEGER.test(id)) return { problem: `the id column ${info.name} holds integers, and ${JSON.stringify(id.slice(0, 40))} is not one` };
        // As text: every database converts it to the column's integer type, without float rounding.
        return { value: id };
      }
      if (uuid && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) {
        return { problem: `the id column ${info.name} holds UUIDs (lower case), and ${JSON.stringify(id.slice(0, 40))} is not one` };
      }
      if (!dialect.textHoldsNul && id.includes('\u0000')) return { problem: 'PostgreSQL text cannot hold U+0000 (NUL)' };
      return { value: id };
    },
  };
}
