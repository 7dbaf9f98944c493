import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleSession, ConsoleSessionService } from '../../domain/console-sessions/console-sessions.service.js';
import type { RequestCaller } from '../../domain/console-sessions/oidc-session.records.js';
import {
  isPersonSessionSecretShaped,
  OIDC_FLOW_MS,
  type OidcSignInService,
  type PersonConsoleSession,
} from '../../domain/console-sessions/oidc-sign-in.service.js';
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

/**
 * A sign-in through the identity provider (src/http/console/oidc.routes.ts) binds its state to the
 * browser that started it with this cookie. SameSite=Lax, not Strict: it must travel with the
 * provider's redirect back, a top-level navigation from another site, on which a Strict cookie
 * (the session's) is not sent.
 */
export const FLOW_COOKIE = 'ugs_oidc_flow';

/** The cookie's name for this request: only the `__Host-` one is read or set over HTTPS. */
const cookieNameOf = (request: FastifyRequest, base = SESSION_COOKIE) => (isHttps(request) ? `__Host-${base}` : base);

/** The session secret of the request's cookie, undefined when it sends none; two of them are refused. */
function sessionSecretOf(request: FastifyRequest, base = SESSION_COOKIE): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  const name = cookieNameOf(request, base);
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

function cookie(
  request: FastifyRequest,
  value: string,
  maxAgeSeconds: number,
  { base, sameSite }: { base: string; sameSite: 'Strict' | 'Lax' } = { base: SESSION_COOKIE, sameSite: 'Strict' },
): string {
  return [
    `${cookieNameOf(request, base)}=${value}`,
    'Path=/',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    `SameSite=${sameSite}`,
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

const FLOW = { base: FLOW_COOKIE, sameSite: 'Lax' } as const;

/** The flow cookie of a sign-in just started; it lasts as long as the sign-in may take. */
export function setFlowCookie(request: FastifyRequest, reply: FastifyReply, secret: string): void {
  reply.header('set-cookie', cookie(request, secret, OIDC_FLOW_MS / 1000, FLOW));
}

export function clearFlowCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookie(request, '', 0, FLOW));
}

/** The flow cookie's secret, undefined when the browser sent none (or two). */
export function flowSecretOf(request: FastifyRequest): string | undefined {
  try {
    return sessionSecretOf(request, FLOW_COOKIE);
  } catch {
    return undefined;
  }
}

/** A console session of either kind: an admin API token's, or a person's. */
export type AnyConsoleSession = ConsoleSession | PersonConsoleSession;

export const isPersonSession = (session: AnyConsoleSession): session is PersonConsoleSession =>
  session.caller.actor.type === 'person';

/**
 * The live session the request's cookie names, or undefined when it sends no cookie. A state-changing
 * request must carry the session's CSRF token in X-CSRF-Token, which another site's page cannot read
 * or send; the /api routes require it on every request, reads included (`GET /api/user` creates).
 */
export async function consoleSessionOf(
  request: FastifyRequest,
  sessions: ConsoleSessionService,
  { requireCsrf }: { requireCsrf: boolean },
  people?: OidcSignInService,
): Promise<(AnyConsoleSession & { secret: string }) | undefined> {
  const secret = sessionSecretOf(request);
  if (secret === undefined) return undefined;
  const session: AnyConsoleSession =
    people && isPersonSessionSecretShaped(secret)
      ? await people.authenticate(secret, request.id)
      : await sessions.authenticate(secret, request.id);
  if (requireCsrf) {
    const presented = request.headers[CSRF_HEADER.toLowerCase()];
    if (!sessions.isCsrfTokenOf(secret, typeof presented === 'string' ? presented : undefined))
      throw requestFailure.csrfToken(CSRF_HEADER);
  }
  return { ...session, secret };
}

/** For the /api authentication hook: the caller a console session speaks for (its API token or person), CSRF token required. */
export function consoleSessionCaller(sessions: ConsoleSessionService, people?: OidcSignInService) {
  return async (request: FastifyRequest): Promise<RequestCaller | undefined> =>
    (await consoleSessionOf(request, sessions, { requireCsrf: true }, people))?.caller;
}
