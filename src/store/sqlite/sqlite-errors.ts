import Database from 'better-sqlite3';
import { failure } from '../../domain/errors.js';
import { MAPPING_SCHEMA_MISMATCH } from './migrations/0004-mapping-schema-agreement.js';
import type { UniqueConstraint } from '../../domain/errors.js';

/** The column list SQLite names in "UNIQUE constraint failed: ..." for each constraint a caller can hit. */
const UNIQUE_COLUMNS: Record<UniqueConstraint, string> = {
  user_group_provided_id: 'user_groups.workspace_id, user_groups.environment, user_groups.provided_id',
  user_group_token: 'user_groups.token_hash',
  data_source_provided_id: 'data_sources.workspace_id, data_sources.environment, data_sources.provided_id',
  schema_name: 'schemas.workspace_id, schemas.name',
  workspace_name: 'workspaces.name',
  schema_number: 'schemas.workspace_id, schemas.number',
  data_source_number: 'data_sources.workspace_id, data_sources.number',
};

/** Failures that a later retry can cure: contention, a full or read-only disk, a vanished file. */
const UNAVAILABLE_PREFIXES = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_READONLY',
];

const CLOSED_MESSAGE = 'The database connection is not open';

/** The one place where SQLite driver errors become domain errors; anything unrecognised passes through. */
export function mapSqliteError(error: unknown): never {
  // A call after close (a request still at work while the process shuts down) is unavailable, as on
  // PostgreSQL's ended pool; better-sqlite3 reports it as a TypeError of this message.
  if (error instanceof TypeError && error.message === CLOSED_MESSAGE) throw failure.unavailable(error);
  if (!(error instanceof Database.SqliteError)) throw error;
  if (error.code === 'SQLITE_CONSTRAINT_UNIQUE') {
    const constraint = (Object.keys(UNIQUE_COLUMNS) as UniqueConstraint[]).find((candidate) =>
      error.message.endsWith(`: ${UNIQUE_COLUMNS[candidate]}`),
    );
    if (constraint) throw failure.taken(constraint, error);
  }
  if (error.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw failure.vanishedDataSource(error);
  // A mapping entry whose data source number no longer names a row (src/store/catalogue-numbers.ts).
  if (error.code === 'SQLITE_CONSTRAINT_NOTNULL' && error.message.includes('user_group_mappings.'))
    throw failure.vanishedDataSource(error);
  if (error.code === 'SQLITE_CONSTRAINT_TRIGGER' && error.message === MAPPING_SCHEMA_MISMATCH)
    throw failure.mappedSchemaChanged(error);
  if (UNAVAILABLE_PREFIXES.some((prefix) => error.code.startsWith(prefix))) throw failure.unavailable(error);
  throw error;
}
