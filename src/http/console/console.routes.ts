import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleSession, ConsoleSessionService } from '../../domain/console-sessions/console-sessions.service.js';
import { echoable } from '../../domain/echoed-text.rules.js';
import { NoQuery } from '../../wire/common.schemas.js';
import {
  ConsoleSessionResponse,
  CurrentConsoleSessionResponse,
  SignedOutResponse,
  SignInBody,
} from '../../wire/console-sessions.schemas.js';
import { responses } from '../../wire/envelope.js';
import { requestFailure } from '../../wire/request-errors.js';
import type { RequestAdmission } from '../rate-limit.js';
import { PUBLIC_ROUTE } from '../route-schema.js';
import type { ConsoleAsset } from './console-assets.js';
import { clearSessionCookie, consoleSessionOf, setSessionCookie } from './session-cookie.js';

/**
 * Every response under /console: the page may load scripts, styles, images and fonts from this origin
 * only, make requests to it only, and be framed by no one; no inline script or style, no eval.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/**
 * A console URL whose path does not decode (`/console/groups/%E0%A4%A`) would be refused by the
 * HTTP router before any route; it gets the console's page instead, whose own router then shows its
 * not-found view for the address the browser kept. Every other URL is left as it is.
 */
export function consoleUrlRewrite(url: string): string {
  if (!url.startsWith('/console/')) return url;
  const query = url.indexOf('?');
  try {
    decodeURIComponent(query === -1 ? url : url.slice(0, query));
    return url;
  } catch {
    return '/console/';
  }
}

// The session endpoints are the console's own, not the API's: they stay out of /openapi.json.
const sessionSchema = <B extends object>(parts: B) => ({ hide: true, ...PUBLIC_ROUTE, querystring: NoQuery, ...parts });

const sessionBody = (session: ConsoleSession) => ({
  success: 1 as const,
  session: {
    api_token: {
      id: session.caller.actor.apiTokenId,
      name: session.caller.actor.name,
      scope: session.caller.scope,
      environment: session.caller.tenant.environment,
    },
    csrf_token: session.csrfToken,
    idle_expires_at: session.record.expiresAt,
    expires_at: session.absoluteExpiresAt,
  },
});

export interface ConsoleRouteOptions {
  consoleSessions: ConsoleSessionService;
  /** The built front end by path below /console/ (empty when not built). */
  assets: Map<string, ConsoleAsset>;
  /** The rate limit: a session's requests count against its API token's bucket, as the token's own would. */
  admission: RequestAdmission | undefined;
}

/** The admin console (docs/security.md#admin-console-sessions): its pages and assets at /console, and its session at /console/session. */
export const consoleRoutes: FastifyPluginAsyncTypebox<ConsoleRouteOptions> = async (
  app,
  { consoleSessions, assets, admission },
) => {
  app.addHook('onRequest', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
    // Sessions and pages alike: no shared cache keeps a response that belongs to one operator.
    reply.header('cache-control', 'no-store');
  });

  const admit = async (reply: FastifyReply, session: ConsoleSession) => {
    if (admission) await admission(reply, session.caller);
  };
  const requireSession = async (request: FastifyRequest, requireCsrf: boolean) => {
    const session = await consoleSessionOf(request, consoleSessions, { requireCsrf });
    if (!session) throw requestFailure.noConsoleSession();
    return session;
  };

  app.post(
    '/console/session',
    { schema: sessionSchema({ body: SignInBody, response: responses(ConsoleSessionResponse) }) },
    async (request, reply) => {
      const session = await consoleSessions.signIn(request.body.api_token, request.id);
      await admit(reply, session);
      setSessionCookie(request, reply, session.secret);
      return sessionBody(session);
    },
  );

  // A page that sends no session cookie has not signed in: that is the sign-in page's normal state, so
  // it is an answer (null) rather than a 401 the browser would log. A cookie that names no live
  // session is still refused.
  app.get(
    '/console/session',
    { schema: sessionSchema({ response: responses(CurrentConsoleSessionResponse) }) },
    async (request, reply) => {
      const session = await consoleSessionOf(request, consoleSessions, { requireCsrf: false });
      if (!session) return { success: 1 as const, session: null };
      await admit(reply, session);
      return sessionBody(session);
    },
  );

  app.delete(
    '/console/session',
    { schema: sessionSchema({ response: responses(SignedOutResponse) }) },
    async (request, reply) => {
      const session = await requireSession(request, true);
      await admit(reply, session);
      await consoleSessions.signOut(session);
      clearSessionCookie(request, reply);
      return { success: 1 as const };
    },
  );

  const send = (reply: FastifyReply, asset: ConsoleAsset) => {
    if (asset.immutable) reply.header('cache-control', 'public, max-age=31536000, immutable');
    return reply.type(asset.contentType).send(asset.body);
  };
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.params as { '*'?: string })['*'] ?? '';
    const asset = assets.get(path);
    if (asset) return send(reply, asset);
    const index = assets.get('index.html');
    if (!index) throw requestFailure.consoleNotBuilt();
    // Built files are served as they are; any other path is one of the console's own pages, which the
    // page's script routes (a missing script or style is a 404, never the page in its place).
    if (path.startsWith('assets/') || path.includes('.')) throw requestFailure.nothingAt(echoable(`/console/${path}`));
    return send(reply, index);
  };
  app.get('/console', { schema: { hide: true } }, page);
  app.get('/console/*', { schema: { hide: true } }, page);
};
