/**
 * The wire contract, the one place the interface is described: zod schemas for every structure in
 * both wire forms, the converters between them, the tolerant item reader, the entity descriptors,
 * the query tables, the webhook and reverse route tables, the limits and the dialects. TypeScript
 * types derive from the schemas; nothing else in the kit defines a wire shape.
 */
export * from './webhook';
export * from './reverse';
export * from './messages';
export * from './converters';
export * from './parse';
export * from './limits';
export * from './entities';
export * from './query';
export * from './webhook-routes';
export * from './reverse-routes';
export * from './dialects';
export * from './item-reader';
