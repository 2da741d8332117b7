/**
 * Whole-catalog iteration over a store's list webhook, defensive against stores written by anyone:
 * duplicates across pages are dropped and reported, sort-order violations and `itemsTotal`
 * changes are reported, a repeating cursor ends the walk with `StorePagingError` instead of
 * looping forever, and an offset walk advances by the items it actually received, so a short
 * non-final page never skips anything. Placeholder totals (999, 9999) never end a walk early:
 * only an empty page (offsets) or a missing `next` (cursors) does; pages that bring nothing new
 * stop it instead of letting it loop.
 */
import type { Entity, ItemOf } from '../contract/entities';
import type { Paging, SortOrder } from '../contract/messages';
import type { ListFilters } from '../contract/query';
import { compareKeys, keyOf, type SortKey } from '../adapter';
import { z } from 'zod';
import { opt, readOption } from '../options';
import { MAX_STUB_PAGE_SIZE } from '../contract/limits';
import { StorePagingError } from './client-errors';
import { CompactStringSet } from './compact-string-set';
import { linkedController } from './linked-abort';
import { addNormalisations, countNormalisation, isPlaceholderTotal, type InvalidItem, type ItemStub, type NormalisationCounts } from './store-reply';

/** Where a walk stands: resume a walk by passing this back as `start`. */
export type WalkPosition = { readonly offset: number } | { readonly next: string };

export type WalkAnomaly =
  | { readonly kind: 'duplicate'; readonly _id: string }
  | { readonly kind: 'sort-order'; readonly _id: string; readonly previousId: string }
  | { readonly kind: 'items-total-changed'; readonly from: number; readonly to: number }
  | { readonly kind: 'items-total-mismatch'; readonly itemsTotal: number; readonly received: number }
  | { readonly kind: 'cursor-loop'; readonly next: string }
  /** The store answered an offset page from a later position than asked (items between may be missing). */
  | { readonly kind: 'offset-moved'; readonly requested: number; readonly answered: number };

/** One page as parsed by the client. */
export interface ListPage<T> {
  readonly paging: Paging;
  /** False when `itemsTotal` is a placeholder (999, 9999, …) or unusable. */
  readonly totalKnown: boolean;
  /** What the store sent for `itemsTotal` when it was not a count (JSON text); `paging.itemsTotal` is then 0 and means nothing. */
  readonly unusableItemsTotal?: string;
  readonly items: T[];
  /** Items of an ids-only list (only id and `last_updated`): never items themselves. */
  readonly stubs: ItemStub[];
  readonly invalid: InvalidItem[];
  /** What the reader normalised in this page, by kind. */
  readonly normalisations: NormalisationCounts;
  readonly bytes: number;
  readonly durationMs: number;
  /**
   * The most ids one batched by-ID read (`StoreClient.readByIds`) may ask this store for, when the
   * page advertised the extension (`BY_IDS_HEADER`); `undefined`: read one id per request.
   */
  readonly byIds?: number;
}

export interface WalkPage<T> extends ListPage<T> {
  /** Items of this page not yielded before (duplicates removed). */
  readonly fresh: T[];
  /** Stubs of this page not seen before (duplicates removed): fetch them by ID. */
  readonly freshStubs: ItemStub[];
  /** Where to resume after this page (`undefined` once the walk is complete). */
  readonly position: WalkPosition | undefined;
  readonly anomalies: WalkAnomaly[];
}

/** A walk: its paging strategy, and the list filters every page request sends (`ListFilters`, from `LIST_QUERY`). */
export interface WalkOptions extends ListFilters {
  readonly jobid: number;
  /** Default `asc`. */
  readonly sortorder?: SortOrder;
  /** `auto` (default): follow `paging.next` when the store gives one, else offsets. */
  readonly strategy?: 'auto' | 'offset' | 'cursor';
  /** > 1: fetch offset pages in parallel once `itemsTotal` is known (offset walks only). */
  readonly concurrency?: number;
  /** Resume here (a `position` from an earlier walk). */
  readonly start?: WalkPosition;
  readonly signal?: AbortSignal;
  /** Called for every anomaly as it is seen. */
  readonly onAnomaly?: (anomaly: WalkAnomaly) => void;
  /**
   * Page size asked for (`limit`) once a page came back as stubs only (an ids-only list), on a
   * serial walk (`concurrency` 1). Default `MAX_STUB_PAGE_SIZE` (10,000), what the kit's store
   * allows for stub pages; a store that caps lower, or ignores `limit`, just sends fewer. `0`: keep
   * the client's `pageSize`.
   */
  readonly stubPageSize?: number;
}

/**
 * The walk's own members of its per-call options; the others (sortorder, strategy, start, the list
 * filters a store may declare) are the list call's, which checks them. Not strict, so.
 */
const WALK_OPTIONS = z.object({
  jobid: opt.int({ min: 0 }),
  concurrency: opt.int({ min: 1, max: 64 }).optional(),
  stubPageSize: opt.int({ min: 0 }).optional(),
});

export interface WalkSummary {
  pages: number;
  /** Distinct items and stubs received. */
  items: number;
  /** Of `items`, the stubs (ids-only entries). */
  stubs: number;
  duplicates: number;
  invalid: number;
  /** The last page's `itemsTotal`; `undefined` when it was not a count (see `unusableItemsTotal`). */
  itemsTotal: number | undefined;
  /** What the store first sent for `itemsTotal` when it was not a count (JSON text, e.g. `{"0":"310","count(*)":"310"}`). */
  unusableItemsTotal?: string;
  maxPageBytes: number;
  maxPageMs: number;
  anomalies: WalkAnomaly[];
  /** Everything the reader normalised, by kind (pages, items and the walk's own notes). */
  normalisations: NormalisationCounts;
  complete: boolean;
}

/** What the walk needs from the client: one list request. */
export type FetchPage<T> = (query: { offset?: number; next?: string; limit?: number }, signal: AbortSignal) => Promise<ListPage<T>>;

const MAX_EMPTY_CURSOR_PAGES = 10;
/** Offset pages in a row that bring only items already received: the store ignores `offset`. */
const MAX_REPEATED_PAGES = 3;

/** Items the store sent in a page, valid or not, stubs included: what an offset advances by. */
const received = (page: ListPage<unknown>) => page.items.length + page.stubs.length + page.invalid.length;
const MAX_REPORTED_ANOMALIES = 1000;

/** The cursors a walk has followed (one per page: compact too), starting with `first`. */
function cursorsSeen(first: string): CompactStringSet {
  const set = new CompactStringSet();
  set.add(first);
  return set;
}

export class CatalogWalk<E extends Entity> implements AsyncIterable<ItemOf<E>> {
  readonly summary: WalkSummary = { pages: 0, items: 0, stubs: 0, duplicates: 0, invalid: 0, itemsTotal: undefined, maxPageBytes: 0, maxPageMs: 0, anomalies: [], normalisations: {}, complete: false };
  /** Whether the last `itemsTotal` is a real count (not a placeholder, not unusable). */
  private totalKnown = false;
  /** Offset pages in a row that brought nothing new. */
  private repeatedPages = 0;
  /** Every `_id` yielded so far (compact and off-heap: a walk can hold millions). */
  private readonly seen = new CompactStringSet();
  private last: SortKey | undefined;
  private started = false;
  /** Where an offset walk started (items before it count as received for the total check). */
  private baseOffset = 0;
  /** `limit` for the next serial page: set once a page came back as stubs only (see `stubPageSize`). */
  private stubLimit: number | undefined;

  constructor(
    readonly entity: E,
    private readonly fetchPage: FetchPage<ItemOf<E>>,
    private readonly options: WalkOptions,
  ) {
    readOption('', WALK_OPTIONS, options);
  }

  /** Items, each once, in the store's order. */
  async *[Symbol.asyncIterator](): AsyncIterator<ItemOf<E>> {
    for await (const page of this.pages()) yield* page.fresh;
  }

  /** Pages, with what each adds and where to resume after it. */
  async *pages(): AsyncGenerator<WalkPage<ItemOf<E>>, void, undefined> {
    if (this.started) throw new Error('a CatalogWalk can be iterated once');
    this.started = true;
    // Parallel offset pages each listen to it: sized for them, so Node does not warn of a leak.
    const inner = linkedController(this.options.signal, 2 * (this.options.concurrency ?? 1) + 8);
    try {
      yield* this.run(inner.controller.signal);
      this.summary.complete = true;
    } finally {
      // Stops pages fetched ahead when the consumer leaves early (break, throw).
      inner.controller.abort();
      inner.release();
    }
  }

  private note(anomaly: WalkAnomaly, list: WalkAnomaly[]): void {
    list.push(anomaly);
    if (this.summary.anomalies.length < MAX_REPORTED_ANOMALIES) this.summary.anomalies.push(anomaly);
    this.options.onAnomaly?.(anomaly);
  }

  /** Dedupes, checks order and totals, updates the summary. */
  private accept(page: ListPage<ItemOf<E>>, position: WalkPosition | undefined): WalkPage<ItemOf<E>> {
    const anomalies: WalkAnomaly[] = [];
    const s = this.summary;
    if (s.itemsTotal !== undefined && this.totalKnown && page.totalKnown && page.paging.itemsTotal !== s.itemsTotal) {
      this.note({ kind: 'items-total-changed', from: s.itemsTotal, to: page.paging.itemsTotal }, anomalies);
    }
    s.itemsTotal = page.unusableItemsTotal === undefined ? page.paging.itemsTotal : undefined;
    if (page.unusableItemsTotal !== undefined) s.unusableItemsTotal ??= page.unusableItemsTotal;
    this.totalKnown = page.totalKnown;
    const fresh: ItemOf<E>[] = [];
    const freshStubs: ItemStub[] = [];
    // The page's counts plus the walk's own notes on it (what the sync engine adds up per page).
    const normalisations: NormalisationCounts = { ...page.normalisations };
    for (const entry of inPageOrder(page)) {
      if (!this.seen.add(entry.key._id)) {
        s.duplicates++;
        this.note({ kind: 'duplicate', _id: entry.key._id }, anomalies);
        continue;
      }
      this.checkOrder(entry.key, anomalies, normalisations);
      if (entry.item) fresh.push(entry.item);
      else freshStubs.push(entry.stub!);
    }
    if (this.stubLimit === undefined && page.stubs.length > 0 && page.items.length === 0 && (this.options.concurrency ?? 1) === 1) {
      const size = this.options.stubPageSize ?? MAX_STUB_PAGE_SIZE;
      if (size > 0) this.stubLimit = size;
    }
    s.pages++;
    s.items += fresh.length + freshStubs.length;
    s.stubs += freshStubs.length;
    s.invalid += page.invalid.length;
    s.maxPageBytes = Math.max(s.maxPageBytes, page.bytes);
    s.maxPageMs = Math.max(s.maxPageMs, page.durationMs);
    addNormalisations(s.normalisations, normalisations);
    return { ...page, normalisations, fresh, freshStubs, position, anomalies };
  }

  /**
   * Checks the sort key `(last_updated, _id)`. An item without `last_updated` has no place in that
   * order (the deployed cursor stores send none): it is counted, not checked.
   */
  private checkOrder(key: { _id: string; last_updated?: number }, anomalies: WalkAnomaly[], counts: NormalisationCounts): void {
    if (key.last_updated === undefined) {
      countNormalisation(counts, 'last-updated-missing');
      return;
    }
    const k = keyOf(key);
    const sign = (this.options.sortorder ?? 'asc') === 'asc' ? 1 : -1;
    if (this.last && sign * compareKeys(k, this.last) < 0) this.note({ kind: 'sort-order', _id: k._id, previousId: this.last._id }, anomalies);
    this.last = k;
  }

  private finish(received: number, anomalies: WalkAnomaly[] = []): void {
    const total = this.summary.itemsTotal;
    if (total === undefined || received === total) return;
    if (this.totalKnown) this.note({ kind: 'items-total-mismatch', itemsTotal: total, received }, anomalies);
    else if (isPlaceholderTotal(total)) countNormalisation(this.summary.normalisations, 'items-total-placeholder');
  }

  private async *run(signal: AbortSignal): AsyncGenerator<WalkPage<ItemOf<E>>, void, undefined> {
    const strategy = this.options.strategy ?? 'auto';
    const start = this.options.start;
    if (start && 'next' in start) return yield* this.cursorWalk(start.next, signal);
    const offset = start && 'offset' in start ? start.offset : 0;
    this.baseOffset = offset;
    if (strategy === 'offset' || offset > 0) return yield* this.offsetWalk(offset, signal);
    // First page at offset 0 (a cursor walk: no paging parameter): the store's answer tells which
    // strategy it speaks. `offset=0` rather than nothing: a PHP store reading `$_GET['offset']`
    // prints a warning before its JSON when the parameter is absent (php-mysql, PHP 8).
    const first = await this.fetchPage(strategy === 'cursor' ? {} : { offset: 0 }, signal);
    const next = strategy === 'cursor' || first.paging.next !== undefined ? first.paging.next : undefined;
    if (strategy === 'cursor' || next !== undefined) {
      yield this.accept(first, next === undefined ? undefined : { next });
      if (next === undefined) return this.finish(this.summary.items + this.summary.invalid);
      return yield* this.cursorWalk(next, signal, cursorsSeen(next));
    }
    yield* this.offsetContinue(first, 0, signal);
  }

  private async *cursorWalk(start: string, signal: AbortSignal, seenCursors = cursorsSeen(start)): AsyncGenerator<WalkPage<ItemOf<E>>, void, undefined> {
    let next = start;
    let emptyRun = 0;
    for (;;) {
      const page = await this.fetchPage({ next, limit: this.stubLimit }, signal);
      const following = page.paging.next;
      const loop = following !== undefined && seenCursors.has(following);
      const accepted = this.accept(page, following === undefined || loop ? undefined : { next: following });
      yield accepted;
      // A resumed cursor walk has not seen the items before its start: no total to compare.
      if (following === undefined) return this.options.start ? undefined : this.finish(this.summary.items + this.summary.invalid);
      if (loop) {
        this.note({ kind: 'cursor-loop', next: following }, []);
        throw new StorePagingError({ operation: `list ${this.entity}`, method: 'GET', url: '(cursor walk)' }, `the store returned the same next cursor twice; stopped after ${this.summary.pages} pages`);
      }
      emptyRun = received(page) === 0 ? emptyRun + 1 : 0;
      if (emptyRun >= MAX_EMPTY_CURSOR_PAGES) {
        throw new StorePagingError({ operation: `list ${this.entity}`, method: 'GET', url: '(cursor walk)' }, `${emptyRun} empty pages in a row, each with a new next cursor; stopped`);
      }
      seenCursors.add(following);
      next = following;
    }
  }

  private async *offsetWalk(offset: number, signal: AbortSignal): AsyncGenerator<WalkPage<ItemOf<E>>, void, undefined> {
    const first = await this.fetchPage({ offset }, signal);
    yield* this.offsetContinue(first, offset, signal);
  }

  /**
   * Continues an offset walk whose page at `offset` is `page`. Ends on an empty page; at a known
   * `itemsTotal` after a short page (after a full page at `itemsTotal` one more request confirms
   * the end: a store whose `itemsTotal` is too low would otherwise lose its tail); or, after a
   * short page, on a page that holds only items already received (a store that rounds the offset
   * down to its own page size answers its last page again). A placeholder total never ends it.
   */
  private async *offsetContinue(page: ListPage<ItemOf<E>>, offset: number, signal: AbortSignal): AsyncGenerator<WalkPage<ItemOf<E>>, void, undefined> {
    const concurrency = this.options.concurrency ?? 1;
    // The widest page seen, not the page size asked for: a store may ignore `limit`.
    let widest = 0;
    let afterShort = false;
    for (;;) {
      if (afterShort && this.allSeen(page)) {
        yield this.repeatedEnd(page);
        return this.finish(this.baseOffset + this.summary.items + this.summary.invalid);
      }
      widest = Math.max(widest, received(page));
      const position = this.startOfPage(page, offset) + received(page);
      const total = page.paging.itemsTotal;
      const atEnd = page.totalKnown && position >= total;
      let accepted = this.accept(page, { offset: position });
      const nothingNew = accepted.fresh.length + accepted.freshStubs.length + accepted.invalid.length === 0;
      const done = received(page) === 0 || (atEnd && (received(page) < widest || nothingNew));
      if (done) accepted = { ...accepted, position: undefined };
      yield accepted;
      if (done) return this.finish(this.baseOffset + this.summary.items + this.summary.invalid);
      this.checkRepeats(nothingNew);
      afterShort = received(page) < widest;
      offset = position;
      if (concurrency > 1 && page.totalKnown && position < total) {
        offset = yield* this.parallelRanges(position, total, widest, concurrency, signal);
      }
      page = await this.fetchPage({ offset, limit: this.stubLimit }, signal);
    }
  }

  /** Whether every entry of a page (no invalid one among them) was received before. */
  private allSeen(page: ListPage<ItemOf<E>>): boolean {
    if (page.invalid.length > 0 || received(page) === 0) return false;
    return page.items.every((x) => this.seen.has(x._id)) && page.stubs.every((x) => this.seen.has(x._id));
  }

  /** The last page answered again: it ends the walk, adds nothing and is no duplicate, but what was read in it counts. */
  private repeatedEnd(page: ListPage<ItemOf<E>>): WalkPage<ItemOf<E>> {
    const s = this.summary;
    s.pages++;
    s.maxPageBytes = Math.max(s.maxPageBytes, page.bytes);
    s.maxPageMs = Math.max(s.maxPageMs, page.durationMs);
    addNormalisations(s.normalisations, page.normalisations);
    return { ...page, items: [], stubs: [], invalid: [], fresh: [], freshStubs: [], position: undefined, anomalies: [] };
  }

  /**
   * Where an offset page really starts: where it was asked for, unless the store says it answered
   * from further on (a store that rounds offsets up to its own page size): then from there, noted.
   */
  private startOfPage(page: ListPage<ItemOf<E>>, requested: number): number {
    const answered = page.paging.offset;
    if (answered === undefined || answered <= requested || received(page) === 0) return requested;
    this.note({ kind: 'offset-moved', requested, answered }, []);
    return answered;
  }

  /** Stops a walk whose pages keep bringing only items already received (a store that ignores `offset`). */
  private checkRepeats(nothingNew: boolean): void {
    this.repeatedPages = nothingNew ? this.repeatedPages + 1 : 0;
    if (this.repeatedPages >= MAX_REPEATED_PAGES) {
      throw new StorePagingError(
        { operation: `list ${this.entity}`, method: 'GET', url: '(offset walk)' },
        `${this.repeatedPages} pages in a row brought only items already received (does the store ignore offset?); stopped after ${this.summary.pages} pages`,
      );
    }
  }

  /**
   * Fetches `[from, to)` in ranges of `width`, `concurrency` at a time, and yields the pages in
   * order. A range whose page comes back short is completed with further requests. Returns where
   * the serial walk continues.
   */
  private async *parallelRanges(from: number, to: number, width: number, concurrency: number, signal: AbortSignal): AsyncGenerator<WalkPage<ItemOf<E>>, number, undefined> {
    const ranges: Array<[number, number]> = [];
    for (let a = from; a < to; a += width) ranges.push([a, Math.min(to, a + width)]);
    const fetchRange = async ([a, b]: [number, number]): Promise<Array<{ page: ListPage<ItemOf<E>>; at: number }>> => {
      const out: Array<{ page: ListPage<ItemOf<E>>; at: number }> = [];
      let at = a;
      while (at < b) {
        const page = await this.fetchPage({ offset: at }, signal);
        // A store that ignores `limit` may send more than the range: the next range has those.
        const room = b - at;
        const invalid = page.invalid.filter((x) => x.index < room);
        const stubs = page.stubs.filter((x) => x.index < room);
        const items = page.items.slice(0, Math.max(0, room - invalid.length - stubs.length));
        const cut = { ...page, items, stubs, invalid };
        out.push({ page: cut, at });
        if (received(cut) === 0) break;
        at += received(cut);
      }
      return out;
    };
    const tasks: Array<Promise<Array<{ page: ListPage<ItemOf<E>>; at: number }>>> = [];
    const launch = (i: number) => {
      if (i < ranges.length && !tasks[i]) {
        tasks[i] = fetchRange(ranges[i]);
        tasks[i].catch(() => undefined); // awaited in order below; this only prevents an early unhandled rejection
      }
    };
    let position = from;
    for (let i = 0; i < ranges.length; i++) {
      for (let j = i; j < i + concurrency; j++) launch(j);
      const parts = await tasks[i];
      for (const { page } of parts) {
        if (received(page) === 0) return position; // short data: the serial walk decides
        position += received(page);
        yield this.accept(page, { offset: position });
      }
      if (position < ranges[i][1]) return position;
    }
    return position;
  }
}

/** A page's items and stubs in the store's order, each with its sort key. */
function* inPageOrder<T extends { _id: string; last_updated?: number }>(page: ListPage<T>): Generator<{ key: T | ItemStub; item?: T; stub?: ItemStub }> {
  if (page.stubs.length === 0) {
    for (const item of page.items) yield { key: item, item };
    return;
  }
  if (page.items.length === 0 && page.invalid.length === 0) {
    // A page of stubs only (an ids-only listing): they are in page order already.
    for (const stub of page.stubs) yield { key: stub, stub };
    return;
  }
  // Items fill the positions that are neither stubs nor invalid, in order.
  const taken = new Set<number>([...page.stubs.map((x) => x.index), ...page.invalid.map((x) => x.index)]);
  const stubAt = new Map(page.stubs.map((x) => [x.index, x]));
  let next = 0;
  const total = page.items.length + page.stubs.length + page.invalid.length;
  for (let index = 0; index < total; index++) {
    const stub = stubAt.get(index);
    if (stub) yield { key: stub, stub };
    else if (!taken.has(index) && next < page.items.length) {
      const item = page.items[next++];
      yield { key: item, item };
    }
  }
}
