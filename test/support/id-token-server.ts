// An OpenID provider's three endpoints as a relying party sees them (discovery, JWKS, token), on a
// real loopback socket, answering the token request with an ID token the test shapes: for the
// refusals a certified provider never produces (another audience, `none`, an expired token…). The
// browser tests use a real provider (test/support/oidc-provider.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import type { OidcSettings } from '../../src/config/oidc-settings.js';
import type { RoleMapping } from '../../src/domain/console-sessions/oidc-roles.rules.js';

export interface IdTokenServer {
  issuer: string;
  /** What the next token request answers: an ID token made from the nonce the sign-in sent. */
  answerWith(make: (tools: IdTokenTools) => Promise<string>): void;
  /** The token requests received: their form fields and Authorization header. */
  tokenRequests: { form: URLSearchParams; authorization: string | undefined }[];
  /**
   * The test plays the browser at the provider: the code the provider would send back for this
   * authorization URL (the code stands for the nonce the URL carried, as at a real provider).
   */
  codeFor(authorizationUrl: string): string;
  close(): Promise<void>;
}

export interface IdTokenTools {
  /** Claims a good token has: this issuer, the client as audience, an hour to live. */
  claims(extra?: JWTPayload): JWTPayload;
  /** Signs with the provider's RS256 key (the one its JWKS publishes). */
  sign(claims: JWTPayload, alg?: 'RS256'): Promise<string>;
  /** Signs with HS256 under `secret`: an algorithm no allow-list should name. */
  signHmac(claims: JWTPayload, secret: string): Promise<string>;
  /** An unsecured JWT (`alg: none`). */
  unsigned(claims: JWTPayload): string;
}

/** The service's OIDC settings for signing in at `idp`: its issuer, RS256, the roles in `groups`. */
export function idTokenServerSettings(
  idp: IdTokenServer,
  { clientId, clientSecret, roles }: { clientId: string; clientSecret: string; roles: RoleMapping },
): OidcSettings {
  return {
    issuer: idp.issuer,
    clientId,
    clientSecret,
    rolesClaim: 'groups',
    roles,
    algorithms: ['RS256'],
    scopes: ['openid', 'email'],
  };
}

export async function startIdTokenServer(clientId: string, host = 'localhost'): Promise<IdTokenServer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let issuer = '';
  let make: ((tools: IdTokenTools) => Promise<string>) | undefined;
  const tokenRequests: IdTokenServer['tokenRequests'] = [];
  const now = () => Math.floor(Date.now() / 1000);
  const tools = (nonce: string): IdTokenTools => ({
    claims: (extra = {}) => ({
      iss: issuer,
      aud: clientId,
      sub: 'person-1',
      nonce,
      iat: now(),
      exp: now() + 3600,
      ...extra,
    }),
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(privateKey),
    signHmac: (claims, secret) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret)),
    unsigned: (claims) =>
      `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`,
  });
  const nonces = new Map<string, string>();

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', issuer);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration')
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        end_session_endpoint: `${issuer}/logout`,
      });
    if (url.pathname === '/jwks') return json(200, { keys: [jwk] });
    if (url.pathname === '/token' && request.method === 'POST') {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const form = new URLSearchParams(body);
        tokenRequests.push({ form, authorization: request.headers.authorization });
        const nonce = nonces.get(form.get('code') ?? '');
        if (!make || nonce === undefined) return json(400, { error: 'invalid_grant' });
        make(tools(nonce)).then(
          (idToken) => json(200, { access_token: 'at', token_type: 'Bearer', id_token: idToken }),
          () => json(500, { error: 'server_error' }),
        );
      });
      return;
    }
    return json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    get issuer() {
      return issuer;
    },
    answerWith(next) {
      make = next;
    },
    tokenRequests,
    codeFor(authorizationUrl) {
      const nonce = new URL(authorizationUrl).searchParams.get('nonce') ?? '';
      const code = `code-${nonces.size + 1}`;
      nonces.set(code, nonce);
      return code;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
