import { requestFailure } from '../wire/request-errors.js';
import type { FastifyRequest } from 'fastify';
import type { ApiTokenCaller, ApiTokenService } from '../domain/api-tokens.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every /api route, before the body is read. */
    caller: ApiTokenCaller;
  }
}

// "Token" is the documented scheme; "Bearer" is accepted because many HTTP clients only speak it.
const AUTHORIZATION = /^(?:token|bearer) +(\S+) *$/i;

/** The hosted product's name for the same header (SPEC §12): code written for it works unchanged. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'explo-authorization']);

/** How many credential headers the client sent (rawHeaders alternates names and values, as sent). */
function credentialHeaderCount(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) if (CREDENTIAL_HEADERS.has(rawHeaders[index]!.toLowerCase())) count += 1;
  return count;
}

export function createAuthenticationHook(apiTokens: Pick<ApiTokenService, 'authenticateApiToken'>) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    // Node keeps the first of two Authorization headers; a proxy in front may have read the other.
    // Two meanings are none, whichever names they use: refused like a missing one (SPEC §3, §12).
    if (credentialHeaderCount(request.raw.rawHeaders) > 1) {
      throw requestFailure.twoCredentials();
    }
    const found = request.headers.authorization ?? request.headers['explo-authorization'];
    const header = Array.isArray(found) ? undefined : found;
    const secret = header === undefined ? undefined : AUTHORIZATION.exec(header)?.[1];
    if (secret === undefined) {
      throw requestFailure.noCredential();
    }
    request.caller = await apiTokens.authenticateApiToken(secret, request.id);
  };
}
