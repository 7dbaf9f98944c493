import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { ApiTokenService } from '../../domain/api-tokens/api-tokens.service.js';
import type { RateLimit as RateLimitRecord } from '../../domain/api-tokens/api-token.records.js';
import { toApiToken } from '../../wire/api-token.presenter.js';
import { EnvironmentQuery } from '../../wire/common.schemas.js';
import { NoQuery } from '../../wire/common.schemas.js';
import { inEnvironment } from '../../domain/tenancy.js';
import { Success } from '../../wire/envelope.js';
import { apiRouteSchema } from '../route-schema.js';
import type { RateLimitField } from '../../wire/api-tokens.schemas.js';
import {
  ApiToken,
  ApiTokenParams,
  ApiTokenResponse,
  CreateApiTokenBody,
  IssuedApiToken,
  UpdateApiTokenBody,
} from '../../wire/api-tokens.schemas.js';

const fromWire = (rateLimit: Static<typeof RateLimitField> | undefined): RateLimitRecord | null =>
  rateLimit ? { perSecond: rateLimit.per_second, burst: rateLimit.burst } : null;

export const apiTokenRoutes: FastifyPluginAsyncTypebox<{ apiTokens: ApiTokenService }> = async (app, { apiTokens }) => {
  app.post(
    '/admin/api_tokens',
    {
      schema: apiRouteSchema(
        'admin',
        'Create an API token',
        Type.Object({ success: Success, api_token: IssuedApiToken }),
        {
          operationId: 'createApiToken',
          description:
            "environment defaults to the API token's, rate_limit to the server's default. The secret appears in this response only.",
          body: CreateApiTokenBody,
          querystring: NoQuery,
        },
      ),
    },
    async (request) => {
      const { body } = request;
      const { record, secret } = await apiTokens.createApiToken(request.caller, {
        name: body.name,
        scope: body.scope,
        environment: body.environment,
        rateLimit: fromWire(body.rate_limit),
      });
      return { success: 1 as const, api_token: { ...toApiToken(record), token: secret } };
    },
  );

  app.get(
    '/admin/api_tokens',
    {
      schema: apiRouteSchema(
        'admin',
        'List live API tokens (without secrets)',
        Type.Object({ success: Success, api_tokens: Type.Array(ApiToken) }),
        {
          operationId: 'listApiTokens',
          description: "The tokens of one environment: the given one, else the API token's.",
          querystring: EnvironmentQuery,
        },
      ),
    },
    async (request) => ({
      success: 1 as const,
      api_tokens: (await apiTokens.listApiTokens(inEnvironment(request.caller, request.query.environment))).map(
        toApiToken,
      ),
    }),
  );

  app.patch(
    '/admin/api_tokens/:id',
    {
      schema: apiRouteSchema('admin', "Change an API token's rate limit", ApiTokenResponse, {
        operationId: 'updateApiToken',
        description:
          "rate_limit is required: an object sets the token's own limit, null puts it back on the server's default. Applies from the token's next request, on every instance.",
        params: ApiTokenParams,
        querystring: NoQuery,
        body: UpdateApiTokenBody,
      }),
    },
    async (request) => ({
      success: 1 as const,
      api_token: toApiToken(
        await apiTokens.updateApiTokenRateLimit(
          request.caller,
          Number(request.params.id),
          fromWire(request.body.rate_limit),
        ),
      ),
    }),
  );

  app.delete(
    '/admin/api_tokens/:id',
    {
      schema: apiRouteSchema('admin', 'Revoke an API token', ApiTokenResponse, {
        operationId: 'revokeApiToken',
        description: 'Refused from the very next request, on every instance.',
        params: ApiTokenParams,
        querystring: NoQuery,
      }),
    },
    async (request) => ({
      success: 1 as const,
      api_token: toApiToken(await apiTokens.revokeApiToken(request.caller, Number(request.params.id))),
    }),
  );
};
