import { Type, type TSchema } from 'typebox';
import { EMBED_REVOCATION_MAX_AGE_S, MAX_EMBED_TOKEN_BYTES } from './contract.constants.js';
import { Success } from './envelope.js';
import { MAX_SAFE } from './common.schemas.js';

/** A whole number from 0: entry numbers, generations, Unix seconds. */
const Whole = (description?: string) =>
  Type.Integer({ minimum: 0, maximum: MAX_SAFE, ...(description === undefined ? {} : { description }) });
import { ID_RULE, UserGroup, UserGroupIdentifier } from './user-groups.schemas.js';

export const RevokeEmbedTokensBody = Type.Object(
  {
    embed_token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_EMBED_TOKEN_BYTES,
        description:
          'The embed token to revoke: its signature, issuer and lifetime must hold under the API token’s environment.',
      }),
    ),
    user_group_id: Type.Optional(
      UserGroupIdentifier(`The group whose every current embed token to revoke. ${ID_RULE}`),
    ),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of embed_token and user_group_id.',
  },
);

export const RevokedEmbedTokensResponse = Type.Object({
  success: Success,
  user_group: UserGroup,
  revoked: Type.Object({
    scope: Type.Union([Type.Literal('token'), Type.Literal('group')]),
    jti: Type.Union([Type.String(), Type.Null()], { description: 'The revoked token’s jti; null for a group.' }),
  }),
});

/**
 * A fixed-length entry, published as JSON Schema 2020-12 `prefixItems` (what OpenAPI 3.1 reads): TypeBox's
 * tuple is the draft-07 form (`items` as an array), which OpenAPI 3.1 validators refuse. The document is
 * sent as rendered text, so this schema describes it and never serialises it.
 */
const Entry = <T extends unknown[]>(items: TSchema[]) =>
  Type.Unsafe<T>({ type: 'array', prefixItems: items, minItems: items.length, maxItems: items.length });

export const RevocationDocument = Type.Object({
  issuer: Type.String(),
  generation: Whole(
    'The highest entry number in the document: informative only (entries that expire leave, so it may fall); merge, never replace.',
  ),
  max_age: Whole(`Seconds a verifier may keep this document before fetching it again (${EMBED_REVOCATION_MAX_AGE_S}).`),
  groups: Type.Array(Entry<[string, number, number]>([Type.String(), Whole(), Whole()]), {
    description:
      '[grp, before_generation, expires_at]: every token whose grp claim is grp and whose gen claim is below before_generation is revoked; the entry may be dropped after expires_at (Unix seconds).',
  }),
  tokens: Type.Array(Entry<[string, number]>([Type.String(), Whole()]), {
    description: '[jti, expires_at]: the token with this jti is revoked; the entry may be dropped after expires_at.',
  }),
});
