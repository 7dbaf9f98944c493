// Console sign-in through an identity provider (docs/security.md, "Console sign-in through an
// identity provider"): what the service refuses on the way back from the provider. The provider here
// answers the token request with ID tokens the test shapes (test/support/id-token-server.ts): the
// refusals a certified provider never gives a reason for. The browser tests sign in at a real one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRoleMapping } from '../../src/domain/console-sessions/oidc-roles.rules.js';
import {
  idTokenServerSettings,
  startIdTokenServer,
  type IdTokenServer,
  type IdTokenTools,
} from '../support/id-token-server.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { adminCaller } from '../support/callers.js';

const CLIENT_ID = 'ugs-console';
const ROLES = parseRoleMapping(
  JSON.stringify({
    '/ugs/admins': [{ workspace: 'default', environment: '*', access: 'admin' }],
    'ugs-readers': [{ workspace: 'default', environment: 'Customer', access: 'read' }],
  }),
);

describe('console sign-in through an identity provider: refusals', () => {
  let idp: IdTokenServer;
  let t: TestApp;

  beforeAll(async () => {
    idp = await startIdTokenServer(CLIENT_ID);
    t = await createTestApp({
      oidc: idTokenServerSettings(idp, {
        clientId: CLIENT_ID,
        clientSecret: 'client secret: with a colon',
        roles: ROLES,
      }),
      tokenSignIn: false,
    });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const cookieOf = (setCookie: string | string[] | undefined, name: string) =>
    [setCookie ?? []]
      .flat()
      .find((cookie) => cookie.startsWith(`${name}=`))
      ?.split(';', 1)[0];

  /** Starts a sign-in as the browser does: the provider's URL and the flow cookie. */
  async function start(returnTo?: string) {
    const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
    const response = await t.app.inject({ method: 'GET', url: `/console/oidc/login${query}` });
    expect(response.statusCode, response.body).toBe(302);
    const location = String(response.headers.location);
    const flowCookie = cookieOf(response.headers['set-cookie'], 'ugs_oidc_flow')!;
    expect(String(response.headers['set-cookie'])).toMatch(
      /ugs_oidc_flow=[^;]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax/,
    );
    return { location, flowCookie, state: new URL(location).searchParams.get('state')! };
  }

  /** Comes back from the provider with a code, as the browser is redirected. */
  async function callback(flow: { location: string; flowCookie: string; state: string }, query?: string) {
    const code = idp.codeFor(flow.location);
    return t.app.inject({
      method: 'GET',
      url: `/console/oidc/callback?${query ?? `state=${flow.state}&code=${code}&iss=${encodeURIComponent(idp.issuer)}`}`,
      headers: { cookie: flow.flowCookie },
    });
  }

  async function signInWith(make: (tools: IdTokenTools) => Promise<string>, returnTo?: string) {
    idp.answerWith(make);
    const flow = await start(returnTo);
    return { flow, response: await callback(flow) };
  }

  const admin = (tools: IdTokenTools, extra = {}) =>
    tools.sign(tools.claims({ email: 'ada@example.com', groups: ['/ugs/admins'], ...extra }));

  it('signs in a person whose ID token checks out, through a redirect URI built from the public URL, not Host', async () => {
    idp.answerWith(admin);
    const flow = await start();
    const authorization = new URL(flow.location);
    expect(authorization.origin).toBe(idp.issuer);
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: `${t.runtime.publicUrl()}/console/oidc/callback`,
      code_challenge_method: 'S256',
      scope: 'openid email',
    });
    const forged = await t.app.inject({
      method: 'GET',
      url: '/console/oidc/login',
      headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' },
    });
    expect(new URL(String(forged.headers.location)).searchParams.get('redirect_uri')).toBe(
      `${t.runtime.publicUrl()}/console/oidc/callback`,
    );

    const response = await callback(flow);
    expect(response.statusCode, response.body).toBe(303);
    expect(response.headers.location).toBe('/console/');
    const session = cookieOf(response.headers['set-cookie'], 'ugs_console');
    expect(String(response.headers['set-cookie'])).toContain('ugs_oidc_flow=; Path=/; Max-Age=0');
    // The client authenticated with HTTP Basic, each part form-encoded (RFC 6749 §2.3.1), and sent the PKCE verifier.
    const token = idp.tokenRequests.at(-1)!;
    expect(token.authorization).toBe(
      `Basic ${Buffer.from('ugs-console:client+secret%3A+with+a+colon').toString('base64')}`,
    );
    expect(token.form.get('code_verifier')).toMatch(/^[\w-]{43}$/);
    expect(token.form.get('redirect_uri')).toBe(`${t.runtime.publicUrl()}/console/oidc/callback`);

    const current = await t.app.inject({ method: 'GET', url: '/console/session', headers: { cookie: session! } });
    expect(current.json().session).toMatchObject({
      api_token: null,
      person: { issuer: idp.issuer, sub: 'person-1', email: 'ada@example.com' },
      scope: 'admin',
      environment: 'Customer',
    });
    expect(current.json().sign_in).toEqual({ api_token: false, identity_provider: true });
  });

  it('refuses a replayed state: a state is used once', async () => {
    const { flow, response } = await signInWith(admin);
    expect(response.statusCode).toBe(303);
    const again = await callback(flow);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('already used');
    expect(cookieOf(again.headers['set-cookie'], 'ugs_console')).toBeUndefined();
  });

  it('refuses a state that comes back to another browser (no flow cookie, or another one)', async () => {
    idp.answerWith(admin);
    const flow = await start();
    const other = await start();
    const response = await callback({ ...flow, flowCookie: other.flowCookie });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('started in another browser');
    expect(idp.tokenRequests.filter((request) => request.form.get('code') === idp.codeFor(flow.location))).toEqual([]);
  });

  const refusals: [string, (tools: IdTokenTools) => Promise<string>, string][] = [
    ['a wrong nonce', (tools) => tools.sign(tools.claims({ groups: ['/ugs/admins'], nonce: 'another' })), 'its nonce'],
    [
      'another audience',
      (tools) => tools.sign(tools.claims({ groups: ['/ugs/admins'], aud: 'another-client' })),
      'for another audience',
    ],
    [
      'several audiences whose authorized party is another client',
      (tools) => tools.sign(tools.claims({ groups: ['/ugs/admins'], aud: [CLIENT_ID, 'other'], azp: 'other' })),
      'another party',
    ],
    [
      'another issuer',
      (tools) => tools.sign(tools.claims({ groups: ['/ugs/admins'], iss: 'https://idp.evil.example' })),
      'from another issuer',
    ],
    [
      'an expired token',
      (tools) => {
        const past = Math.floor(Date.now() / 1000) - 3600;
        return tools.sign(tools.claims({ groups: ['/ugs/admins'], iat: past - 600, exp: past }));
      },
      'it has expired',
    ],
    [
      'alg none',
      async (tools) => tools.unsigned(tools.claims({ groups: ['/ugs/admins'] })),
      'algorithm that is not allowed',
    ],
    [
      'an algorithm off the allow-list (HS256 under the client secret)',
      (tools) => tools.signHmac(tools.claims({ groups: ['/ugs/admins'] }), 'client secret: with a colon'),
      'algorithm that is not allowed',
    ],
  ];
  it.each(refusals)('refuses an ID token with %s, with a page that says why', async (_name, make, reason) => {
    const { response } = await signInWith(make);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toContain(reason);
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
    expect(cookieOf(response.headers['set-cookie'], 'ugs_console')).toBeUndefined();
  });

  it.each([
    'https://evil.example/console/',
    '//evil.example/console/',
    '/\\evil.example',
    '/console/../../evil',
    'javascript:alert(1)',
    '/api/admin/api_tokens',
  ])('lands on the console, never elsewhere, for the return URL %s', async (returnTo) => {
    const { response } = await signInWith(admin, returnTo);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/console/');
  });

  it('returns to the console page the sign-in started from', async () => {
    const { response } = await signInWith(admin, '/console/groups?q=acme');
    expect(response.headers.location).toBe('/console/groups?q=acme');
  });

  it('refuses a person whose groups map to nothing, with a page, and audits the refusal under their (issuer, sub)', async () => {
    const { response } = await signInWith((tools) =>
      tools.sign(tools.claims({ sub: 'nobody-1', email: 'nobody@example.com', groups: ['marketing'] })),
    );
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('You have no access to this console');
    expect(response.body).toContain('None of this account');
    const google = await signInWith((tools) => tools.sign(tools.claims({ sub: 'google-1', email: 'g@example.com' })));
    expect(google.response.statusCode).toBe(403);
    expect(google.response.body).toContain('sent no &#34;groups&#34; claim');

    const events = await t.runtime.services.audit.listAuditEvents(await adminCaller(t), {
      action: 'console_session.refused',
      person: { issuer: idp.issuer, subject: 'nobody-1' },
      limit: 10,
    });
    expect(events.items.map((event) => event.actor)).toEqual([
      { type: 'person', issuer: idp.issuer, subject: 'nobody-1', email: 'nobody@example.com' },
    ]);
  });

  it('refuses token sign-in when it is switched off', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/console/session',
      payload: { api_token: 'ugs_live_' + '0'.repeat(64) },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toMatchObject({ code: 'token_sign_in_off' });
  });

  it('gives read access no write and no group token, and records a write by a person under their (issuer, sub)', async () => {
    const signIn = async (groups: string[], sub: string) => {
      const { response } = await signInWith((tools) =>
        tools.sign(tools.claims({ sub, email: `${sub}@example.com`, groups })),
      );
      const cookie = cookieOf(response.headers['set-cookie'], 'ugs_console')!;
      const csrf = (await t.app.inject({ method: 'GET', url: '/console/session', headers: { cookie } })).json().session
        .csrf_token as string;
      return (method: string, url: string, body?: unknown) =>
        t.app.inject({
          method: method as 'GET',
          url,
          headers: { cookie, 'x-csrf-token': csrf },
          ...(body === undefined ? {} : { payload: body as object }),
        });
    };
    const admin = await signIn(['/ugs/admins'], 'admin-1');
    const created = await admin('GET', '/api/user?user_group_id=acme&name=Acme');
    expect(created.statusCode, created.body).toBe(200);
    const renamed = await admin('PUT', '/api/user', { user_group_id: 'acme', name: 'Acme Corp' });
    expect(renamed.statusCode, renamed.body).toBe(200);

    const reader = await signIn(['ugs-readers'], 'reader-1');
    const list = await reader('GET', '/api/admin/user_groups');
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().user_groups[0]).not.toHaveProperty('token');
    const write = await reader('PUT', '/api/user', { user_group_id: 'acme', name: 'Mine' });
    expect(write.statusCode).toBe(403);
    expect(write.json().error).toMatchObject({ code: 'insufficient_scope' });
    const testing = await reader('GET', '/api/admin/user_groups?environment=Testing');
    expect(testing.statusCode).toBe(403);
    expect((await reader('POST', '/api/admin/api_tokens', { name: 'mine', scope: 'admin' })).statusCode).toBe(403);

    const filtered = await t.app.inject({
      method: 'GET',
      url: `/api/admin/audit_events?person_issuer=${encodeURIComponent(idp.issuer)}&person_sub=admin-1&action=user_group.updated`,
      headers: { authorization: `Token ${t.tokens.default.Customer.admin}` },
    });
    expect(filtered.statusCode, filtered.body).toBe(200);
    expect(filtered.json().audit_events).toEqual([
      expect.objectContaining({
        action: 'user_group.updated',
        actor: { type: 'person', issuer: idp.issuer, sub: 'admin-1', email: 'admin-1@example.com' },
      }),
    ]);
    const half = await t.app.inject({
      method: 'GET',
      url: '/api/admin/audit_events?person_sub=admin-1',
      headers: { authorization: `Token ${t.tokens.default.Customer.admin}` },
    });
    expect(half.statusCode).toBe(400);
    expect(half.json().error).toMatchObject({ code: 'invalid_field', field: 'person_issuer' });
  });

  it("lets an admin list a person's sessions and end one, which is refused from its next request", async () => {
    const { response } = await signInWith((tools) =>
      tools.sign(tools.claims({ sub: 'leaver-1', email: 'leaver@example.com', groups: ['/ugs/admins'] })),
    );
    const cookie = cookieOf(response.headers['set-cookie'], 'ugs_console')!;
    const asAdmin = (method: 'GET' | 'DELETE', url: string) =>
      t.app.inject({ method, url, headers: { authorization: `Token ${t.tokens.default.Customer.admin}` } });
    const listed = await asAdmin(
      'GET',
      `/api/admin/console_sessions?person_issuer=${encodeURIComponent(idp.issuer)}&person_sub=leaver-1`,
    );
    expect(listed.statusCode, listed.body).toBe(200);
    const sessions = listed.json().console_sessions as { id: number; sub: string; email: string }[];
    expect(sessions.map(({ sub, email }) => ({ sub, email }))).toEqual([
      { sub: 'leaver-1', email: 'leaver@example.com' },
    ]);
    // Another workspace's admin sees none of them.
    const other = await t.app.inject({
      method: 'GET',
      url: '/api/admin/console_sessions',
      headers: { authorization: `Token ${t.tokens.other.Customer.admin}` },
    });
    expect(other.json().console_sessions).toEqual([]);
    expect((await asAdmin('DELETE', `/api/admin/console_sessions/${sessions[0]!.id}`)).statusCode).toBe(200);
    expect((await asAdmin('DELETE', `/api/admin/console_sessions/${sessions[0]!.id}`)).statusCode).toBe(404);
    const after = await t.app.inject({ method: 'GET', url: '/console/session', headers: { cookie } });
    expect(after.statusCode).toBe(401);
  });

  it("lets an admin end all of a person's sessions at once, each audited, and no one else's", async () => {
    const signedIn = async (sub: string, groups = ['/ugs/admins']) => {
      const { response } = await signInWith((tools) =>
        tools.sign(tools.claims({ sub, email: `${sub}@example.com`, groups })),
      );
      return cookieOf(response.headers['set-cookie'], 'ugs_console')!;
    };
    const sessionOf = (cookie: string) => t.app.inject({ method: 'GET', url: '/console/session', headers: { cookie } });
    const leaving = [await signedIn('leaver-2'), await signedIn('leaver-2')];
    const staying = await signedIn('stayer-2');
    const reader = await signedIn('reader-2', ['ugs-readers']);
    const asAdmin = (url: string) =>
      t.app.inject({ method: 'DELETE', url, headers: { authorization: `Token ${t.tokens.default.Customer.admin}` } });
    const person = (sub: string) => `person_issuer=${encodeURIComponent(idp.issuer)}&person_sub=${sub}`;

    const half = await asAdmin('/api/admin/console_sessions?person_sub=leaver-2');
    expect(half.statusCode).toBe(400);
    expect(half.json().error).toMatchObject({ field: 'person_issuer' });
    // A person with read access may not end anyone's sessions.
    const csrf = (await sessionOf(reader)).json().session.csrf_token as string;
    const refused = await t.app.inject({
      method: 'DELETE',
      url: `/api/admin/console_sessions?${person('leaver-2')}`,
      headers: { cookie: reader, 'x-csrf-token': csrf },
    });
    expect(refused.statusCode).toBe(403);
    for (const cookie of leaving) expect((await sessionOf(cookie)).statusCode).toBe(200);

    const endedByTokens = async () => {
      const audit = await t.app.inject({
        method: 'GET',
        url: '/api/admin/audit_events?action=console_session.ended&limit=100',
        headers: { authorization: `Token ${t.tokens.default.Customer.admin}` },
      });
      return (audit.json().audit_events as { actor: { type: string } }[]).filter(
        (event) => event.actor.type === 'api_token',
      ).length;
    };
    const endedBefore = await endedByTokens();
    const ended = await asAdmin(`/api/admin/console_sessions?${person('leaver-2')}`);
    expect(ended.statusCode, ended.body).toBe(200);
    expect(ended.json()).toEqual({ success: 1, ended: 2 });
    for (const cookie of leaving) expect((await sessionOf(cookie)).statusCode).toBe(401);
    expect((await sessionOf(staying)).statusCode).toBe(200);
    expect((await asAdmin(`/api/admin/console_sessions?${person('leaver-2')}`)).json()).toEqual({
      success: 1,
      ended: 0,
    });

    expect(await endedByTokens()).toBe(endedBefore + 2);
  });
});
