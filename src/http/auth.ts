import { requestFailure } from '../wire/request-errors.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestAdmission } from './rate-limit.js';
import { admissionDeferred, type ApiTokenCaller } from '../domain/api-tokens/api-token-admission.js';
import type { ApiTokenService } from '../domain/api-tokens/api-tokens.service.js';
import { isPersonCaller, type RequestCaller } from '../domain/console-sessions/oidc-session.records.js';
import { admitPerson } from './console/person-access.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every /api route, before the body is read. */
    caller: RequestCaller;
  }
  interface FastifyContextConfig {
    /**
     * The route's operation confirms the caller's API token in its first statement (the hot reads):
     * a token this process has seen live is not read again; the admitting group reads (or, for an
     * operation that signs or checks a signature first, `admittedOnEntry`) admit the request before
     * any work it counts, signs or writes (docs/architecture.md, "Token admission"); a refusal is
     * admitted by the error handler.
     */
    confirmsApiToken?: boolean;
  }
}

// "Token" is the documented scheme; "Bearer" is accepted because many HTTP clients only speak it.
const AUTHORIZATION = /^(?:token|bearer) +(\S+) *$/i;

/** The hosted product's name for the same header (docs/api.md#migrating-from-the-hosted-product): code written for it works unchanged. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'explo-authorization']);

/** How many credential headers the client sent (rawHeaders alternates names and values, as sent). */
function credentialHeaderCount(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2)
    if (CREDENTIAL_HEADERS.has(rawHeaders[index]!.toLowerCase())) count += 1;
  return count;
}

/**
 * Authenticates every /api request before its body is read, then admits it (its rate limit) — or,
 * on a route that confirms the token in its statement, leaves admission to that confirmation.
 */
function createAuthenticationHook(
  apiTokens: Pick<ApiTokenService, 'authenticateApiToken'>,
  admission: RequestAdmission | undefined,
  sessions: SessionCaller | undefined,
) {
  const admit = async (reply: FastifyReply, caller: RequestCaller) => {
    if (admission) await admission(reply, caller);
  };
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Node keeps the first of two Authorization headers; a proxy in front may have read the other.
    // Two meanings are none, whichever names they use: refused like a missing one (docs/api.md#wire-conventions).
    if (credentialHeaderCount(request.raw.rawHeaders) > 1) {
      throw requestFailure.twoCredentials();
    }
    const found = request.headers.authorization ?? request.headers['explo-authorization'];
    const header = Array.isArray(found) ? undefined : found;
    const secret = header === undefined ? undefined : AUTHORIZATION.exec(header)?.[1];
    if (secret === undefined) {
      // Without any credential header, the admin console's session cookie may stand for its API token.
      const sessionCaller = found === undefined ? await sessions?.(request) : undefined;
      if (!sessionCaller) throw requestFailure.noCredential();
      request.caller = isPersonCaller(sessionCaller) ? admitPerson(request, sessionCaller) : sessionCaller;
      await admit(reply, sessionCaller);
      return;
    }
    const deferred = request.routeOptions.config.confirmsApiToken
      ? { admit: (caller: ApiTokenCaller) => admit(reply, caller) }
      : undefined;
    request.caller = await apiTokens.authenticateApiToken(secret, request.id, deferred);
    if (!admissionDeferred(request.caller)) await admit(reply, request.caller);
  };
}

/** The caller an admin console session cookie speaks for (src/http/console/session-cookie.ts); undefined without one. */
export type SessionCaller = (request: FastifyRequest) => Promise<RequestCaller | undefined>;

/** Authentication, and admission on arrival where the route does not leave it to its operation, for every route registered on `api` after it. */
export function registerAuthentication(
  api: FastifyInstance,
  apiTokens: Pick<ApiTokenService, 'authenticateApiToken'>,
  admission: RequestAdmission | undefined,
  sessions?: SessionCaller,
): void {
  api.addHook('onRequest', createAuthenticationHook(apiTokens, admission, sessions));
}
