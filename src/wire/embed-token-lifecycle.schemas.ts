import { Type } from 'typebox';
import { ResolvedAccessRule } from './access-rules.schemas.js';
import { IssuedId, Timestamp } from './common.schemas.js';
import { MAX_EMBED_SESSION_S, MIN_EMBED_INACTIVITY_S } from './contract.constants.js';
import { Success } from './envelope.js';
import { PropertiesObject } from './user-groups.schemas.js';

/*
 * The embed-token lifecycle beyond minting (docs/api.md#introspection-rfc-7662, docs/api.md#refresh-within-a-session): RFC 7662 introspection and refresh within a
 * session. The mint's own new fields are in embed-tokens.schemas.ts.
 */

/** An embed token is a compact JWS of at most 8 KiB; a little room is left for what is not one. */
const EmbedTokenText = (description: string) => Type.String({ minLength: 1, maxLength: 16 * 1024, description });

/** A NumericDate (seconds since the epoch). */
const NumericDate = (description: string) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

/** RFC 7662 §2.1, form-encoded. Other parameters are ignored, as §2.1 allows. */
export const IntrospectionForm = Type.Object(
  {
    token: EmbedTokenText('The embed token to introspect.'),
    token_type_hint: Type.Optional(
      Type.String({ maxLength: 256, description: 'Accepted and ignored: this endpoint knows one kind of token.' }),
    ),
  },
  { additionalProperties: true },
);

const EmbedSessionClaim = Type.Object({
  id: Type.String(),
  ends_at: NumericDate('When the session ends.'),
  inactivity_seconds: Type.Union([
    Type.Integer({ minimum: MIN_EMBED_INACTIVITY_S, maximum: MAX_EMBED_SESSION_S }),
    Type.Null(),
  ]),
  view_keys: Type.Array(Type.String(), { description: 'The per-view properties a refresh carries over.' }),
});

const UgsClaim = Type.Object(
  {
    team_id: Type.Integer({ ...IssuedId }),
    environment: Type.String(),
    workspace: Type.String(),
    properties: PropertiesObject,
    mapping: Type.Record(Type.String(), Type.String()),
    is_demo_group: Type.Boolean(),
    origin: Type.Union([Type.String(), Type.Null()]),
    access_rules: Type.Optional(Type.Array(ResolvedAccessRule)),
    single_use: Type.Optional(Type.Literal(true)),
    session: Type.Optional(EmbedSessionClaim),
  },
  { description: "The service's own claim, as the token carries it." },
);

/** RFC 7662 §2.2: `{"active":false}` alone, or `active: true` with the token's claims. */
export const IntrospectionResponse = Type.Union(
  [
    Type.Object({ active: Type.Literal(false) }, { additionalProperties: false }),
    Type.Object({
      active: Type.Literal(true),
      token_type: Type.Literal('ugs-embed+jwt'),
      iss: Type.String(),
      sub: Type.String({ description: "The group's user_group_id (provided id)." }),
      aud: Type.String({ description: 'The embed_id, or ugs-embed.' }),
      iat: NumericDate('When the token was issued.'),
      nbf: NumericDate('Not valid before.'),
      exp: NumericDate('When the token expires.'),
      jti: Type.String(),
      ugs: UgsClaim,
    }),
  ],
  { description: 'RFC 7662 introspection response (no success envelope: the RFC names its members).' },
);

export const RefreshEmbedTokenBody = Type.Object(
  { token: EmbedTokenText('The live embed token of a session (minted with session_seconds): the credential.') },
  { additionalProperties: false },
);

export const RefreshedEmbedTokenResponse = Type.Object({
  success: Success,
  embed_token: Type.String({ description: 'A new token of the same session: the group as it is now, a new exp.' }),
  expires_at: Timestamp,
  session_ends_at: Timestamp,
});
