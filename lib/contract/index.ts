/**
 * The wire contract: zod schemas for every structure of the connector interface, in both wire
 * forms, the converters between them, and the parsing rules. TypeScript types derive from the
 * schemas; nothing else in the kit defines a wire shape.
 */
export * from './webhook';
export * from './reverse';
export * from './messages';
export * from './converters';
export * from './parse';
