import Database from 'better-sqlite3';
import { AppError, unavailable } from '../../domain/errors.js';
import type { ErrorCode } from '../../domain/errors.js';

interface UniqueTarget {
  /** The column list SQLite names in "UNIQUE constraint failed: ..." for this constraint. */
  columns: string;
  code: ErrorCode;
  field: string;
  message: string;
}

const UNIQUE_TARGETS: readonly UniqueTarget[] = [
  {
    columns: 'user_groups.workspace_id, user_groups.environment, user_groups.provided_id',
    code: 'user_group_id_taken',
    field: 'new_user_group_id',
    message: 'Another user group in this environment already has that id.',
  },
  {
    columns: 'data_sources.workspace_id, data_sources.environment, data_sources.provided_id',
    code: 'data_source_id_taken',
    field: 'provided_id',
    message: 'A data source in this environment already has that provided id.',
  },
  {
    columns: 'schemas.workspace_id, schemas.name',
    code: 'schema_name_taken',
    field: 'name',
    message: 'A schema with that name already exists in this workspace.',
  },
  {
    columns: 'workspaces.name',
    code: 'workspace_name_taken',
    field: 'name',
    message: 'A workspace with that name already exists.',
  },
];

/** Failures that a later retry can cure: contention, a full or read-only disk, a vanished file. */
const UNAVAILABLE_PREFIXES = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_READONLY'];

/** The one place where SQLite driver errors become domain errors; anything unrecognised passes through. */
export function mapSqliteError(error: unknown): never {
  if (!(error instanceof Database.SqliteError)) throw error;
  if (error.code === 'SQLITE_CONSTRAINT_UNIQUE') {
    const target = UNIQUE_TARGETS.find((candidate) => error.message.endsWith(`: ${candidate.columns}`));
    if (target) throw new AppError(target.code, target.message, { field: target.field, cause: error });
  }
  if (UNAVAILABLE_PREFIXES.some((prefix) => error.code.startsWith(prefix))) throw unavailable(error);
  throw error;
}
