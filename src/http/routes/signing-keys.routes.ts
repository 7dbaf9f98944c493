import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SigningKeyService } from '../../domain/signing-keys.service.js';
import { toSigningKey } from '../../wire/signing-key.presenter.js';
import { NoQuery } from '../../wire/common.schemas.js';
import { apiRouteSchema } from '../route-schema.js';
import { SigningKeyRotationResponse, SigningKeysResponse } from '../../wire/signing-keys.schemas.js';

/** The workspace's embed-token signing keys (admin): list, and rotate with overlap (SPEC §10). */
export const signingKeyRoutes: FastifyPluginAsyncTypebox<{ signingKeys: SigningKeyService }> = async (
  app,
  { signingKeys },
) => {
  app.get(
    '/admin/signing_keys',
    {
      schema: apiRouteSchema('admin', 'List the embed-token signing keys', SigningKeysResponse, {
        operationId: 'listSigningKeys',
        querystring: NoQuery,
      }),
    },
    async (request) => ({
      success: 1 as const,
      signing_keys: (await signingKeys.list(request.caller)).map(toSigningKey),
    }),
  );

  app.post(
    '/admin/signing_keys/rotate',
    {
      schema: apiRouteSchema('admin', 'Rotate the embed-token signing key', SigningKeyRotationResponse, {
        operationId: 'rotateSigningKey',
        description:
          'A new key signs from now on, on every instance; the old one stays in the JWKS until every token it signed has expired (a day). Audited.',
      }),
    },
    async (request) => {
      const { current, retired } = await signingKeys.rotate(request.caller);
      return { success: 1 as const, current: toSigningKey(current), retired: retired && toSigningKey(retired) };
    },
  );
};
