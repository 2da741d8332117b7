/**
 * `storebridge/adapter`: everything an adapter author needs beyond the root's interface and base
 * classes: the sort-key helpers, the write rules (`resolveWrite`, `mergeMembers`, `uniqueKeyOf`),
 * the per-`_id` lock, the in-process Idempotency-Key record store, the guard the kit wraps every
 * adapter in, and the CLI registration (`docs/adapter-authors.md`).
 */
export * from './adapter';
export * from './adapter-guard';
export { registerAdapterSpec, type AdapterRegistration } from './adapter-registry';
