import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { OidcSettings } from '../../config/oidc-settings.js';

/*
 * The service as an OpenID Connect relying party (authorization code flow with PKCE): the provider's
 * discovery document, the token request, and the ID token checked with jose against the provider's
 * JWKS. Every refusal is an OidcRefusal whose reason may be shown to the person (it holds no secret).
 */

export class OidcRefusal extends Error {
  constructor(
    readonly reason: 'state' | 'provider' | 'id_token' | 'no_access',
    message: string,
  ) {
    super(message);
  }
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  end_session_endpoint?: string;
}

const PROVIDER_TIMEOUT_MS = 10_000;
/** The discovery document is read again after this long (a provider may move its endpoints). */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
/** Clock difference tolerated between the provider and this service when checking exp, iat and nbf. */
const CLOCK_TOLERANCE_S = 60;

/** The claims the service takes from a checked ID token. */
export interface CheckedIdToken {
  subject: string;
  email: string | null;
  claims: JWTPayload;
}

export type OidcClient = ReturnType<typeof createOidcClient>;

export function createOidcClient(settings: OidcSettings) {
  let discovery: { document: Discovery; at: number; jwks: ReturnType<typeof createRemoteJWKSet> } | undefined;

  async function discover() {
    if (discovery && Date.now() - discovery.at < DISCOVERY_TTL_MS) return discovery;
    const url = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    let document: Discovery;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS), redirect: 'error' });
      if (!response.ok) throw new Error(`status ${response.status}`);
      document = (await response.json()) as Discovery;
    } catch (error) {
      throw new OidcRefusal(
        'provider',
        `The identity provider's discovery document could not be read (${error instanceof Error ? error.message : 'unknown error'}).`,
      );
    }
    // OpenID Connect Discovery §4.3: the document's issuer must be the one asked for, exactly.
    if (document.issuer !== settings.issuer)
      throw new OidcRefusal('provider', "The identity provider's discovery document names another issuer.");
    for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const)
      if (typeof document[field] !== 'string')
        throw new OidcRefusal('provider', `The identity provider's discovery document has no ${field}.`);
    discovery = { document, at: Date.now(), jwks: createRemoteJWKSet(new URL(document.jwks_uri)) };
    return discovery;
  }

  return {
    /** The provider's authorization URL for one sign-in. */
    async authorizationUrl(parts: {
      redirectUri: string;
      state: string;
      nonce: string;
      codeChallenge: string;
    }): Promise<string> {
      const { document } = await discover();
      const url = new URL(document.authorization_endpoint);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', settings.clientId);
      url.searchParams.set('redirect_uri', parts.redirectUri);
      url.searchParams.set('scope', settings.scopes.join(' '));
      url.searchParams.set('state', parts.state);
      url.searchParams.set('nonce', parts.nonce);
      url.searchParams.set('code_challenge', parts.codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
      return url.href;
    },

    /** Exchanges the code for tokens and returns the checked ID token; refuses anything unexpected. */
    async redeem(parts: { code: string; redirectUri: string; codeVerifier: string; nonce: string }) {
      const { document, jwks } = await discover();
      const body = new URLSearchParams({
        grant_type: 'authorization_code',
        code: parts.code,
        redirect_uri: parts.redirectUri,
        code_verifier: parts.codeVerifier,
      });
      const headers: Record<string, string> = {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      };
      if (settings.clientSecret === undefined) body.set('client_id', settings.clientId);
      else {
        // RFC 6749 §2.3.1: each part form-urlencoded before the Basic encoding.
        const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
        headers.authorization = `Basic ${Buffer.from(`${encode(settings.clientId)}:${encode(settings.clientSecret)}`).toString('base64')}`;
      }
      let idToken: unknown;
      try {
        const response = await fetch(document.token_endpoint, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
          redirect: 'error',
        });
        const answer = (await response.json().catch(() => ({}))) as { id_token?: unknown; error?: unknown };
        if (!response.ok)
          throw new Error(typeof answer.error === 'string' ? answer.error.slice(0, 100) : `status ${response.status}`);
        idToken = answer.id_token;
      } catch (error) {
        throw new OidcRefusal(
          'provider',
          `The identity provider refused the sign-in's code (${error instanceof Error ? error.message : 'unknown error'}).`,
        );
      }
      if (typeof idToken !== 'string') throw new OidcRefusal('provider', 'The identity provider sent no ID token.');
      return checkIdToken(idToken, jwks, parts.nonce);
    },

    /** Where to send the browser to end the provider's session too, when the provider advertises it. */
    async endSessionUrl(postLogoutRedirectUri: string): Promise<string | undefined> {
      const { document } = await discover().catch(() => ({ document: undefined }));
      if (!document?.end_session_endpoint) return undefined;
      const url = new URL(document.end_session_endpoint);
      url.searchParams.set('client_id', settings.clientId);
      url.searchParams.set('post_logout_redirect_uri', postLogoutRedirectUri);
      return url.href;
    },
  };

  async function checkIdToken(
    idToken: string,
    jwks: ReturnType<typeof createRemoteJWKSet>,
    nonce: string,
  ): Promise<CheckedIdToken> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, jwks, {
        issuer: settings.issuer,
        audience: settings.clientId,
        algorithms: settings.algorithms,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (error) {
      throw new OidcRefusal('id_token', `The ID token was refused: ${idTokenProblem(error)}.`);
    }
    // OpenID Connect Core §3.1.3.7: with several audiences, the authorized party must be this client.
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== settings.clientId)
      throw new OidcRefusal('id_token', 'The ID token was refused: it was issued to another party (azp).');
    if (payload.nonce !== nonce)
      throw new OidcRefusal('id_token', 'The ID token was refused: its nonce is not the one this sign-in sent.');
    const email = typeof payload.email === 'string' ? payload.email : null;
    return { subject: payload.sub!, email, claims: payload };
  }
}

/** What was wrong with an ID token, in words that reveal nothing but the check that failed. */
function idTokenProblem(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'it has expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'it is from another issuer';
    if (error.claim === 'aud') return 'it is for another audience';
    return `its "${error.claim}" claim is not acceptable`;
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'it is signed with an algorithm that is not allowed';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "no key of the provider's JWKS matches it";
  if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid) return 'it is malformed';
  return 'it could not be verified';
}
