import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ApiTokenService } from '../../domain/api-tokens.service.js';
import type { ApiTokenRecord } from '../../domain/models.js';
import { EnvironmentQuery, EnvironmentTag, Text256, Timestamp } from '../common.schemas.js';
import { IdParam, NoQuery } from '../cursor.js';
import { inEnvironment } from '../../domain/tenancy.js';
import { Success } from '../envelope.js';
import { apiRouteSchema } from '../route-schema.js';

const Scope = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]);

const ApiTokenFields = {
  id: Type.Integer(),
  name: Type.String(),
  scope: Scope,
  environment: EnvironmentTag,
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()]),
};
// Listings have no `token` field at all, so the serialiser cannot emit a secret there.
const ApiToken = Type.Object(ApiTokenFields);
const IssuedApiToken = Type.Object({ ...ApiTokenFields, token: Type.String({ description: 'The secret. Shown in this response only.' }) });

const CreateApiTokenBody = Type.Object(
  {
    name: Text256('A label for listings and the audit trail.'),
    scope: Scope,
    environment: Type.Optional(EnvironmentTag),
  },
  { additionalProperties: false },
);

const toApiToken = (record: ApiTokenRecord) => ({
  id: record.id,
  name: record.name,
  scope: record.scope,
  environment: record.environment,
  created_at: record.createdAt,
  last_used_at: record.lastUsedAt,
});

export const apiTokenRoutes: FastifyPluginAsyncTypebox<{ apiTokens: ApiTokenService }> = async (app, { apiTokens }) => {
  app.post(
    '/admin/api_tokens',
    {
      schema: apiRouteSchema('admin', 'Create an API token', Type.Object({ success: Success, api_token: IssuedApiToken }), {
        description: 'environment defaults to the API token\'s. The secret appears in this response only.',
        body: CreateApiTokenBody,
        querystring: NoQuery,
      }),
    },
    async (request) => {
      const { body } = request;
      const { record, secret } = await apiTokens.createApiToken(request.caller, {
        name: body.name,
        scope: body.scope,
        environment: body.environment ?? request.caller.tenant.environment,
      });
      return { success: 1 as const, api_token: { ...toApiToken(record), token: secret } };
    },
  );

  app.get(
    '/admin/api_tokens',
    {
      schema: apiRouteSchema('admin', 'List live API tokens (without secrets)', Type.Object({ success: Success, api_tokens: Type.Array(ApiToken) }), {
        description: 'The tokens of one environment: the given one, else the API token\'s.',
        querystring: EnvironmentQuery,
      }),
    },
    async (request) => ({
      success: 1 as const,
      api_tokens: (await apiTokens.listApiTokens(inEnvironment(request.caller, request.query.environment))).map(toApiToken),
    }),
  );

  app.delete(
    '/admin/api_tokens/:id',
    {
      schema: apiRouteSchema('admin', 'Revoke an API token', Type.Object({ success: Success, api_token: ApiToken }), {
        description: 'Refused from the very next request, on every instance.',
        params: Type.Object({ id: IdParam('API token id.') }),
        querystring: NoQuery,
      }),
    },
    async (request) => ({ success: 1 as const, api_token: toApiToken(await apiTokens.revokeApiToken(request.caller, Number(request.params.id))) }),
  );
};
