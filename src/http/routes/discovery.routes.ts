import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { EmbedTokenService } from '../../domain/embed-tokens.service.js';
import type { SigningKeyService } from '../../domain/signing-keys.service.js';
import type { WorkspaceService } from '../../domain/workspaces.service.js';
import { responses } from '../../wire/envelope.js';
import { PUBLIC_ROUTE } from '../route-schema.js';
import { JwkSet, OpenIdConfiguration, WorkspaceParam } from '../../wire/signing-keys.schemas.js';

/** What verifiers may cache: keys change only by rotation, and a retired key stays published for a day. */
const CACHE_CONTROL = 'public, max-age=300';
const tags = ['embed tokens'];

/**
 * Public, unauthenticated discovery of each workspace's embed-token keys (SPEC §10): the JWKS, and
 * the OpenID-style configuration that standard JWT libraries read to find it.
 */
export const discoveryRoutes: FastifyPluginAsyncTypebox<{
  workspaces: Pick<WorkspaceService, 'requireWorkspace'>;
  signingKeys: Pick<SigningKeyService, 'published'>;
  embedTokens: Pick<EmbedTokenService, 'issuerOf'>;
}> = async (app, { workspaces, signingKeys, embedTokens }) => {
  app.get(
    '/w/:workspace/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getJwks',
        summary: "The workspace's public signing keys (JWKS)",
        tags,
        ...PUBLIC_ROUTE,
        params: WorkspaceParam,
        response: responses(JwkSet),
      },
    },
    async (request, reply) => {
      const workspace = await workspaces.requireWorkspace(request.params.workspace);
      const keys = (await signingKeys.published(workspace.id)).map((key) => key.publicJwk);
      reply.header('cache-control', CACHE_CONTROL);
      return { keys } as never;
    },
  );

  app.get(
    '/w/:workspace/.well-known/openid-configuration',
    {
      schema: {
        operationId: 'getOpenIdConfiguration',
        summary: "Where the workspace's embed tokens come from and their keys are",
        tags,
        ...PUBLIC_ROUTE,
        params: WorkspaceParam,
        response: responses(OpenIdConfiguration),
      },
    },
    async (request, reply) => {
      const workspace = await workspaces.requireWorkspace(request.params.workspace);
      const issuer = embedTokens.issuerOf(workspace.name);
      reply.header('cache-control', CACHE_CONTROL);
      return {
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        id_token_signing_alg_values_supported: ['ES256' as const],
      };
    },
  );
};
