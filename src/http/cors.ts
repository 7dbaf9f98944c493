import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/*
 * Cross-origin access (docs/api.md, "Cross-origin"). Two policies:
 * - the public key documents (/w/<workspace>/.well-known/*) answer any origin, as public JWKS endpoints
 *   do: `Access-Control-Allow-Origin: *`, never credentials; the answer is the same whatever the origin,
 *   so it needs no `Vary`;
 * - /api answers only the origins an operator listed (--cors-origins), never with credentials: the
 *   console's session cookie stays same-origin, so a listed origin's page calls /api with an API token.
 * A browser's preflight may be cached this long (Chromium caps it at 2 hours, Firefox at 24).
 */
const PREFLIGHT_MAX_AGE_S = '7200';

/** What the public key documents answer to every request, preflight or not. */
export const PUBLIC_DOCUMENT_METHODS = 'GET, HEAD, OPTIONS';

/** Sets the grant every response of a public document carries (its routes' onRequest hook). */
export function grantAnyOrigin(_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  reply.header('access-control-allow-origin', '*');
  done();
}

/**
 * OPTIONS on a public document: 204 with what a preflight asks for; the same answer, with `Allow`,
 * to a plain OPTIONS. No credentials are involved, so `*` covers any request header a verifier sends.
 */
export function answerPublicPreflight(_request: FastifyRequest, reply: FastifyReply): void {
  reply
    .code(204)
    .headers({
      allow: PUBLIC_DOCUMENT_METHODS,
      'access-control-allow-methods': PUBLIC_DOCUMENT_METHODS,
      'access-control-allow-headers': '*',
      'access-control-max-age': PREFLIGHT_MAX_AGE_S,
    })
    .send();
}

/** The API's methods and the request headers its routes read (auth.ts, idempotency.ts, the JSON bodies). */
const API_PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
  'access-control-allow-headers': 'Authorization, Explo-Authorization, Content-Type, Idempotency-Key',
  'access-control-max-age': PREFLIGHT_MAX_AGE_S,
};

/** Response headers a browser client reads besides the safelisted ones (rate limits, retries, support). */
const API_EXPOSED_HEADERS =
  'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id, Idempotent-Replayed, WWW-Authenticate, Allow';

/**
 * Grants the listed origins (exact strings, as parseCorsOrigins checked them) access to /api. Registers
 * nothing when none is listed (the default), so no request pays for a policy that grants nothing; with a
 * list, a request without `Origin` (every server-to-server call) pays one header lookup.
 *
 * A request from a listed origin gets `Access-Control-Allow-Origin: <its origin>`, and a preflight from
 * it (OPTIONS with Access-Control-Request-Method) is answered 204 here, before routing and
 * authentication: a preflight carries no credentials. Any other origin gets no grant and its request
 * goes on as any other, so the browser withholds the answer and sends no preflighted request at all.
 * `Vary: Origin` goes on every /api response to a request with an Origin: whether one is granted depends
 * on it. A request without one needs no Vary: /api responses are `no-store`, kept by no cache.
 * `Access-Control-Allow-Credentials` is never sent: a browser then neither sends the session cookie with
 * a preflighted request nor shows a credentialed answer to the page.
 */
export function registerApiCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    // A route with a rule of its own (the embed-token refresh) is left to it.
    if (origin === undefined || !request.url.startsWith('/api/') || request.routeOptions.config.ownCors === true)
      return done();
    reply.header('vary', 'Origin');
    if (!allowed.has(origin)) return done();
    reply.header('access-control-allow-origin', origin);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      reply.code(204).headers(API_PREFLIGHT_HEADERS).send();
      return;
    }
    reply.header('access-control-expose-headers', API_EXPOSED_HEADERS);
    done();
  });
}
