export {
  SqlAdapter,
  SqlConnectError,
  SqlEntityStore,
  createSqlAdapter,
  openSqlAdapter,
  type SqlAdapterOptions,
} from './sql-adapter';
export { parseSqlSpec, redactConnectionSpec, type ConnectionOptions, type SqlConnectionSpec } from './sql-connect';
export { migrateSqlSchema, dropSqlSchema, tableNames, type SqlTableNames } from './sql-migrations';
export { keysetPredicate, SqlDriverUnavailableError, type SqlKind } from './sql-dialects';
export { createSqlReverseStateStore, dropSqlReverseState, type SqlReverseStateOptions } from './sql-reverse-state';
