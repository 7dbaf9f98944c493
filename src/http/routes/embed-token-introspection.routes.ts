import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import type { EmbedTokenLifecycleService } from '../../domain/embed-tokens/embed-token-introspection.service.js';
import type { ApiTokenService } from '../../domain/api-tokens/api-tokens.service.js';
import { failure } from '../../domain/errors.js';
import type { Environment } from '../../domain/tenancy.js';
import type { RateLimitOption } from '../../rate-limit/rate-limit-setting.js';
import type { RateLimitPolicy } from '../../rate-limit/token-bucket.js';
import { responses } from '../../wire/envelope.js';
import {
  IntrospectionForm,
  IntrospectionResponse,
  RefreshEmbedTokenBody,
  RefreshedEmbedTokenResponse,
} from '../../wire/embed-token-lifecycle.schemas.js';
import { WorkspaceParam } from '../../wire/signing-keys.schemas.js';
import { registerAuthentication } from '../auth.js';
import type { RequestAdmission } from '../rate-limit.js';
import { API_TOKEN_SECURITY, PUBLIC_ROUTE } from '../route-schema.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers cross-origin requests by its own rule (refresh): the /api policy (cors.ts) leaves it alone. */
    ownCors?: boolean;
  }
}

const tags = ['embed tokens'];
const FORM = 'application/x-www-form-urlencoded';
/** An introspection form holds one token (8 KiB at most) and a hint. */
const FORM_LIMIT_BYTES = 32 * 1024;

/** The request's Idempotency-Key, as sent (validated by the operation); undefined without one. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  return Array.isArray(header) ? header.join(', ') : header;
}

/** Form fields by name; a field sent twice becomes a list, which the schema refuses (one meaning per field). */
function parsedForm(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = fields[name];
    fields[name] = seen === undefined ? value : [...[seen].flat(), value];
  }
  return fields;
}

const isForm = (contentType: string | undefined) =>
  contentType !== undefined && contentType.split(';', 1)[0]!.trim().toLowerCase() === FORM;

const ISSUERS: ReadonlyArray<{ environment: Environment; path: string; operation: string }> = [
  { environment: 'Customer', path: '/w/:workspace/introspect', operation: 'introspectEmbedToken' },
  { environment: 'Testing', path: '/w/:workspace/testing/introspect', operation: 'introspectTestingEmbedToken' },
];

/**
 * RFC 7662 introspection of embed tokens, one endpoint per issuer (docs/api.md#introspection-rfc-7662), for servers: an API
 * token of the issuer's own environment authenticates it (the /api authentication hook, on this
 * plugin alone), its body is the one form of the service, and it grants no other origin.
 */
export const embedTokenIntrospectionRoutes: FastifyPluginAsyncTypebox<{
  lifecycle: Pick<EmbedTokenLifecycleService, 'introspect'>;
  apiTokens: Pick<ApiTokenService, 'authenticateApiToken'>;
  admission: RequestAdmission | undefined;
}> = async (app, { lifecycle, apiTokens, admission }) => {
  registerAuthentication(app, apiTokens, admission);
  // This plugin's own parsers: a form, and a clear 415 for anything else (JSON included).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES }, (_request, body, done) =>
    done(null, parsedForm(body as string)),
  );
  app.addContentTypeParser('*', (_request, _payload, done) => done(failure.notFormMediaType(), undefined));
  // No body at all reaches no parser: refused the same way, before validation names a missing token.
  app.addHook('preValidation', (request, _reply, done) => {
    if (!isForm(request.headers['content-type'])) throw failure.notFormMediaType();
    done();
  });

  for (const { environment, path, operation } of ISSUERS)
    app.post(
      path,
      {
        schema: {
          operationId: operation,
          summary: `Introspect an embed token (RFC 7662)${environment === 'Testing' ? ': Testing issuer' : ''}`,
          description:
            'Form-encoded token (token_type_hint accepted and ignored). Answers {"active":false} for any token not currently valid at this issuer (expired, revoked, consumed, forged, another environment or workspace), else active with its claims. A single-use token is consumed; a retry with the same Idempotency-Key by the same API token is answered as the first try was.',
          tags,
          security: API_TOKEN_SECURITY,
          consumes: [FORM],
          params: WorkspaceParam,
          body: IntrospectionForm,
          response: responses(IntrospectionResponse),
        },
      },
      async (request, reply) => {
        const answer = await lifecycle.introspect(
          request.caller,
          { workspace: request.params.workspace, environment },
          request.body.token,
          idempotencyKeyOf(request),
        );
        reply.header('cache-control', 'no-store');
        return answer;
      },
    );
};

/** A session's refreshes: a page refreshes about once per token lifetime; a few tabs may share one session. */
export const SESSION_REFRESH_POLICY: RateLimitPolicy = { perSecond: 0.1, burst: 10 };
const PER_MINUTE = SESSION_REFRESH_POLICY.perSecond * 60;

const PREFLIGHT = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'Content-Type',
  'access-control-max-age': '7200',
};
const EXPOSED = 'Retry-After, X-Request-Id';

/** The origin the token says it is pinned to, unverified: only to let that page read a refusal. */
function claimedOrigin(body: unknown): string | undefined {
  try {
    const token = (body as { token?: unknown } | undefined)?.token;
    const origin = typeof token === 'string' ? (decodeJwt(token).ugs as { origin?: unknown })?.origin : undefined;
    return typeof origin === 'string' ? origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * POST /api/user/embed_token/refresh (docs/api.md#refresh-within-a-session): the token is the credential, so no API token, and a
 * cross-origin rule of its own. The preflight cannot see the token: it grants POST to any origin. The
 * request itself is answered to the token's pinned origin only (the domain refuses any other Origin, and
 * an Origin at all for a token without one); a refusal is readable by the page of the origin the token
 * claims, which learns nothing but the refusal. Rate-limited per session, not per caller.
 */
export const embedTokenRefreshRoutes: FastifyPluginAsyncTypebox<{
  lifecycle: Pick<EmbedTokenLifecycleService, 'refresh'>;
  rateLimit: RateLimitOption;
}> = async (app, { lifecycle, rateLimit }) => {
  const admit = async (sessionId: string) => {
    if (rateLimit === 'off') return;
    const decision = await rateLimit.limiter.take(`embed-session:${sessionId}`, SESSION_REFRESH_POLICY);
    if (!decision.allowed)
      throw failure.refreshRateLimited(PER_MINUTE, SESSION_REFRESH_POLICY.burst, decision.retryAfterSeconds);
  };
  const grantOnRefusal = (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (origin !== undefined && reply.statusCode >= 400 && origin === claimedOrigin(request.body))
      reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSED);
  };

  // Whether a page is granted depends on its Origin: no cache may serve one page's answer to another.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.headers.origin !== undefined) reply.header('vary', 'Origin');
    done();
  });

  app.options(
    '/user/embed_token/refresh',
    { schema: { hide: true, ...PUBLIC_ROUTE }, config: { ownCors: true } },
    async (_request, reply) =>
      reply
        .code(204)
        .headers({ allow: 'POST, OPTIONS', ...PREFLIGHT })
        .send(),
  );

  app.post(
    '/user/embed_token/refresh',
    {
      schema: {
        operationId: 'refreshEmbedToken',
        summary: 'Refresh an embed token within its session',
        description:
          "No API token: the live token of a session (minted with session_seconds) is the credential. Answers a new token for the same group, embed and origin, with the group's values and access rules as they are now and a new exp within the session, while the session lasts and the token was issued within the inactivity interval. From a browser, only the token's own origin may call it. Refusals: 401 invalid_embed_token (expired, revoked, forged), 401 embed_session_ended, 403 origin_not_allowed, 429 rate_limited (per session).",
        tags,
        ...PUBLIC_ROUTE,
        body: RefreshEmbedTokenBody,
        response: responses(RefreshedEmbedTokenResponse),
      },
      config: { ownCors: true },
      onSend: (request, reply, payload, done) => {
        grantOnRefusal(request, reply);
        done(null, payload);
      },
    },
    async (request, reply) => {
      const origin = request.headers.origin;
      const refreshed = await lifecycle.refresh(request.body.token, origin, admit);
      if (origin !== undefined) {
        // The domain let it through: the Origin is the token's own.
        reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSED);
      }
      return {
        success: 1 as const,
        embed_token: refreshed.embedToken,
        expires_at: refreshed.expiresAt,
        session_ends_at: refreshed.sessionEndsAt,
      };
    },
  );
};
