import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

export interface EmbedTokenVerifierOptions {
  /** The workspace's issuer: `<public URL>/w/<workspace>`; its JWKS is `<issuer>/.well-known/jwks.json`. */
  issuer: string;
  /** The embed_id(s) this renderer serves (`ugs-embed` for tokens minted without one). */
  audience: string | string[];
  /** How long fetched keys are trusted before they are fetched again (default: 10 min). */
  cacheMaxAgeMs?: number;
  /** The least time between two fetches prompted by an unknown kid (default 30 s, jose's). */
  cooldownMs?: number;
}

/** What an embed token carries about its group (SPEC §10). */
export interface EmbedClaims extends JWTPayload {
  sub: string;
  ugs: {
    team_id: number;
    environment: 'Customer' | 'Testing';
    workspace: string;
    properties: Record<string, unknown>;
    mapping: Record<string, string>;
    is_demo_group: boolean;
    origin: string | null;
  };
}

/** The token was not minted for the origin the renderer was asked to check. */
export class EmbedOriginError extends Error {
  override readonly name = 'EmbedOriginError';
}

/**
 * Verifies embed tokens offline, as a dashboard renderer does: signature (ES256, keys from the
 * workspace's JWKS, cached and refetched when a token names a kid not seen yet — a rotated key),
 * `iss`, `aud`, `exp`, `nbf`, and the origin when asked. It cannot see a rotation of the group
 * token: for that, verify online (`client.verifyToken`).
 */
export function createEmbedTokenVerifier(options: EmbedTokenVerifierOptions) {
  const issuer = options.issuer.replace(/\/+$/, '');
  const keys = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`), {
    cacheMaxAge: options.cacheMaxAgeMs ?? 600_000,
    ...(options.cooldownMs === undefined ? {} : { cooldownDuration: options.cooldownMs }),
  });
  return async function verify(
    token: string,
    check: { origin?: string; currentDate?: Date } = {},
  ): Promise<EmbedClaims> {
    const { payload } = await jwtVerify<Pick<EmbedClaims, 'ugs'>>(token, keys, {
      issuer,
      audience: options.audience,
      algorithms: ['ES256'],
      typ: 'ugs-embed+jwt',
      ...(check.currentDate ? { currentDate: check.currentDate } : {}),
    });
    const claims = payload as EmbedClaims;
    if (check.origin !== undefined && claims.ugs.origin !== null && claims.ugs.origin !== check.origin) {
      throw new EmbedOriginError(`The embed token is for ${claims.ugs.origin}, not ${check.origin}.`);
    }
    return claims;
  };
}

export type EmbedTokenVerifier = ReturnType<typeof createEmbedTokenVerifier>;
