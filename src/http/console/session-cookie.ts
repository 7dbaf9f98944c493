import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiTokenCaller } from '../../domain/api-tokens/api-token-admission.js';
import type { ConsoleSession, ConsoleSessionService } from '../../domain/console-sessions/console-sessions.service.js';
import { CONSOLE_SESSION_ABSOLUTE_MS } from '../../domain/console-sessions/console-sessions.rules.js';
import { requestFailure } from '../../wire/request-errors.js';

/*
 * The admin console's session cookie and CSRF header (docs/security.md "Console sessions").
 * The cookie is HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it) and
 * Secure whenever the request came over HTTPS. Path=/ because the console calls /api with it.
 * Over HTTPS it is named with the `__Host-` prefix, which a browser accepts only from this very
 * host, Secure, with Path=/ and no Domain: a sibling subdomain cannot plant one (cookie tossing).
 */
export const SESSION_COOKIE = 'ugs_console';
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
export const CSRF_HEADER = 'X-CSRF-Token';

/** The cookie's name for this request: only the `__Host-` one is read or set over HTTPS. */
const cookieNameOf = (request: FastifyRequest) => (isHttps(request) ? SECURE_SESSION_COOKIE : SESSION_COOKIE);

/** The session secret of the request's cookie, undefined when it sends none; two of them are refused. */
function sessionSecretOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  const name = cookieNameOf(request);
  const values = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${name}=`))
    .map((pair) => pair.slice(name.length + 1));
  // Two cookies of one name (one set for a parent domain, say) are two meanings: neither is taken.
  if (values.length > 1) throw requestFailure.twoSessionCookies();
  return values[0];
}

/**
 * Over HTTPS, directly or through a proxy that says so. X-Forwarded-Proto is taken from anyone: it can
 * only add the Secure attribute, which makes a browser on plain HTTP drop the cookie, never weaken it.
 */
function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https';
}

function cookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  return [
    `${cookieNameOf(request)}=${value}`,
    'Path=/',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(isHttps(request) ? ['Secure'] : []),
  ].join('; ');
}

/** Sets the cookie of a new session; the browser drops it when the session's absolute lifetime is over. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, secret: string): void {
  reply.header('set-cookie', cookie(request, secret, CONSOLE_SESSION_ABSOLUTE_MS / 1000));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookie(request, '', 0));
}

/**
 * The live session the request's cookie names, or undefined when it sends no cookie. A state-changing
 * request must carry the session's CSRF token in X-CSRF-Token, which another site's page cannot read
 * or send; the /api routes require it on every request, reads included (`GET /api/user` creates).
 */
export async function consoleSessionOf(
  request: FastifyRequest,
  sessions: ConsoleSessionService,
  { requireCsrf }: { requireCsrf: boolean },
): Promise<(ConsoleSession & { secret: string }) | undefined> {
  const secret = sessionSecretOf(request);
  if (secret === undefined) return undefined;
  const session = await sessions.authenticate(secret, request.id);
  if (requireCsrf) {
    const presented = request.headers[CSRF_HEADER.toLowerCase()];
    if (!sessions.isCsrfTokenOf(secret, typeof presented === 'string' ? presented : undefined))
      throw requestFailure.csrfToken(CSRF_HEADER);
  }
  return { ...session, secret };
}

/** For the /api authentication hook: the caller a console session speaks for (its API token), CSRF token required. */
export function consoleSessionCaller(sessions: ConsoleSessionService) {
  return async (request: FastifyRequest): Promise<ApiTokenCaller | undefined> =>
    (await consoleSessionOf(request, sessions, { requireCsrf: true }))?.caller;
}
