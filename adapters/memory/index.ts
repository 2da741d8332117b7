export { MemoryAdapter, MemoryEntityStore, createMemoryAdapter } from './memory-adapter';
