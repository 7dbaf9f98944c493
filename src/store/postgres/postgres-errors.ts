import { failure } from '../../domain/errors.js';
import type { UniqueConstraint } from '../../domain/errors.js';

/** The constraint names migration 0001 gives the unique constraints a caller can run into. */
const UNIQUE_CONSTRAINTS: Record<string, UniqueConstraint> = {
  user_groups_provided_id_key: 'user_group_provided_id',
  user_groups_token_hash_key: 'user_group_token',
  data_sources_provided_id_key: 'data_source_provided_id',
  schemas_name_key: 'schema_name',
  workspaces_name_key: 'workspace_name',
  // Migration 0010's: the numbers of a workspace's schemas and data sources.
  schemas_number_key: 'schema_number',
  data_sources_number_key: 'data_source_number',
};

/** Migration 0004's composite foreign key: a mapping's data source must serve the mapping's schema. */
const MAPPING_SCHEMA_CONSTRAINT = 'user_group_mappings_data_source_schema_fkey';

/** Migration 0006's foreign key from a group to its parent. */
const PARENT_CONSTRAINT = 'user_groups_parent_fkey';

/** A group's parent link was refused by the database: on a delete, a child is linked under the row. */
export function isParentLinkViolation(error: unknown): boolean {
  return codeOf(error) === '23503' && (error as { constraint?: string }).constraint === PARENT_CONSTRAINT;
}

/** Socket errors: the server is down, unreachable or went away mid-conversation. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The server ends the session right after sending these (administrator or crash-recovery shutdown). */
const SESSION_ENDING_SQLSTATES = new Set(['57P01', '57P02']);

/**
 * SQLSTATEs a later retry can cure: the server shutting down or starting up (57P01-57P03), out of
 * connections or other resources (class 53), a statement cancelled by statement_timeout (57014), and
 * a deadlock or serialization failure that outlived the store's own retries (40P01, 40001).
 */
const TRANSIENT_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '40001', '40P01']);

/**
 * node-postgres reports its own connection failures as plain Errors, recognisable only by message:
 * a connection that dropped or timed out while opening, the pool's wait for a free connection, a
 * query_timeout, a client broken by an earlier failure, and a pool that close() has ended.
 */
const CONNECTION_FAILURE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^timeout expired/,
  /^Query read timeout/,
  /^Client has encountered a connection error/,
  /^Client was closed and is not queryable/,
  /^Cannot use a pool after calling end on the pool/,
];

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the connection itself failed, so the client must be discarded rather than reused. */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isConnectionFailure);
  if (!(error instanceof Error)) return false;
  const code = codeOf(error);
  if (
    code !== undefined &&
    (NETWORK_ERROR_CODES.has(code) || SESSION_ENDING_SQLSTATES.has(code) || code.startsWith('08'))
  ) {
    return true;
  }
  return CONNECTION_FAILURE_MESSAGES.some((pattern) => pattern.test(error.message));
}

/** A deadlock or serialization failure: the transaction changed nothing and may simply run again. */
export function isTransientConflict(error: unknown): boolean {
  const code = codeOf(error);
  return code === '40001' || code === '40P01';
}

/**
 * A statement PostgreSQL could not even run as written (class 42: a syntax error, an unknown column):
 * a defect of the statement, never of the data, so a caller that falls back on a failure must
 * rethrow this one rather than hide it behind the fallback.
 */
export function isStatementDefect(error: unknown): boolean {
  return codeOf(error)?.startsWith('42') ?? false;
}

function isUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  return isConnectionFailure(error) || (code !== undefined && (TRANSIENT_SQLSTATES.has(code) || code.startsWith('53')));
}

/** The one place where node-postgres errors become domain errors; anything unrecognised passes through. */
export function mapPostgresError(error: unknown): never {
  if (codeOf(error) === '23505') {
    const constraint = UNIQUE_CONSTRAINTS[(error as { constraint?: string }).constraint ?? ''];
    if (constraint) throw failure.taken(constraint, error);
  }
  // A mapping entry whose data source number no longer names a row (src/store/catalogue-numbers.ts).
  if (codeOf(error) === '23502' && (error as { table?: string }).table === 'user_group_mappings')
    throw failure.vanishedDataSource(error);
  if (codeOf(error) === '23503') {
    const constraint = (error as { constraint?: string }).constraint;
    // A write that links a group under a parent deleted meanwhile (deletes handle their own case).
    if (constraint === PARENT_CONSTRAINT) throw failure.vanishedParent(error);
    throw constraint === MAPPING_SCHEMA_CONSTRAINT
      ? failure.mappedSchemaChanged(error)
      : failure.vanishedDataSource(error);
  }
  if (isUnavailable(error)) throw failure.unavailable(error);
  throw error;
}
