import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { ApiTokenCaller, ApiTokenService } from '../domain/api-tokens.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every /api route, before the body is read. */
    caller: ApiTokenCaller;
  }
}

// "Token" is the documented scheme; "Bearer" is accepted because many HTTP clients only speak it.
const AUTHORIZATION = /^(?:token|bearer) +(\S+) *$/i;

export function createAuthenticationHook(apiTokens: Pick<ApiTokenService, 'authenticateApiToken'>) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    const secret = header === undefined ? undefined : AUTHORIZATION.exec(header)?.[1];
    if (secret === undefined) {
      throw new AppError('unauthenticated', 'Send "Authorization: Token <API_TOKEN>".', { headers: { 'WWW-Authenticate': 'Token' } });
    }
    request.caller = await apiTokens.authenticateApiToken(secret, request.id);
  };
}
