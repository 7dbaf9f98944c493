import { AppError } from '../domain/errors.js';
import type { ErrorCode } from '../domain/errors.js';

/**
 * The unique constraints a caller can run into, and the `*_taken` error each one means. Each engine
 * recognises them in its own driver errors (column lists, constraint names) and reports them alike.
 */
export type UniqueConstraint = 'user_group_provided_id' | 'user_group_token' | 'data_source_provided_id' | 'schema_name' | 'workspace_name';

const TAKEN: Record<UniqueConstraint, { code: ErrorCode; field: string; message: string }> = {
  user_group_provided_id: {
    code: 'user_group_id_taken',
    field: 'new_user_group_id',
    message: 'Another user group in this environment already has that id.',
  },
  // Only an import that carries tokens can hit this: a token copied from another group or tenant.
  user_group_token: {
    code: 'user_group_token_taken',
    field: 'token',
    message: 'Another user group already has that token.',
  },
  data_source_provided_id: {
    code: 'data_source_id_taken',
    field: 'provided_id',
    message: 'A data source in this environment already has that provided id.',
  },
  schema_name: {
    code: 'schema_name_taken',
    field: 'name',
    message: 'A schema with that name already exists in this workspace.',
  },
  workspace_name: {
    code: 'workspace_name_taken',
    field: 'name',
    message: 'A workspace with that name already exists.',
  },
};

export function takenError(constraint: UniqueConstraint, cause: unknown): AppError {
  const { code, field, message } = TAKEN[constraint];
  return new AppError(code, message, { field, cause });
}

/**
 * A mapping row whose data source (or schema) went away between the domain's check and the write:
 * to the caller it is the same as naming one that does not exist.
 */
export function vanishedReferenceError(cause: unknown): AppError {
  return new AppError('unknown_data_source', 'A data source of the mapping no longer exists in this environment.', { field: 'mapping', cause });
}

/**
 * A mapping row whose data source changed schema between the domain's check and the write (the
 * database's own check caught it): the same error as naming a data source of another schema.
 */
export function mappingSchemaChangedError(cause: unknown): AppError {
  return new AppError('data_source_schema_mismatch', 'A data source of the mapping now serves another schema; map it under that schema or choose another data source.', {
    field: 'mapping',
    cause,
  });
}

/** A group linked under a parent that was deleted between the check and the write's commit. */
export function vanishedParentError(cause: unknown): AppError {
  return new AppError('unknown_parent', 'The parent user group no longer exists in this environment.', { field: 'parent_user_group_id', cause });
}
