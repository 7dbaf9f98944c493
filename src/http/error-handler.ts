import { requestFailure } from '../wire/request-errors.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError, type AppError } from '../domain/errors.js';
import { admissionFailureBeforeRefusal } from '../domain/api-tokens/api-token-admission.js';
import { validationError } from '../wire/validation-errors.js';

/** The failure envelope of an error. */
export function errorBody(error: AppError, requestId: string) {
  return {
    success: 0 as const,
    error: {
      code: error.code,
      message: error.message,
      ...(error.field ? { field: error.field } : {}),
      ...(error.at ?? {}),
      request_id: requestId,
    },
  };
}

/** The codes whose 401 challenges the caller to authenticate with the Token scheme (RFC 9110 §11.6.1). */
const CHALLENGED: ReadonlySet<string> = new Set(['unauthenticated', 'invalid_api_token']);

/** The headers a refusal carries besides its envelope: the Token challenge, and when to retry. */
function headersOf(error: AppError): Record<string, string> {
  return {
    ...(CHALLENGED.has(error.code) ? { 'WWW-Authenticate': 'Token' } : {}),
    ...(error.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(error.retryAfterSeconds) }),
  };
}

/**
 * The one place a thrown error becomes the failure envelope of a response, with its headers; `extra`
 * carries what only the HTTP layer knows (the Allow of a 405).
 */
export function sendError(
  error: AppError,
  request: FastifyRequest,
  reply: FastifyReply,
  extra: Record<string, string> = {},
) {
  return reply
    .status(error.status)
    .headers({ ...headersOf(error), ...extra })
    .send(errorBody(error, request.id));
}

const FASTIFY_CODES: Record<string, (request: FastifyRequest) => AppError> = {
  // A route may have its own limit (the sync's, docs/api.md#sync-tenants-as-code).
  FST_ERR_CTP_BODY_TOO_LARGE: (request) => requestFailure.bodyTooLarge(request.routeOptions.bodyLimit),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: requestFailure.notJsonMediaType,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: requestFailure.contentLengthMismatch,
};

function toAppError(error: FastifyError, request: FastifyRequest): AppError {
  if (isAppError(error)) return error;
  if (error.validation) {
    const context = (error.validationContext ?? 'body') as 'body' | 'querystring' | 'params' | 'headers';
    return validationError(error.validation, context, request.routeOptions.schema?.[context]);
  }
  const known = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (known) return known(request);
  // Any other client error Fastify detects (a malformed URL, say) is still the client's.
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return requestFailure.malformed();
  }
  return requestFailure.internal(error);
}

/**
 * A request whose remembered API token no statement confirmed (src/domain/api-tokens/api-token-admission.ts) is
 * admitted now, before its refusal is sent: a token revoked meanwhile answers 401, an empty bucket 429,
 * whatever else went wrong.
 */
async function refusalOnceAdmitted(request: FastifyRequest, refusal: AppError): Promise<AppError> {
  const failed = await admissionFailureBeforeRefusal(request.caller as FastifyRequest['caller'] | undefined);
  return failed === undefined ? refusal : toAppError(failed as FastifyError, request);
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const appError = await refusalOnceAdmitted(request, toAppError(error, request));
    if (appError.status >= 500) {
      request.log.error({ err: appError.cause ?? error, code: appError.code }, 'request failed');
    } else {
      request.log.info({ code: appError.code, field: appError.field }, 'request rejected');
    }
    return sendError(appError, request, reply);
  });
}
