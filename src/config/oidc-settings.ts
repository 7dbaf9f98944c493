import { readFileSync } from 'node:fs';
import { parseRoleMapping, type RoleMapping } from '../domain/console-sessions/oidc-roles.rules.js';

/*
 * Console sign-in through an OpenID Connect provider (docs/deployment.md, "Console sign-in through an
 * identity provider"): `ugs serve`'s --oidc-* flags and their UGS_OIDC_* variables, checked at start
 * so that a mistake refuses to start rather than refusing every person later.
 */

/** The algorithms an ID token may be signed with unless --oidc-algorithms says otherwise; never `none` or HMAC. */
export const DEFAULT_OIDC_ALGORITHMS = ['RS256', 'PS256', 'ES256'] as const;
/** Asymmetric JWS algorithms only: an HMAC one would be keyed by the client secret, `none` by nothing. */
const ALLOWED_ALGORITHMS = new Set([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
]);

export interface OidcSettings {
  /** The provider's issuer, exactly as its discovery document and its ID tokens state it. */
  issuer: string;
  clientId: string;
  /** Absent for a public client (PKCE alone); sent as HTTP Basic (RFC 6749 §2.3.1) otherwise. */
  clientSecret: string | undefined;
  /** The claim whose values the role mapping maps (default `groups`). */
  rolesClaim: string;
  roles: RoleMapping;
  algorithms: string[];
  /** The scopes asked for: `openid` always, plus what the provider needs to send email and the roles claim. */
  scopes: string[];
}

/** `--oidc-issuer`: an https URL (http only on loopback, for a provider on the same machine). */
export function parseIssuer(text: string): string {
  const url = new URL(text);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new Error('must be an https URL (http only for a provider on loopback)');
  if (url.search || url.hash) throw new Error('must be the issuer without a query or fragment');
  return text;
}

/** `--oidc-roles`: the JSON object itself, or the path of a file holding it. */
export function parseRoles(text: string): RoleMapping {
  const trimmed = text.trim();
  return parseRoleMapping(trimmed.startsWith('{') ? trimmed : readFileSync(trimmed, 'utf8'));
}

export function parseAlgorithms(text: string): string[] {
  const algorithms = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (algorithms.length === 0) throw new Error('name at least one algorithm, e.g. RS256');
  for (const algorithm of algorithms)
    if (!ALLOWED_ALGORITHMS.has(algorithm))
      throw new Error(`"${algorithm}" is not allowed: one of ${[...ALLOWED_ALGORITHMS].join(', ')}`);
  return algorithms;
}

export interface OidcFlags {
  oidcIssuer?: string;
  oidcClientId?: string;
  oidcClientSecret?: string;
  oidcRolesClaim: string;
  oidcRoles?: RoleMapping;
  oidcAlgorithms: string[];
  oidcScopes: string;
  tokenSignIn: 'on' | 'off';
}

/** The settings the flags make, undefined without --oidc-issuer; throws on a half-made configuration. */
export function oidcSettingsOf(flags: OidcFlags): OidcSettings | undefined {
  if (flags.oidcIssuer === undefined) {
    if (flags.oidcClientId !== undefined || flags.oidcRoles !== undefined)
      throw new Error('--oidc-client-id and --oidc-roles need --oidc-issuer (UGS_OIDC_ISSUER)');
    if (flags.tokenSignIn === 'off')
      throw new Error(
        '--token-sign-in off (UGS_TOKEN_SIGN_IN) needs --oidc-issuer: no way into the console would be left',
      );
    return undefined;
  }
  if (flags.oidcClientId === undefined) throw new Error('--oidc-issuer needs --oidc-client-id (UGS_OIDC_CLIENT_ID)');
  if (flags.oidcRoles === undefined)
    throw new Error('--oidc-issuer needs --oidc-roles (UGS_OIDC_ROLES): without it nobody would get access');
  const scopes = [...new Set(['openid', ...flags.oidcScopes.split(/[\s,]+/).filter((scope) => scope !== '')])];
  return {
    issuer: flags.oidcIssuer,
    clientId: flags.oidcClientId,
    clientSecret: flags.oidcClientSecret === '' ? undefined : flags.oidcClientSecret,
    rolesClaim: flags.oidcRolesClaim,
    roles: flags.oidcRoles,
    algorithms: flags.oidcAlgorithms,
    scopes,
  };
}
