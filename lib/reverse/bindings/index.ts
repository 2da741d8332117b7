export { createReverseServiceRouter, type ReverseRouterOptions, type ReverseServiceRouter } from './reverse-express';
export { createReverseNodeHandler, type ReverseNodeHandler } from './reverse-node';
export { createReverseFetchHandler, type ReverseFetchHandler, type ReverseFetchOptions } from './reverse-fetch';
export type { ReverseBindingInput, ReverseBindingOptions } from './reverse-http';
