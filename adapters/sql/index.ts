export {
  SqlAdapter,
  SqlConnectError,
  SqlEntityStore,
  createSqlAdapter,
  openSqlAdapter,
  type SqlAdapterOptions,
} from './sql-adapter';
export { redactConnectionSpec, type ConnectionOptions, type SqlConnectionSpec } from './sql-connect';
export { migrateSqlSchema, dropSqlSchema, SqlDuplicateKeysError, type SqlTableNames } from './sql-migrations';
export { SqlDriverUnavailableError, type SqlKind } from './sql-dialects';
export { createSqlReverseStateStore, dropSqlReverseState, type SqlReverseStateOptions } from './sql-reverse-state';
export { createSqlConnectionRegistry, type SqlConnectionRegistry, type SqlConnectionRegistryOptions } from './sql-reverse-registry';
