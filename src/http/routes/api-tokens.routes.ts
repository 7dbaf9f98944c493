import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { RATE_LIMIT_BOUNDS, type ApiTokenService } from '../../domain/api-tokens.service.js';
import type { ApiTokenRecord, RateLimit as RateLimitRecord } from '../../domain/models.js';
import { EnvironmentQuery, EnvironmentTag, Text256, Timestamp } from '../common.schemas.js';
import { IdParam, NoQuery } from '../cursor.js';
import { inEnvironment } from '../../domain/tenancy.js';
import { Success } from '../envelope.js';
import { apiRouteSchema } from '../route-schema.js';

const Scope = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]);

const RateLimit = Type.Object(
  {
    per_second: Type.Number({ ...RATE_LIMIT_BOUNDS.perSecond, description: 'Requests a second the bucket refills by; 0.5 is one every 2 s.' }),
    burst: Type.Integer({ ...RATE_LIMIT_BOUNDS.burst, description: 'Requests a full bucket admits at once.' }),
  },
  { additionalProperties: false },
);
const RateLimitField = Type.Union([RateLimit, Type.Null()], {
  description: `The token's own rate limit: an object {per_second (${RATE_LIMIT_BOUNDS.perSecond.minimum}–${RATE_LIMIT_BOUNDS.perSecond.maximum}), burst (a whole number, ${RATE_LIMIT_BOUNDS.burst.minimum}–${RATE_LIMIT_BOUNDS.burst.maximum})}, or null for the server's default.`,
});

const ApiTokenFields = {
  id: Type.Integer(),
  name: Type.String(),
  scope: Scope,
  environment: EnvironmentTag,
  rate_limit: RateLimitField,
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()]),
};
// Listings have no `token` field at all, so the serialiser cannot emit a secret there.
const ApiToken = Type.Object(ApiTokenFields);
const IssuedApiToken = Type.Object({ ...ApiTokenFields, token: Type.String({ description: 'The secret. Shown in this response only.' }) });
const ApiTokenResponse = Type.Object({ success: Success, api_token: ApiToken });
const ApiTokenParams = Type.Object({ id: IdParam('API token id.') });

const CreateApiTokenBody = Type.Object(
  {
    name: Text256('A label for listings and the audit trail.'),
    scope: Scope,
    environment: Type.Optional(EnvironmentTag),
    rate_limit: Type.Optional(RateLimitField),
  },
  { additionalProperties: false },
);

const UpdateApiTokenBody = Type.Object({ rate_limit: RateLimitField }, { additionalProperties: false });

const fromWire = (rateLimit: Static<typeof RateLimitField> | undefined): RateLimitRecord | null =>
  rateLimit ? { perSecond: rateLimit.per_second, burst: rateLimit.burst } : null;

const toApiToken = (record: ApiTokenRecord) => ({
  id: record.id,
  name: record.name,
  scope: record.scope,
  environment: record.environment,
  rate_limit: record.rateLimit && { per_second: record.rateLimit.perSecond, burst: record.rateLimit.burst },
  created_at: record.createdAt,
  last_used_at: record.lastUsedAt,
});

export const apiTokenRoutes: FastifyPluginAsyncTypebox<{ apiTokens: ApiTokenService }> = async (app, { apiTokens }) => {
  app.post(
    '/admin/api_tokens',
    {
      schema: apiRouteSchema('admin', 'Create an API token', Type.Object({ success: Success, api_token: IssuedApiToken }), {
        description: 'environment defaults to the API token\'s, rate_limit to the server\'s default. The secret appears in this response only.',
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
        rateLimit: fromWire(body.rate_limit),
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

  app.patch(
    '/admin/api_tokens/:id',
    {
      schema: apiRouteSchema('admin', 'Change an API token\'s rate limit', ApiTokenResponse, {
        description: 'rate_limit is required: an object sets the token\'s own limit, null puts it back on the server\'s default. Applies from the token\'s next request, on every instance.',
        params: ApiTokenParams,
        querystring: NoQuery,
        body: UpdateApiTokenBody,
      }),
    },
    async (request) => ({
      success: 1 as const,
      api_token: toApiToken(await apiTokens.updateApiTokenRateLimit(request.caller, Number(request.params.id), fromWire(request.body.rate_limit))),
    }),
  );

  app.delete(
    '/admin/api_tokens/:id',
    {
      schema: apiRouteSchema('admin', 'Revoke an API token', ApiTokenResponse, {
        description: 'Refused from the very next request, on every instance.',
        params: ApiTokenParams,
        querystring: NoQuery,
      }),
    },
    async (request) => ({ success: 1 as const, api_token: toApiToken(await apiTokens.revokeApiToken(request.caller, Number(request.params.id))) }),
  );
};
