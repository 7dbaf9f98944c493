import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MAX_PUBLISHED_KEYS } from '../../wire/contract.constants.js';
import { CURRENT_KEY_HELD_MS, type SigningKeyService } from '../../domain/signing-keys/signing-keys.service.js';
import { inEnvironment } from '../../domain/tenancy.js';
import { toSigningKey } from '../../wire/signing-key.presenter.js';
import { EnvironmentQuery, NoQuery } from '../../wire/common.schemas.js';
import { apiRouteSchema } from '../route-schema.js';
import {
  RotateSigningKeyBody,
  SigningKeyRotationResponse,
  SigningKeysResponse,
} from '../../wire/signing-keys.schemas.js';

/**
 * The embed-token signing keys of an environment's issuer (admin): list (either environment: keys'
 * metadata only), and rotate with overlap the token's own environment's key (docs/api.md#the-admin-api, docs/api.md#embed-tokens).
 */
export const signingKeyRoutes: FastifyPluginAsyncTypebox<{ signingKeys: SigningKeyService }> = async (
  app,
  { signingKeys },
) => {
  app.get(
    '/admin/signing_keys',
    {
      schema: apiRouteSchema('admin', 'List the embed-token signing keys', SigningKeysResponse, {
        operationId: 'listSigningKeys',
        description: "Of one environment's issuer: environment defaults to the API token's.",
        querystring: EnvironmentQuery,
      }),
    },
    async (request) => ({
      success: 1 as const,
      signing_keys: (await signingKeys.list(inEnvironment(request.caller, request.query.environment))).map(
        toSigningKey,
      ),
    }),
  );

  app.post(
    '/admin/signing_keys/rotate',
    {
      schema: apiRouteSchema('admin', 'Rotate the embed-token signing key', SigningKeyRotationResponse, {
        operationId: 'rotateSigningKey',
        description: `The API token's own environment's key. A new key signs from now on, at once on this instance and within ${CURRENT_KEY_HELD_MS / 1000} s on the others; the old one stays in the JWKS until every token it could have signed has expired (a day and ${CURRENT_KEY_HELD_MS / 1000} s). At most ${MAX_PUBLISHED_KEYS} keys are published: beyond, 409 signing_key_limit unless forced. Audited.`,
        body: RotateSigningKeyBody,
        querystring: NoQuery,
      }),
      // The body is optional: none is a rotation that is not forced.
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
    },
    async (request) => {
      const { current, retired, dropped } = await signingKeys.rotate(request.caller, {
        force: request.body.force ?? false,
      });
      return {
        success: 1 as const,
        current: toSigningKey(current),
        retired: retired && toSigningKey(retired),
        dropped: dropped.map(toSigningKey),
      };
    },
  );
};
