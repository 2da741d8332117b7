/**
 * The mapped adapter's errors: a mapping file that is not valid, and a valid one that does not fit
 * the database it is opened on. Both are thrown at start, before anything is served; their
 * messages are one line and name the file's member, the table and the column.
 */
import { StorebridgeError } from '../../lib/errors';

/** The mapping file is not JSON, or breaks its schema (`docs/mapping.schema.json`). */
export class InvalidMappingError extends StorebridgeError {
  override readonly name = 'InvalidMappingError';
  readonly code = 'INVALID_MAPPING';
}

/**
 * The database lacks what the mapping names (a table, a column), or holds something the adapter
 * cannot serve as mapped (a time column of another type than declared, ISO text in several
 * formats). `table` and `column` name what is missing or wrong.
 */
export class MappingMismatchError extends StorebridgeError {
  override readonly name = 'MappingMismatchError';
  readonly code = 'MAPPING_MISMATCH';
  constructor(
    message: string,
    readonly table: string,
    readonly column?: string,
  ) {
    super(message);
  }
}

/**
 * A write the mapping does not allow: a create or an update of an entity whose `writes` has no
 * such list, or an entity the mapping does not map. The write webhooks refuse these with a 400
 * reason before the adapter is asked; a program calling `upsert` directly meets this error.
 */
export class MappedWriteRefusedError extends StorebridgeError {
  override readonly name = 'MappedWriteRefusedError';
  readonly code = 'MAPPED_WRITE_REFUSED';
}
