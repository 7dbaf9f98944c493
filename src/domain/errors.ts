/**
 * The one catalogue of error codes. Every failure the service reports is an AppError carrying one
 * of these codes; the HTTP layer turns it into the envelope, the CLI into a message on stderr.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_json: 400,
  invalid_field: 400,
  missing_field: 400,
  unknown_field: 400,
  unknown_schema: 400,
  unknown_data_source: 400,
  data_source_schema_mismatch: 400,
  unknown_parent: 400,
  unauthenticated: 401,
  invalid_api_token: 401,
  insufficient_scope: 403,
  user_group_not_found: 404,
  api_token_not_found: 404,
  data_source_not_found: 404,
  webhook_endpoint_not_found: 404,
  webhook_delivery_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  user_group_id_taken: 409,
  user_group_mismatch: 409,
  data_source_mismatch: 409,
  data_source_id_taken: 409,
  user_group_token_taken: 409,
  schema_name_taken: 409,
  data_source_in_use: 409,
  concurrent_change: 409,
  hierarchy_cycle: 409,
  hierarchy_too_deep: 409,
  user_group_has_children: 409,
  workspace_name_taken: 409,
  idempotency_key_reused: 409,
  idempotency_key_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  idempotency_key_limit: 429,
  headers_too_large: 431,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface AppErrorOptions {
  /** The request field at fault, when exactly one is. */
  field?: string;
  /** Seconds the caller should wait before trying again: a busy database, an empty rate-limit bucket, a request still running. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.field = options.field;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** Seconds a client should wait before retrying when the database is unreachable or busy. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

export function unavailable(cause: unknown): AppError {
  return new AppError('unavailable', 'The database is unavailable; retry shortly.', {
    retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
    cause,
  });
}

/** No group matches: an unknown id or token, or another tenant's, all answered alike (SPEC §2). */
export function userGroupNotFound(): AppError {
  return new AppError('user_group_not_found', 'No user group matches in this environment.');
}
