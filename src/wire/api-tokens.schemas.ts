import { Type } from 'typebox';
import { RATE_LIMIT_BOUNDS } from './contract.constants.js';
import { EnvironmentTag, Text256, Timestamp } from './common.schemas.js';
import { IdParam, IssuedId } from './common.schemas.js';
import { Success } from './envelope.js';

const Scope = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]);

export const RateLimit = Type.Object(
  {
    per_second: Type.Number({
      ...RATE_LIMIT_BOUNDS.perSecond,
      description: 'Requests a second the bucket refills by; 0.5 is one every 2 s.',
    }),
    burst: Type.Integer({ ...RATE_LIMIT_BOUNDS.burst, description: 'Requests a full bucket admits at once.' }),
  },
  { additionalProperties: false },
);
export const RateLimitField = Type.Union([RateLimit, Type.Null()], {
  description: `The token's own rate limit: an object {per_second (${RATE_LIMIT_BOUNDS.perSecond.minimum}–${RATE_LIMIT_BOUNDS.perSecond.maximum}), burst (a whole number, ${RATE_LIMIT_BOUNDS.burst.minimum}–${RATE_LIMIT_BOUNDS.burst.maximum})}, or null for the server's default.`,
});

const ApiTokenFields = {
  id: IssuedId,
  name: Type.String(),
  scope: Scope,
  environment: EnvironmentTag,
  rate_limit: RateLimitField,
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()]),
};
// Listings have no `token` field at all, so the serialiser cannot emit a secret there.
export const ApiToken = Type.Object(ApiTokenFields);
export const IssuedApiToken = Type.Object({
  ...ApiTokenFields,
  token: Type.String({ description: 'The secret. Shown in this response only.' }),
});
export const ApiTokenResponse = Type.Object({ success: Success, api_token: ApiToken });
export const ApiTokenParams = Type.Object({ id: IdParam('API token id.') });

export const CreateApiTokenBody = Type.Object(
  {
    name: Text256('A label for listings and the audit trail.'),
    scope: Scope,
    environment: Type.Optional(EnvironmentTag),
    rate_limit: Type.Optional(RateLimitField),
  },
  { additionalProperties: false },
);

export const UpdateApiTokenBody = Type.Object({ rate_limit: RateLimitField }, { additionalProperties: false });
