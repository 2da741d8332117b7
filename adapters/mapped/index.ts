export { MappedAdapter, createMappedAdapter, openMappedAdapter, type MappedAdapterOptions } from './mapped-adapter';
export { MappedEntityStore } from './mapped-store';
export { MappingSchema, mappingJsonSchema, parseMapping, readMappingFile, TIME_TYPES, type EntityMapping, type Mapping, type TimeType } from './mapping';
export { InvalidMappingError, MappedWriteRefusedError, MappingMismatchError } from './mapping-errors';
