import { Type } from 'typebox';
import { EnvironmentTag, IssuedId, Timestamp, TimestampInput } from './common.schemas.js';
import { PageQuery } from './page.schemas.js';
import { IdParam } from './common.schemas.js';

export const AuditEvent = Type.Object({
  id: IssuedId,
  at: Timestamp,
  environment: Type.Union([EnvironmentTag, Type.Null()]),
  actor: Type.Object({
    type: Type.Union([Type.Literal('api_token'), Type.Literal('cli'), Type.Literal('person')]),
    api_token_id: Type.Optional(IssuedId),
    name: Type.Optional(Type.String()),
    issuer: Type.Optional(
      Type.String({ description: "A person's identity provider (its issuer); with sub, who the person is." }),
    ),
    sub: Type.Optional(Type.String({ description: "The person's subject identifier at that issuer." })),
    email: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: "The person's email when they signed in, as the provider sent it: shown, never used to identify.",
      }),
    ),
  }),
  action: Type.String(),
  team_id: Type.Union([IssuedId, Type.Null()]),
  provided_id: Type.Union([Type.String(), Type.Null()]),
  changes: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description: 'Changed fields with before and after values; never a token.',
  }),
  request_id: Type.Union([Type.String(), Type.Null()]),
  sync_id: Type.Optional(
    Type.String({
      description: 'The sync (POST /api/admin/user_groups/sync) the change was part of; absent otherwise.',
    }),
  ),
});

export const AuditQuery = Type.Object(
  {
    environment: Type.Optional(EnvironmentTag),
    team_id: Type.Optional(IdParam('Only events of this group.')),
    action: Type.Optional(Type.String({ maxLength: 64, description: 'e.g. user_group.created' })),
    person_issuer: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description:
          'With person_sub: only what this person did through the console (the issuer of their identity provider).',
      }),
    ),
    person_sub: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: "With person_issuer: the person's sub at that issuer.",
      }),
    ),
    since: Type.Optional(TimestampInput('Inclusive lower bound on at')),
    until: Type.Optional(TimestampInput('Exclusive upper bound on at')),
    ...PageQuery,
  },
  { additionalProperties: false },
);
