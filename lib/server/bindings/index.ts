/**
 * The store core's bindings, all table-driven from the contract's `WEBHOOK_ROUTES` and alike:
 * Express (4 and 5), plain `node:http`, and the Fetch API. docs/deployment.md shows each.
 */
export { createStoreRouter, createStoreHandlers, listProductsHandler, listOrdersHandler, productByIdHandler, orderByIdHandler, writeProductHandler, writeOrderHandler, type StoreHandlers } from './express';
export { createStoreListener, type StoreListener, type StoreListenerOptions } from './node-http';
export { createStoreFetchHandler, type StoreFetchHandler, type StoreFetchHandlerOptions } from './fetch';
