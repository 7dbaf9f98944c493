import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { OidcRefusal } from '../../domain/console-sessions/oidc-client.js';
import type { OidcSignInService } from '../../domain/console-sessions/oidc-sign-in.service.js';
import { clearFlowCookie, flowSecretOf, setFlowCookie, setSessionCookie } from './session-cookie.js';

/*
 * Console sign-in through the identity provider (docs/deployment.md, "Console sign-in through an
 * identity provider"): GET /console/oidc/login sends the browser to the provider, which sends it back
 * to GET /console/oidc/callback. The redirect URI is built from the configured public URL, never from
 * the request's Host header, which the client chooses. A refusal is a page that says why.
 */

const QueryText = Type.Optional(Type.String({ maxLength: 4096 }));
const LoginQuery = Type.Object({ return_to: QueryText }, { additionalProperties: false });
// The provider may add parameters of its own (`iss`, `session_state`, `scope`…): they are ignored.
const CallbackQuery = Type.Object(
  { state: QueryText, code: QueryText, error: QueryText, error_description: QueryText },
  { additionalProperties: true },
);

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

const TITLES: Record<OidcRefusal['reason'], string> = {
  state: 'This sign-in cannot be finished',
  provider: 'The identity provider did not sign you in',
  id_token: 'The identity provider’s answer was refused',
  no_access: 'You have no access to this console',
};
const STATUS: Record<OidcRefusal['reason'], number> = { state: 400, provider: 502, id_token: 400, no_access: 403 };

/** The refusal page: plain HTML (the console's CSP allows no inline style), readable by a screen reader. */
function refusalPage(reply: FastifyReply, refusal: OidcRefusal) {
  const title = TITLES[refusal.reason];
  const body = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · User Group Service console</title></head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p id="reason">${escapeHtml(refusal.message)}</p>
${refusal.reason === 'no_access' ? '<p>Ask whoever administers this service to map one of your groups to console access, then sign in again.</p>' : ''}
<p><a href="/console/">Back to the console’s sign-in page</a></p>
</main>
</body>
</html>
`;
  return reply.code(STATUS[refusal.reason]).type('text/html; charset=utf-8').send(body);
}

export interface OidcRouteOptions {
  people: OidcSignInService;
  /** The service's public URL (--public-url): the redirect URI is built from it. */
  publicUrl: () => string;
}

export const oidcRoutes: FastifyPluginAsyncTypebox<OidcRouteOptions> = async (app, { people, publicUrl }) => {
  const redirectUri = () => `${publicUrl()}/console/oidc/callback`;
  const refused = (reply: FastifyReply, error: unknown) => {
    if (error instanceof OidcRefusal) return refusalPage(reply, error);
    throw error;
  };

  app.get('/console/oidc/login', { schema: { hide: true, querystring: LoginQuery } }, async (request, reply) => {
    try {
      const { url, flowSecret } = await people.start(request.query.return_to, redirectUri());
      setFlowCookie(request, reply, flowSecret);
      return reply.redirect(url, 302);
    } catch (error) {
      return refused(reply, error);
    }
  });

  app.get('/console/oidc/callback', { schema: { hide: true, querystring: CallbackQuery } }, async (request, reply) => {
    const query = request.query as { state?: string; code?: string; error?: string };
    // The flow cookie has done its work whatever happens next: it goes.
    clearFlowCookie(request, reply);
    try {
      const { secret, returnTo } = await people.finish({
        state: query.state,
        code: query.code,
        error: query.error,
        flowSecret: flowSecretOf(request),
        redirectUri: redirectUri(),
        requestId: request.id,
      });
      setSessionCookie(request, reply, secret);
      return reply.redirect(returnTo, 303);
    } catch (error) {
      return refused(reply, error);
    }
  });
};
