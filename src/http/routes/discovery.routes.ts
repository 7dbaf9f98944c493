import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { EmbedTokenService } from '../../domain/embed-tokens/embed-tokens.service.js';
import type { Environment } from '../../domain/tenancy.js';
import { responses } from '../../wire/envelope.js';
import { PUBLIC_ROUTE } from '../route-schema.js';
import { answerPublicPreflight, grantAnyOrigin } from '../cors.js';
import { JwkSet, OpenIdConfiguration, WorkspaceParam } from '../../wire/signing-keys.schemas.js';

/** What verifiers may cache: keys change only by rotation, and a retired key stays published for a day. */
const CACHE_CONTROL = 'public, max-age=300';
const tags = ['embed tokens'];

/** Where each environment's issuer lives under the public URL (as issuerPath in signing-keys.rules.ts writes it). */
const ISSUERS: ReadonlyArray<{ environment: Environment; path: string; whose: string; operation: string }> = [
  { environment: 'Customer', path: '/w/:workspace', whose: "the workspace's", operation: '' },
  {
    environment: 'Testing',
    path: '/w/:workspace/testing',
    whose: "the workspace's Testing environment's",
    operation: 'Testing',
  },
];
const capitalised = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}`;

/**
 * Public, unauthenticated discovery of each issuer's embed-token keys (docs/api.md#embed-tokens): the JWKS, and the
 * OpenID-style configuration that standard JWT libraries read to find it. A workspace that does not
 * exist answers as one whose issuer has no key yet, so these paths tell no one which workspaces exist.
 * Any origin may read them (a renderer verifies in the browser too): GET, HEAD and OPTIONS, every
 * answer (errors included) with `Access-Control-Allow-Origin: *`; this plugin's hook is theirs only.
 */
export const discoveryRoutes: FastifyPluginAsyncTypebox<{
  embedTokens: Pick<EmbedTokenService, 'issuerOf' | 'publishedKeys'>;
}> = async (app, { embedTokens }) => {
  app.addHook('onRequest', grantAnyOrigin);
  for (const { environment, path, whose, operation } of ISSUERS) {
    app.get(
      `${path}/.well-known/jwks.json`,
      {
        // The app exposes no HEAD routes of its own accord; a cache or verifier may ask these with HEAD.
        exposeHeadRoute: true,
        schema: {
          operationId: `get${operation}Jwks`,
          summary: `${capitalised(whose)} public signing keys (JWKS)`,
          tags,
          ...PUBLIC_ROUTE,
          params: WorkspaceParam,
          response: responses(JwkSet),
        },
      },
      async (request, reply) => {
        const keys = await embedTokens.publishedKeys(request.params.workspace, environment);
        reply.header('cache-control', CACHE_CONTROL);
        return { keys } as never;
      },
    );

    app.get(
      `${path}/.well-known/openid-configuration`,
      {
        exposeHeadRoute: true,
        schema: {
          operationId: `get${operation}OpenIdConfiguration`,
          summary: `Where ${whose} embed tokens come from and their keys are`,
          tags,
          ...PUBLIC_ROUTE,
          params: WorkspaceParam,
          response: responses(OpenIdConfiguration),
        },
      },
      async (request, reply) => {
        const issuer = embedTokens.issuerOf(request.params.workspace, environment);
        reply.header('cache-control', CACHE_CONTROL);
        return {
          issuer,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
          id_token_signing_alg_values_supported: ['ES256' as const],
          introspection_endpoint: `${issuer}/introspect`,
        };
      },
    );

    for (const document of ['jwks.json', 'openid-configuration'])
      app.options(
        `${path}/.well-known/${document}`,
        { schema: { hide: true, ...PUBLIC_ROUTE } },
        answerPublicPreflight,
      );
  }
};
