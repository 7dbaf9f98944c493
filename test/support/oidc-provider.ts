// A real OpenID provider for the console's browser tests: oidc-provider (the certified Node.js
// implementation) on its own loopback site (http://localhost:<port>, while the service is at
// http://127.0.0.1:<port>), with its development login and consent pages. Its people are whoever the
// test says, with the claim shapes of the providers the docs configure: Keycloak's `/path` groups,
// Entra's group object ids, Google's no `groups` at all.
import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';
import { freePort } from './free-port.js';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** A person's claims, by the login typed at the provider's login page; change them to change the person. */
  people: Map<string, { email: string; groups?: string[] }>;
  /** The provider's listening address, for the service started before it (the issuer is known first). */
  start(serviceUrl: string): Promise<void>;
  close(): Promise<void>;
}

/** Reserves the provider's address; `start` listens once the service's callback address is known. */
export async function reserveTestProvider(): Promise<TestProvider> {
  const port = await freePort();
  const issuer = `http://localhost:${port}`;
  const people: TestProvider['people'] = new Map();
  let server: Server | undefined;
  const clientId = 'ugs-console';
  const clientSecret = 'a client secret of the test';
  return {
    issuer,
    clientId,
    clientSecret,
    people,
    async start(serviceUrl) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [`${serviceUrl}/console/oidc/callback`],
            post_logout_redirect_uris: [`${serviceUrl}/console/`],
            response_types: ['code'],
            grant_types: ['authorization_code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        findAccount: (_context: unknown, accountId: string) => ({
          accountId,
          claims: () => {
            const person = people.get(accountId);
            return { sub: accountId, ...(person ?? {}) };
          },
        }),
        // groups in every ID token, as Entra and Keycloak (with a groups mapper) send them.
        claims: { openid: ['sub', 'groups'], email: ['email'] },
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
        cookies: { keys: ['the test provider cookie key'] },
      });
      server = createServer(provider.callback());
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    },
    close: () => new Promise((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
}
