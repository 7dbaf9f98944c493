import { Type } from 'typebox';
import { Timestamp } from './common.schemas.js';
import { Success } from './envelope.js';
import { MAX_PUBLISHED_KEYS } from './contract.constants.js';

/** A public signing key as RFC 7517 writes it: P-256, for ES256 signatures. */
export const PublicJwk = Type.Object({
  kty: Type.Literal('EC'),
  crv: Type.Literal('P-256'),
  x: Type.String(),
  y: Type.String(),
  kid: Type.String({ description: "The key's JWK thumbprint (RFC 7638); the kid of the tokens it signs." }),
  alg: Type.Literal('ES256'),
  use: Type.Literal('sig'),
});

export const JwkSet = Type.Object({
  keys: Type.Array(PublicJwk, {
    maxItems: MAX_PUBLISHED_KEYS,
    description: `Every key of the issuer whose tokens may still be live, the current one first; at most ${MAX_PUBLISHED_KEYS}.`,
  }),
});

export const OpenIdConfiguration = Type.Object({
  issuer: Type.String(),
  jwks_uri: Type.String(),
  id_token_signing_alg_values_supported: Type.Array(Type.Literal('ES256')),
  introspection_endpoint: Type.String({
    description:
      "RFC 7662 introspection of this issuer's embed tokens (RFC 8414's name): takes an API token of this issuer.",
  }),
});

export const WorkspaceParam = Type.Object(
  { workspace: Type.String({ minLength: 1, maxLength: 256, description: 'The workspace name.' }) },
  { additionalProperties: false },
);

export const SigningKey = Type.Object({
  kid: Type.String(),
  created_at: Timestamp,
  retired_at: Type.Union([Timestamp, Type.Null()]),
  published_until: Type.Union([Timestamp, Type.Null()], {
    description: 'When it leaves the JWKS: null while it is the current key.',
  }),
});

export const RotateSigningKeyBody = Type.Object(
  {
    force: Type.Optional(
      Type.Boolean({
        description: `For a leaked key: rotate even when the issuer already publishes ${MAX_PUBLISHED_KEYS} keys, dropping the oldest (its tokens stop verifying).`,
      }),
    ),
  },
  { additionalProperties: false, description: 'Optional: no body is {}.' },
);

export const SigningKeysResponse = Type.Object({
  success: Success,
  signing_keys: Type.Array(SigningKey, { description: 'The published keys, newest first.' }),
});
export const SigningKeyRotationResponse = Type.Object({
  success: Success,
  current: SigningKey,
  retired: Type.Union([SigningKey, Type.Null()]),
  dropped: Type.Array(SigningKey, {
    description:
      'The oldest keys a forced rotation took out of the JWKS (with the tokens they signed); empty otherwise.',
  }),
});
