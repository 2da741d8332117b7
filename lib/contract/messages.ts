/**
 * Envelopes around the resources: paging, list responses, write results, error bodies, and the
 * reverse connection's small status bodies. One schema per structure in the spec's
 * "Other structures" table, plus the ones this kit fixes where the interface leaves a gap
 * (docs/interface.md, docs/reverse-connection.md).
 */
import { z } from 'zod';
import { OrderSchema, ProductSchema } from './webhook';
import { ReverseOrderSchema, ReverseProductSchema } from './reverse';

export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/**
 * Paging object of a list response. Offset responses carry `offset` (this page's first
 * position); cursor responses carry no `offset`. `next` is absent on the last page.
 */
export const PagingSchema = z.object({
  pageSize: z.number().int().nonnegative(),
  itemsTotal: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative().optional(),
  next: z.string().min(1).optional(),
});
export type Paging = z.infer<typeof PagingSchema>;

export const ProductListResponseSchema = z.object({ paging: PagingSchema, products: z.array(ProductSchema) });
export const OrderListResponseSchema = z.object({ paging: PagingSchema, orders: z.array(OrderSchema) });
export type ProductListResponse = z.infer<typeof ProductListResponseSchema>;
export type OrderListResponse = z.infer<typeof OrderListResponseSchema>;

/** `{msg}`: a reason of a failed write, and (our decision for the spec's "not shown") a warning. */
export const WriteMessageSchema = z.object({ msg: z.string() });
export type WriteMessage = z.infer<typeof WriteMessageSchema>;

/**
 * A reason of a failed write: the spec's `{msg}`, and the same text as `message` with a numeric
 * `code` (the deployed form: Click2Sync's example stores answer `reasons: [{message, code}]`), so a
 * reader of either form finds it. This kit always sends all three; readers need only `msg`.
 */
export const WriteReasonSchema = WriteMessageSchema.extend({ message: z.string().optional(), code: z.number().int().optional() });
export type WriteReason = z.infer<typeof WriteReasonSchema>;

/**
 * Warnings arrive from stores written by anyone; the spec does not show their shape, so the
 * caller accepts any element. This kit always emits `{msg}` objects.
 */
export const AnyWarningsSchema = z.array(z.unknown());

export const OrderWriteSuccessSchema = z.object({
  success: z.literal(true),
  code: z.literal(200),
  warnings: AnyWarningsSchema,
  order: OrderSchema,
});
export const ProductWriteSuccessSchema = z.object({
  success: z.literal(true),
  code: z.literal(200),
  warnings: AnyWarningsSchema,
  product: ProductSchema,
});
export const WriteFailureSchema = z.object({
  success: z.literal(false),
  code: z.literal(400),
  error: z.string(),
  reasons: z.array(WriteReasonSchema),
  warnings: AnyWarningsSchema,
});
export type OrderWriteSuccess = z.infer<typeof OrderWriteSuccessSchema>;
export type ProductWriteSuccess = z.infer<typeof ProductWriteSuccessSchema>;
export type WriteFailure = z.infer<typeof WriteFailureSchema>;

/** Every non-2xx body (but write failures, which use `WriteFailure`). */
export const ErrorBodySchema = z.object({ error: z.string() });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

export const ProductByIdResponseSchema = z.object({ product: ProductSchema });
export const OrderByIdResponseSchema = z.object({ order: OrderSchema });

// ---- Reverse connection bodies ----------------------------------------------------------

export const CONNECTION_STATUSES = ['waiting', 'initialized', 'finishing', 'finished'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
/**
 * The status members of `{P}/upstreamstatus` (and of initialize replies), in the order a reader
 * looks them up: the deployed daemons read `upstreamstatus`, the spec and the public docs print
 * `connectionstatus`. Not a dialect choice: the service always answers both, the daemon reads either.
 */
export const UPSTREAM_STATUS_MEMBERS = ['upstreamstatus', 'connectionstatus'] as const;

const connectionStatus = z.enum(CONNECTION_STATUSES);
/** `{P}/upstreamstatus` (and initialize replies): the same status under every member of `UPSTREAM_STATUS_MEMBERS`. */
export const UpstreamStatusSchema = z.object({ [UPSTREAM_STATUS_MEMBERS[0]]: connectionStatus, [UPSTREAM_STATUS_MEMBERS[1]]: connectionStatus });
export type UpstreamStatus = z.infer<typeof UpstreamStatusSchema>;

/**
 * `{P}/ping` (deployed): what the service wants. `fetchingremote`: push the store's catalog
 * ("Fetch updates"); `pulling`: pull what the service hands out ("Send updates"); anything else: idle.
 */
export const PING_STATUSES = ['fetchingremote', 'pulling', 'idle'] as const;
export type PingStatus = (typeof PING_STATUSES)[number];
export const PingSchema = z.object({ connectionstatus: z.enum(PING_STATUSES) });

/** `{P}/strategy` (deployed): the kind of push wanted. */
export const PUSH_STRATEGIES = ['push', 'pingsample'] as const;
export type PushStrategy = (typeof PUSH_STRATEGIES)[number];
export const StrategySchema = z.object({ strategy: z.enum(PUSH_STRATEGIES) });

/**
 * `{P}/cursoroffset` (deployed): where an incremental push of the current entity starts: `0`, or the
 * `last_updated` of the last item pushed, exactly as the daemon sent it (a number, or a string such
 * as `"1517360038797 - 3"`).
 */
export const CursorOffsetSchema = z.object({ cursoroffset: z.union([z.number(), z.string()]) });

/** `GET /` on the service's host: daemons check reachability there (any 200 JSON object). */
export const ReachabilitySchema = z.object({ service: z.string(), ok: z.literal(true) });

/** `done` is this kit's addition (docs/reverse-connection.md): the pull transaction has no item left. */
export const HAS_MORE_VALUES = ['waiting', 'ready', 'done'] as const;
export type HasMore = (typeof HAS_MORE_VALUES)[number];
export const HasMoreSchema = z.object({ hasmore: z.enum(HAS_MORE_VALUES) });

export const ReadyForNextSchema = z.object({ ready: z.boolean() });

export const MODES = ['pull', 'push', 'pingsample', 'idle'] as const;
export type Mode = (typeof MODES)[number];
export const ModeSchema = z.object({ mode: z.enum(MODES) });

/**
 * Codes of the reasons in reverse failure records (`reasons[].code`): 1001–1003 in the storage failure
 * reports this kit's daemon sends, 1004–1006 in the records the service writes itself.
 */
export const REVERSE_FAILURE_CODES = {
  /** The store's `checkProduct` / `checkOrder` refused the item; one reason per message. */
  REFUSED_BY_STORE: 1001,
  /** The store's adapter threw while reading or writing the item. */
  STORE_FAILED: 1002,
  /** The item cannot be read into the store's (webhook) form. */
  NOT_CONVERTIBLE: 1003,
  /** The service gave up on an item handed out `maxDeliveries` times without an acknowledgement (a daemon that crashes on it). */
  NOT_ACKNOWLEDGED: 1004,
  /** The item was gone from the service's store when its turn came. */
  GONE_FROM_STORE: 1005,
  /** The item cannot be written in the connection's dialect. */
  NOT_WRITABLE: 1006,
} as const;

/** Storage failure report (daemon to service), spec "Errors" rule 1. */
export const StorageFailureReportSchema = z.object({
  error: z.string(),
  reasons: z.array(z.object({ message: z.string(), code: z.number().int() })),
});
export type StorageFailureReport = z.infer<typeof StorageFailureReportSchema>;

export const PulledProductSchema = z.object({ product: ReverseProductSchema });
export const PulledOrderSchema = z.object({ order: ReverseOrderSchema });
export const PushProductsPageSchema = z.object({ products: z.array(ReverseProductSchema) });
export const PushOrdersPageSchema = z.object({ orders: z.array(ReverseOrderSchema) });
/**
 * Reply of a push page: the distinct items new to this push, and the items the service could not
 * read (the rest of the page is stored; deployed daemons send one bad item among good ones). A page
 * of more than the service's `maxPushPageItems` items is refused whole (413 `{error}`).
 */
export const PushReceivedSchema = z.object({
  received: z.number().int().nonnegative(),
  /** The first refused items (at most the service's `maxRefusedListed`). */
  refused: z.array(z.object({ index: z.number().int().nonnegative(), id: z.string(), error: z.string() })).optional(),
  /** How many items were refused in all (present with `refused`). */
  refusedCount: z.number().int().nonnegative().optional(),
});
export const OkSchema = z.object({ ok: z.literal(true) });
/**
 * Reply of the reverse connection's acknowledgements (`succeded`/`failed`) and entity finish calls:
 * `{ok: true}`, or `{ok: true, duplicate: true}` for a repeat that changed nothing.
 */
export const AcknowledgedSchema = OkSchema.extend({ duplicate: z.literal(true).optional() });
