// The --oidc-* flags of `ugs serve` (docs/deployment.md, "Console sign-in through an identity provider").
import { describe, expect, it } from 'vitest';
import { oidcSettingsOf, parseAlgorithms, parseIssuer, type OidcFlags } from '../../src/config/oidc-settings.js';
import { parseRoleMapping } from '../../src/domain/console-sessions/oidc-roles.rules.js';

const FLAGS: OidcFlags = {
  oidcRolesClaim: 'groups',
  oidcAlgorithms: ['RS256'],
  oidcScopes: 'email profile',
  tokenSignIn: 'on',
};

describe('OIDC settings', () => {
  it('allows asymmetric algorithms only: never none, never HMAC', () => {
    expect(parseAlgorithms('RS256, ES256')).toEqual(['RS256', 'ES256']);
    expect(() => parseAlgorithms('none')).toThrow('not allowed');
    expect(() => parseAlgorithms('HS256')).toThrow('not allowed');
    expect(() => parseAlgorithms(' , ')).toThrow('at least one');
  });

  it('takes an https issuer, or http on loopback only', () => {
    expect(parseIssuer('https://id.example.com/realms/acme')).toBe('https://id.example.com/realms/acme');
    expect(parseIssuer('http://localhost:8081')).toBe('http://localhost:8081');
    expect(() => parseIssuer('http://id.example.com')).toThrow('https');
  });

  it('needs a client id and a role mapping with an issuer, and an issuer to switch token sign-in off', () => {
    expect(oidcSettingsOf(FLAGS)).toBeUndefined();
    expect(() => oidcSettingsOf({ ...FLAGS, tokenSignIn: 'off' })).toThrow('no way into the console');
    expect(() => oidcSettingsOf({ ...FLAGS, oidcIssuer: 'https://id.example.com' })).toThrow('--oidc-client-id');
    expect(() => oidcSettingsOf({ ...FLAGS, oidcIssuer: 'https://id.example.com', oidcClientId: 'c' })).toThrow(
      '--oidc-roles',
    );
    const roles = parseRoleMapping('{}');
    expect(
      oidcSettingsOf({ ...FLAGS, oidcIssuer: 'https://id.example.com', oidcClientId: 'c', oidcRoles: roles }),
    ).toMatchObject({ clientSecret: undefined, scopes: ['openid', 'email', 'profile'] });
  });
});
