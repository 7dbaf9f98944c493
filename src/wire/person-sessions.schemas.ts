import { Type } from 'typebox';
import { EnvironmentTag, IdParam, IssuedId, MAX_SAFE, Timestamp } from './common.schemas.js';
import { Success } from './envelope.js';

const Scope = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]);

/** A person's console session (signed in through the identity provider), as an admin sees it. */
export const PersonSession = Type.Object({
  id: IssuedId,
  issuer: Type.String({ description: "The person's identity provider; with sub, who the person is." }),
  sub: Type.String(),
  email: Type.Union([Type.String(), Type.Null()], { description: 'Shown, never used to identify.' }),
  environment: EnvironmentTag,
  access: Type.Array(Type.Object({ workspace: Type.String(), environment: EnvironmentTag, access: Scope })),
  created_at: Timestamp,
  last_seen_at: Timestamp,
  expires_at: Timestamp,
  renew_at: Timestamp,
});

export const PersonSessionsQuery = Type.Object(
  {
    person_issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'With person_sub.' })),
    person_sub: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'With person_issuer.' })),
  },
  { additionalProperties: false },
);

export const PersonSessionParams = Type.Object({ id: IdParam("The session's id.") });

export const PersonSessionsResponse = Type.Object({ success: Success, console_sessions: Type.Array(PersonSession) });
export const PersonSessionEndedResponse = Type.Object({ success: Success });

/** Whose sessions to end: both halves of the person's identity are required. */
export const PersonSessionsEndQuery = Type.Object(
  {
    person_issuer: Type.String({ minLength: 1, maxLength: 512, description: "The person's identity provider." }),
    person_sub: Type.String({ minLength: 1, maxLength: 512, description: "The person's sub at that provider." }),
  },
  { additionalProperties: false },
);
export const PersonSessionsEndedResponse = Type.Object({
  success: Success,
  ended: Type.Integer({
    minimum: 0,
    maximum: MAX_SAFE,
    description: 'How many sessions were ended (0 when the person had none).',
  }),
});
