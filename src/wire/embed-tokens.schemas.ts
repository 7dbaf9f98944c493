import { Type, type Static } from 'typebox';
import { ResolvedAccessRule } from './access-rules.schemas.js';
import {
  DEFAULT_EMBED_TOKEN_LIFETIME_S,
  MAX_EMBED_SESSION_S,
  MAX_EMBED_TOKEN_BYTES,
  MAX_EMBED_TOKEN_LIFETIME_S,
  MIN_EMBED_INACTIVITY_S,
  MAX_PROPERTIES_BYTES,
  MAX_PROPERTIES_DEPTH,
  MIN_EMBED_TOKEN_LIFETIME_S,
} from './contract.constants.js';
import { NO_CONTROL_CHARACTERS, Text256, Timestamp } from './common.schemas.js';
import { Success } from './envelope.js';
import { ID_RULE, PropertiesObject, UserGroup, UserGroupIdentifier } from './user-groups.schemas.js';

export const MintEmbedTokenBody = Type.Object(
  {
    user_group_id: UserGroupIdentifier(ID_RULE),
    expires_in: Type.Optional(
      Type.Integer({
        minimum: MIN_EMBED_TOKEN_LIFETIME_S,
        maximum: MAX_EMBED_TOKEN_LIFETIME_S,
        description: `Lifetime in seconds, ${MIN_EMBED_TOKEN_LIFETIME_S} to ${MAX_EMBED_TOKEN_LIFETIME_S} (default ${DEFAULT_EMBED_TOKEN_LIFETIME_S}).`,
      }),
    ),
    embed_id: Type.Optional(Text256('The dashboard or embed the token is for: its aud claim (ugs-embed when absent).')),
    origin: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        pattern: NO_CONTROL_CHARACTERS,
        description:
          'The only web origin the renderer should accept the token from, e.g. https://app.example.com (no path).',
      }),
    ),
    properties: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description: `Per-view values merged over the group's properties for this token only: a JSON object of at most ${MAX_PROPERTIES_BYTES} bytes and ${MAX_PROPERTIES_DEPTH} levels; the token must stay within ${MAX_EMBED_TOKEN_BYTES / 1024} KiB.`,
        },
      ),
    ),
    single_use: Type.Optional(
      Type.Boolean({
        description:
          'The first online verify or introspection consumes the token; later ones answer 404 / inactive. Not with session_seconds.',
      }),
    ),
    session_seconds: Type.Optional(
      Type.Integer({
        minimum: MIN_EMBED_TOKEN_LIFETIME_S,
        maximum: MAX_EMBED_SESSION_S,
        description: `Makes the token refreshable (POST /api/user/embed_token/refresh) for this many seconds from now, at most ${MAX_EMBED_SESSION_S}; no token of the session expires later.`,
      }),
    ),
    inactivity_seconds: Type.Optional(
      Type.Integer({
        minimum: MIN_EMBED_INACTIVITY_S,
        maximum: MAX_EMBED_SESSION_S,
        description:
          'With session_seconds: a token not refreshed within this many seconds of its issue cannot refresh.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type MintEmbedTokenBody = Static<typeof MintEmbedTokenBody>;

export const EmbedTokenResponse = Type.Object({
  success: Success,
  embed_token: Type.String({
    description: 'A compact JWS (ES256, typ ugs-embed+jwt); never contains the group token.',
  }),
  expires_at: Timestamp,
  session_ends_at: Type.Optional(Timestamp),
});

export const EmbedOfToken = Type.Object(
  {
    embed_id: Type.Union([Type.String(), Type.Null()]),
    origin: Type.Union([Type.String(), Type.Null()]),
    properties: PropertiesObject,
    access_rules: Type.Array(ResolvedAccessRule, {
      description:
        'The access rules the token carries: the effective rules as of minting, property references resolved.',
    }),
    expires_at: Timestamp,
  },
  { description: 'Present when the token verified is an embed token: what it was minted for.' },
);

export const VerifiedTokenResponse = Type.Object({
  success: Success,
  user_group: UserGroup,
  embed: Type.Optional(EmbedOfToken),
});
