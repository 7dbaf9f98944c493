// What is kept per API token is kept per person for a person's console session: Idempotency-Key
// records (docs/api.md#safe-retries-idempotency-key) and the rate-limit bucket (docs/api.md#rate-limits).
// People sign in through a provider that answers with ID tokens the test shapes
// (test/support/id-token-server.ts), as in console-oidc.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRoleMapping } from '../../src/domain/console-sessions/oidc-roles.rules.js';
import { createLocalRateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { idTokenServerSettings, startIdTokenServer, type IdTokenServer } from '../support/id-token-server.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const CLIENT_ID = 'ugs-console';
/** Each caller's bucket: this many requests, and (the clock stands still) never one more. */
const BURST = 8;

describe("a person's idempotency keys and rate limit are their own", () => {
  let idp: IdTokenServer;
  let t: TestApp;

  beforeAll(async () => {
    idp = await startIdTokenServer(CLIENT_ID);
    t = await createTestApp({
      oidc: idTokenServerSettings(idp, {
        clientId: CLIENT_ID,
        clientSecret: 'client secret',
        roles: parseRoleMapping(
          JSON.stringify({ writers: [{ workspace: 'default', environment: '*', access: 'write' }] }),
        ),
      }),
      rateLimit: { limiter: createLocalRateLimiter(() => 0), defaultPolicy: { perSecond: 1 / 3600, burst: BURST } },
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

  /** Signs `sub` in through the provider; returns a caller of /api through the console session. */
  async function signIn(sub: string) {
    idp.answerWith((tools) => tools.sign(tools.claims({ sub, email: `${sub}@example.com`, groups: ['writers'] })));
    const login = await t.app.inject({ method: 'GET', url: '/console/oidc/login' });
    const location = String(login.headers.location);
    const state = new URL(location).searchParams.get('state')!;
    const back = await t.app.inject({
      method: 'GET',
      url: `/console/oidc/callback?state=${state}&code=${idp.codeFor(location)}&iss=${encodeURIComponent(idp.issuer)}`,
      headers: { cookie: cookieOf(login.headers['set-cookie'], 'ugs_oidc_flow')! },
    });
    const cookie = cookieOf(back.headers['set-cookie'], 'ugs_console');
    expect(cookie, back.body).toBeDefined();
    // The console reads its session (and CSRF token) first: a request of the person's bucket too.
    const session = await t.app.inject({ method: 'GET', url: '/console/session', headers: { cookie } });
    const csrf = session.statusCode === 200 ? (session.json().session.csrf_token as string) : '';
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, body?: object, key?: string) =>
      t.app.inject({
        method,
        url,
        headers: { cookie, 'x-csrf-token': csrf, ...(key === undefined ? {} : { 'idempotency-key': key }) },
        ...(body === undefined ? {} : { payload: body }),
      });
    return Object.assign(call, { sessionStatus: session.statusCode });
  }

  const asToken = (method: 'POST', url: string, body: object, key: string) =>
    t.app.inject({
      method,
      url,
      headers: { authorization: `Token ${t.tokens.default.Customer.admin}`, 'idempotency-key': key },
      payload: body,
    });

  it("replays a person's keyed write to that person alone, never to another person or an API token", async () => {
    const ada = await signIn('ada');
    const grace = await signIn('grace');
    const created = await ada('GET', '/api/user?user_group_id=keyed&name=Keyed');
    expect(created.statusCode, created.body).toBe(200);
    const rotation = { current_token: created.json().user_group.token as string };

    const first = await ada('POST', '/api/user', rotation, 'rotate-1');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await ada('POST', '/api/user', rotation, 'rotate-1');
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    // The same token as the first answer: the rotation ran once.
    expect(retry.json().user_group.token).toBe(first.json().user_group.token);
    const reused = await ada(
      'POST',
      '/api/user',
      { current_token: first.json().user_group.token as string },
      'rotate-1',
    );
    expect(reused.statusCode).toBe(409);
    expect(reused.json().error).toMatchObject({ code: 'idempotency_key_reused' });

    // Another person, and an API token, with the same key and request: it runs for them (the old token
    // is no longer current), nothing of Ada's is replayed.
    for (const other of [
      () => grace('POST', '/api/user', rotation, 'rotate-1'),
      () => asToken('POST', '/api/user', rotation, 'rotate-1'),
    ]) {
      const answer = await other();
      expect(answer.headers['idempotent-replayed']).toBeUndefined();
      expect(answer.statusCode).toBeGreaterThanOrEqual(400);
      expect(answer.body).not.toContain(first.json().user_group.token as string);
    }

    // A second session of Ada's finds her key: the records are the person's, not the session's.
    const adaAgain = await signIn('ada');
    const fromElsewhere = await adaAgain('POST', '/api/user', rotation, 'rotate-1');
    expect(fromElsewhere.headers['idempotent-replayed']).toBe('true');
    expect(fromElsewhere.json().user_group.token).toBe(first.json().user_group.token);
  });

  it('gives each person one rate-limit bucket, shared by their sessions and apart from everyone else', async () => {
    const linus = await signIn('linus');
    // The session's own read took the first request of the burst.
    for (let request = 1; request < BURST; request += 1)
      expect((await linus('GET', '/api/admin/user_groups')).statusCode).toBe(200);
    const limited = await linus('GET', '/api/admin/user_groups');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatchObject({ code: 'rate_limited' });
    // A new session of the same person draws from the same empty bucket.
    expect((await signIn('linus')).sessionStatus).toBe(429);
    // Another person, and an API token, have buckets of their own.
    const margaret = await signIn('margaret');
    expect(margaret.sessionStatus).toBe(200);
    expect((await margaret('GET', '/api/admin/user_groups')).statusCode).toBe(200);
    const token = await t.app.inject({
      method: 'GET',
      url: '/api/admin/user_groups',
      headers: { authorization: `Token ${t.tokens.default.Customer.admin}` },
    });
    expect(token.statusCode).toBe(200);
  });
});
