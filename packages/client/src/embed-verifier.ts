import { base64url, createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { ResolvedAccessRule } from '../../../src/wire/access-rules.schemas.js';

export interface EmbedTokenVerifierOptions {
  /**
   * The issuer of the environment this renderer serves: `<public URL>/w/<workspace>` (Customer) or
   * `<public URL>/w/<workspace>/testing` (Testing); its JWKS is `<issuer>/.well-known/jwks.json`. A token
   * of the other environment never verifies under it.
   */
  issuer: string;
  /** The embed_id(s) this renderer serves (`ugs-embed` for tokens minted without one). */
  audience: string | string[];
  /** How long fetched keys are trusted before they are fetched again (default: 10 min). */
  cacheMaxAgeMs?: number;
  /** The least time between two fetches prompted by an unknown kid (default 30 s, jose's). */
  cooldownMs?: number;
  /**
   * Accept a token minted without an `origin` when `verify` is given the page's origin (default: such a
   * token is refused, so that the renderer, not whoever mints, decides whether origins are pinned).
   */
  allowMissingOrigin?: boolean;
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
    /**
     * The group's effective access rules, property references resolved (SPEC §17): give them to
     * accessRulesToSql. Absent from tokens minted by a service that predates them: pass `?? []`,
     * which denies every table not opted out with `unlisted: 'allow'`.
     */
    access_rules?: ResolvedAccessRule[];
  };
}

/** The token was not minted for the origin the renderer was asked to check. */
export class EmbedOriginError extends Error {
  override readonly name = 'EmbedOriginError';
}

// P-256's group order halved: an ECDSA signature (r, s) is also valid as (r, n - s); the service signs
// only the low half, so a high-S signature is a second string for a token and is refused.
const HALF_ORDER_HEX = '7fffffff800000007fffffffffffffffde737d56d38bcf4279dce5617e3192a8';

function hasHighS(token: string): boolean {
  const signature = base64url.decode(token.slice(token.lastIndexOf('.') + 1));
  const s = Array.from(signature.subarray(32), (byte) => byte.toString(16).padStart(2, '0')).join('');
  // Equal-length hex strings compare as the numbers they spell.
  return s.length === HALF_ORDER_HEX.length && s > HALF_ORDER_HEX;
}

/**
 * Verifies embed tokens offline, as a dashboard renderer does: signature (ES256, keys from the
 * workspace's JWKS, cached and refetched when a token names a kid not seen yet — a rotated key),
 * `iss`, `aud`, `exp`, `nbf`, a low-S signature, and the origin when asked (a token minted without
 * one is then refused unless `allowMissingOrigin`). It cannot see a rotation of the group
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
    if (hasHighS(token)) throw new errors.JWSSignatureVerificationFailed('The signature is not in low-S form.');
    const claims = payload as EmbedClaims;
    if (check.origin !== undefined && claims.ugs.origin === null && !options.allowMissingOrigin) {
      throw new EmbedOriginError(`The embed token was minted without an origin; this page is ${check.origin}.`);
    }
    if (check.origin !== undefined && claims.ugs.origin !== null && claims.ugs.origin !== check.origin) {
      throw new EmbedOriginError(`The embed token is for ${claims.ugs.origin}, not ${check.origin}.`);
    }
    return claims;
  };
}

export type EmbedTokenVerifier = ReturnType<typeof createEmbedTokenVerifier>;
