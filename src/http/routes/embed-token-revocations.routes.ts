import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { EmbedTokenRevocationService } from '../../domain/embed-tokens/embed-token-revocations.service.js';
import type { Environment } from '../../domain/tenancy.js';
import { failure } from '../../domain/errors.js';
import { responses } from '../../wire/envelope.js';
import { presentUserGroup } from '../../wire/user-group.presenter.js';
import { WorkspaceParam } from '../../wire/signing-keys.schemas.js';
import {
  RevocationDocument,
  RevokeEmbedTokensBody,
  RevokedEmbedTokensResponse,
} from '../../wire/embed-token-revocations.schemas.js';
import { apiRouteSchema, PUBLIC_ROUTE } from '../route-schema.js';
import { answerPublicPreflight, grantAnyOrigin } from '../cors.js';

const ISSUERS: ReadonlyArray<{ environment: Environment; path: string; operation: string }> = [
  { environment: 'Customer', path: '/w/:workspace', operation: '' },
  { environment: 'Testing', path: '/w/:workspace/testing', operation: 'Testing' },
];

/**
 * Each issuer's revocation document beside its JWKS (docs/api.md, "Revoking embed tokens"): public,
 * any origin, cacheable for the staleness bound, with an ETag so that a verifier's refresh of an
 * unchanged document is a 304 without a body.
 */
export const revocationDocumentRoutes: FastifyPluginAsyncTypebox<{
  embedTokenRevocations: Pick<EmbedTokenRevocationService, 'published' | 'notModified'>;
}> = async (app, { embedTokenRevocations }) => {
  app.addHook('onRequest', grantAnyOrigin);
  for (const { environment, path, operation } of ISSUERS) {
    app.get(
      `${path}/.well-known/revocations.json`,
      {
        exposeHeadRoute: true,
        schema: {
          operationId: `get${operation}EmbedTokenRevocations`,
          summary: `The embed tokens revoked by the ${environment} issuer and not yet expired`,
          tags: ['embed tokens'],
          ...PUBLIC_ROUTE,
          params: WorkspaceParam,
          response: responses(RevocationDocument),
        },
      },
      async (request, reply) => {
        const { etag, body, maxAgeS } = await embedTokenRevocations.published(request.params.workspace, environment);
        reply.headers({
          etag,
          'cache-control': `public, max-age=${maxAgeS}`,
          // A browser verifier reads the ETag to send it back as If-None-Match.
          'access-control-expose-headers': 'ETag',
        });
        const presented = request.headers['if-none-match'];
        if (presented !== undefined && presented.split(/\s*,\s*/).includes(etag)) {
          embedTokenRevocations.notModified();
          return (reply as FastifyReply).code(304).send();
        }
        // The document is JSON text already (rendered once per change of its entries).
        return (reply as FastifyReply).type('application/json; charset=utf-8').send(body);
      },
    );
    app.options(
      `${path}/.well-known/revocations.json`,
      { schema: { hide: true, ...PUBLIC_ROUTE } },
      answerPublicPreflight,
    );
  }
};

/** POST /api/user/embed_token/revoke: one embed token, or every current one of a group. */
export const embedTokenRevocationRoutes: FastifyPluginAsyncTypebox<{
  embedTokenRevocations: Pick<EmbedTokenRevocationService, 'revokeToken' | 'revokeGroup'>;
}> = async (app, { embedTokenRevocations }) => {
  app.post(
    '/user/embed_token/revoke',
    {
      schema: apiRouteSchema(
        'embed tokens',
        'Revoke an embed token, or every current one of a group',
        RevokedEmbedTokensResponse,
        {
          operationId: 'revokeEmbedTokens',
          description:
            'Write scope. With embed_token: that token (its signature, issuer and lifetime must hold under this environment), until its exp. With user_group_id: every embed token minted for the group until now. Online verify refuses them at once; offline verifiers see them in /w/<workspace>/.well-known/revocations.json within their staleness bound. Audited, and announced as embed_token.revoked.',
          body: RevokeEmbedTokensBody,
        },
      ),
    },
    async (request) => {
      const { embed_token: token, user_group_id: userGroupId } = request.body;
      if ((token === undefined) === (userGroupId === undefined)) throw failure.revokeWhat(token !== undefined);
      const revoked =
        token !== undefined
          ? await embedTokenRevocations.revokeToken(request.caller, token)
          : await embedTokenRevocations.revokeGroup(request.caller, userGroupId!);
      return {
        success: 1 as const,
        user_group: presentUserGroup(revoked.userGroup),
        revoked: { scope: revoked.jti === null ? ('group' as const) : ('token' as const), jti: revoked.jti },
      };
    },
  );
};
