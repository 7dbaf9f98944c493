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

export const ConsoleSession = Type.Object({
  api_token: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    scope: Type.String(),
    environment: EnvironmentTag,
  }),
  csrf_token: Type.String({ description: 'Send it as X-CSRF-Token with every request the console makes.' }),
  idle_expires_at: Timestamp,
  expires_at: Timestamp,
});

export const ConsoleSessionResponse = Type.Object({ success: Success, session: ConsoleSession });
/** GET /console/session: a page without a session cookie is told so (null), which is no error. */
export const CurrentConsoleSessionResponse = Type.Object({
  success: Success,
  session: Type.Union([ConsoleSession, Type.Null()]),
});
export const SignedOutResponse = Type.Object({ success: Success });
