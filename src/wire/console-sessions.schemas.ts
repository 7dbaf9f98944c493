import { Type } from 'typebox';
import { EnvironmentTag, NO_CONTROL_CHARACTERS, Timestamp } from './common.schemas.js';
import { Success } from './envelope.js';

/** POST /console/session: the admin API token to sign in with; it goes no further than this request. */
export const SignInBody = Type.Object(
  {
    api_token: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: NO_CONTROL_CHARACTERS,
      description: 'An admin API token.',
    }),
  },
  { additionalProperties: false },
);

const Scope = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]);

export const ConsoleSession = Type.Object({
  /** The admin API token a token sign-in acts as; null for a person's session. */
  api_token: Type.Union([
    Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      scope: Type.String(),
      environment: EnvironmentTag,
    }),
    Type.Null(),
  ]),
  /** The person signed in through the identity provider; null for a token's session. */
  person: Type.Union([
    Type.Object({
      issuer: Type.String(),
      sub: Type.String(),
      email: Type.Union([Type.String(), Type.Null()]),
      /** Every workspace and environment the provider's claim gave access to, decided at sign-in. */
      access: Type.Array(Type.Object({ workspace: Type.String(), environment: EnvironmentTag, access: Scope })),
    }),
    Type.Null(),
  ]),
  /** What the session may do where it acts now: the console shows only the controls this allows. */
  scope: Scope,
  environment: EnvironmentTag,
  csrf_token: Type.String({ description: 'Send it as X-CSRF-Token with every request the console makes.' }),
  idle_expires_at: Timestamp,
  expires_at: Timestamp,
});

export const ConsoleSessionResponse = Type.Object({ success: Success, session: ConsoleSession });
/** GET /console/session: a page without a session cookie is told so (null), which is no error. */
export const CurrentConsoleSessionResponse = Type.Object({
  success: Success,
  session: Type.Union([ConsoleSession, Type.Null()]),
  /** The ways in this server offers: the sign-in page shows these. */
  sign_in: Type.Object({ api_token: Type.Boolean(), identity_provider: Type.Boolean() }),
});
/** GET /console/sign-in: the ways in this server offers, whatever the request's cookie. */
export const SignInMethodsResponse = Type.Object({
  success: Success,
  sign_in: Type.Object({ api_token: Type.Boolean(), identity_provider: Type.Boolean() }),
});
export const SignedOutResponse = Type.Object({
  success: Success,
  /** Where to send the browser to end the identity provider's session too, when the provider offers that. */
  logout_url: Type.Optional(Type.String()),
});
