// The admin console's sessions (docs/security.md "Admin console sessions"): only an admin
// API token opens one; the cookie is HttpOnly, SameSite=Strict and Secure over HTTPS; every request it
// authenticates carries the CSRF token; it ends after an hour idle, after eight hours, at sign-out and
// when its API token is revoked, on every instance; and every console page carries a strict CSP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/http/console/console.routes.js';
import { createLocalRateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { expectError } from '../http/helpers.js';
import { inject, type ApiRequest, type ApiResponse } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller, apiToken } from '../support/callers.js';

const START = Date.parse('2026-11-24T10:00:00.000Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('admin console sessions', () => {
  let now = START;
  const logs: string[] = [];
  let t: TestApp;
  /** A second instance on the same database, as behind a load balancer. */
  let other: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      clock: () => new Date(now).toISOString(),
      // A bucket that never refills: RateLimit-Remaining counts every request the token makes.
      rateLimit: { limiter: createLocalRateLimiter(() => 0), defaultPolicy: { perSecond: 1, burst: 100_000 } },
      log: { level: 'trace', destination: { write: (line: string) => void logs.push(line) } },
    });
    other = await createTestApp({ database: t.db, clock: () => new Date(now).toISOString() });
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  interface Session {
    cookie: string;
    csrf: string;
    signIn: ApiResponse;
  }

  async function signIn(app: TestApp = t, token = apiToken(t)): Promise<Session> {
    const signIn = await inject(app.app, { method: 'POST', path: '/console/session', body: { api_token: token } });
    expect(signIn.status, signIn.raw).toBe(200);
    const cookie = String(signIn.headers['set-cookie']).split(';', 1)[0]!;
    return { cookie, csrf: signIn.body.session.csrf_token, signIn };
  }

  /** A request with the session's cookie and, unless told otherwise, its CSRF token. */
  const withSession = (session: Session, request: ApiRequest, csrf: string | null = session.csrf): ApiRequest => ({
    ...request,
    headers: { cookie: session.cookie, ...(csrf === null ? {} : { 'x-csrf-token': csrf }), ...request.headers },
  });

  const schemas = async (app: TestApp) =>
    (await app.runtime.services.schemas.listSchemas(await adminCaller(app))).map((schema) => schema.name);

  describe('signing in', () => {
    it('needs a live admin API token: anything else gets the error envelope and no cookie', async () => {
      const caller = await adminCaller(t);
      const revoked = await t.runtime.services.apiTokens.createApiToken(caller, {
        name: uniqueId('revoked'),
        scope: 'admin',
      });
      await t.runtime.services.apiTokens.revokeApiToken(caller, revoked.record.id);
      const refusals: Array<[Partial<ApiRequest>, number, string, string | null]> = [
        [{ body: {} }, 400, 'missing_field', 'api_token'],
        [{ body: { api_token: apiToken(t), remember: true } }, 400, 'unknown_field', 'remember'],
        [{ body: { api_token: 'x'.repeat(10_000) } }, 400, 'invalid_field', 'api_token'],
        [{ body: { api_token: 42 } }, 400, 'invalid_field', 'api_token'],
        [{ rawBody: '{"api_token":' }, 400, 'invalid_json', null],
        [
          { rawBody: `api_token=${apiToken(t)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } },
          415,
          'unsupported_media_type',
          null,
        ],
        [{ body: { api_token: 'ugs_live_not-a-token' } }, 401, 'invalid_api_token', null],
        [{ body: { api_token: `ugs_live_${'0'.repeat(64)}` } }, 401, 'invalid_api_token', null],
        [{ body: { api_token: revoked.secret } }, 401, 'invalid_api_token', null],
        [{ body: { api_token: apiToken(t, { scope: 'read' }) } }, 403, 'insufficient_scope', null],
        [{ body: { api_token: apiToken(t, { scope: 'write' }) } }, 403, 'insufficient_scope', null],
        [
          { body: { api_token: apiToken(t, { environment: 'Testing', scope: 'write' }) } },
          403,
          'insufficient_scope',
          null,
        ],
      ];
      for (const [request, status, code, field] of refusals) {
        const refused = await inject(t.app, { method: 'POST', path: '/console/session', ...request });
        expectError(refused, status, code, field);
        expect(refused.headers['set-cookie'], refused.raw).toBeUndefined();
      }
    });

    it('sets an HttpOnly, SameSite=Strict cookie for the whole site that holds a session secret, not the token; Secure over HTTPS', async () => {
      const { signIn: plain } = await signIn();
      const cookie = String(plain.headers['set-cookie']);
      expect(cookie).toMatch(/^ugs_console=ucs_[0-9a-f]{64}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict$/);
      expect(cookie).not.toContain(apiToken(t));
      expect(plain.body.session).toEqual({
        api_token: { id: expect.any(Number), name: 'admin-Customer', scope: 'admin', environment: 'Customer' },
        csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        idle_expires_at: new Date(now + HOUR).toISOString(),
        expires_at: new Date(now + 8 * HOUR).toISOString(),
      });
      const viaTls = await inject(t.app, {
        method: 'POST',
        path: '/console/session',
        body: { api_token: apiToken(t) },
        headers: { 'x-forwarded-proto': 'https' },
      });
      // Over HTTPS the __Host- prefix: a browser takes it only from this host, Secure, Path=/, no Domain.
      const secure = String(viaTls.headers['set-cookie']);
      expect(secure).toMatch(
        /^__Host-ugs_console=ucs_[0-9a-f]{64}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict; Secure$/,
      );
      const secret = secure.slice(0, secure.indexOf(';'));
      const session = (headers: Record<string, string>) =>
        inject(t.app, { method: 'GET', path: '/console/session', headers }).then((res) => ({
          status: res.status,
          signedIn: res.body.session !== null,
        }));
      expect(await session({ cookie: secret, 'x-forwarded-proto': 'https' })).toEqual({ status: 200, signedIn: true });
      // Over HTTPS a cookie without the prefix (one a sibling subdomain could have set) is not read: the
      // request is one without a session cookie (200, session null: the sign-in page's state).
      expect(await session({ cookie: secret.replace('__Host-', ''), 'x-forwarded-proto': 'https' })).toEqual({
        status: 200,
        signedIn: false,
      });
      const signOut = await inject(t.app, {
        method: 'DELETE',
        path: '/console/session',
        headers: { cookie: secret, 'x-forwarded-proto': 'https', 'x-csrf-token': viaTls.body.session.csrf_token },
      });
      expect(String(signOut.headers['set-cookie'])).toBe(
        '__Host-ugs_console=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure',
      );
    });
  });

  describe('requests made with the session cookie', () => {
    it('act as the API token itself: its caller in the audit trail, its rate-limit bucket', async () => {
      const session = await signIn();
      const tokenId = session.signIn.body.session.api_token.id;
      const name = uniqueId('schema-by-console');
      const created = await inject(
        t.app,
        withSession(session, { method: 'POST', path: '/api/admin/schemas', body: { name } }),
      );
      expect(created.status, created.raw).toBe(200);
      const [event] = (
        await t.runtime.services.audit.listAuditEvents(await adminCaller(t), { action: 'schema.created', limit: 1 })
      ).items;
      expect(event).toMatchObject({
        actor: { type: 'api_token', apiTokenId: tokenId },
        changes: { name: { before: null, after: name } },
      });

      // One bucket: the cookie's requests and the token's own count down the same RateLimit-Remaining.
      const remaining = (response: ApiResponse) => Number(response.headers['ratelimit-remaining']);
      const byCookie = await inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' }));
      const byToken = await inject(t.app, { method: 'GET', path: '/api/admin/schemas', token: apiToken(t) });
      const byCookieAgain = await inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' }));
      expect([remaining(byToken), remaining(byCookieAgain)]).toEqual([
        remaining(byCookie) - 1,
        remaining(byCookie) - 2,
      ]);
    });

    it('are refused without the CSRF token, as a cross-site form POST would be sent, and change nothing', async () => {
      const session = await signIn();
      const intruder = await signIn();
      const name = uniqueId('csrf');
      const forged: ApiRequest[] = [
        // What a form on another site posts: a form encoding, the cookie, no custom header.
        {
          method: 'POST',
          path: '/api/admin/schemas',
          rawBody: `name=${name}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        },
        {
          method: 'POST',
          path: '/api/admin/schemas',
          rawBody: JSON.stringify({ name }),
          headers: { 'content-type': 'text/plain' },
        },
        { method: 'POST', path: '/api/admin/schemas', body: { name } },
        // GET /api/user creates: reads need the token too.
        { method: 'GET', path: `/api/user?user_group_id=${name}` },
        { method: 'DELETE', path: `/api/admin/api_tokens/${session.signIn.body.session.api_token.id}` },
      ];
      for (const request of forged) {
        expectError(
          await inject(t.app, withSession(session, request, null)),
          403,
          'invalid_csrf_token',
          'X-CSRF-Token',
        );
        expectError(
          await inject(t.app, withSession(session, request, intruder.csrf)),
          403,
          'invalid_csrf_token',
          'X-CSRF-Token',
        );
        expectError(await inject(t.app, withSession(session, request, '')), 403, 'invalid_csrf_token', 'X-CSRF-Token');
      }
      expectError(
        await inject(t.app, withSession(session, { method: 'DELETE', path: '/console/session' }, null)),
        403,
        'invalid_csrf_token',
        'X-CSRF-Token',
      );
      expect(await schemas(t)).not.toContain(name);
      const group = await inject(t.app, {
        method: 'GET',
        path: `/api/admin/user_groups?q=${name}`,
        token: apiToken(t),
      });
      expect(group.body.user_groups).toEqual([]);
      const still = await inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/api_tokens' }));
      expect(still.status, still.raw).toBe(200);
    });

    it('never reach past a bad cookie: unknown, malformed, repeated, or beside an Authorization header', async () => {
      const session = await signIn();
      const cases: Array<[Record<string, string>, number, string]> = [
        [{ cookie: `ugs_console=ucs_${'0'.repeat(64)}`, 'x-csrf-token': session.csrf }, 401, 'unauthenticated'],
        [{ cookie: 'ugs_console=%00%ff', 'x-csrf-token': session.csrf }, 401, 'unauthenticated'],
        [{ cookie: `ugs_console=${'a'.repeat(8_000)}`, 'x-csrf-token': session.csrf }, 401, 'unauthenticated'],
        [{ cookie: `${session.cookie}; ${session.cookie}`, 'x-csrf-token': session.csrf }, 401, 'unauthenticated'],
        [{ cookie: 'other=1' }, 401, 'unauthenticated'],
        // A credential header wins, and a malformed one is refused rather than replaced by the cookie.
        [
          { cookie: session.cookie, 'x-csrf-token': session.csrf, authorization: 'Basic dXNlcjpwYXNz' },
          401,
          'unauthenticated',
        ],
        [
          { cookie: session.cookie, 'x-csrf-token': session.csrf, authorization: `Token ugs_live_${'1'.repeat(64)}` },
          401,
          'invalid_api_token',
        ],
      ];
      for (const [headers, status, code] of cases) {
        expectError(await inject(t.app, { method: 'GET', path: '/api/admin/schemas', headers }), status, code);
      }
      expectError(
        await inject(t.app, {
          method: 'GET',
          path: '/console/session',
          headers: { cookie: `ugs_console=${'b'.repeat(100)}` },
        }),
        401,
        'unauthenticated',
      );
      // No session cookie at all is the sign-in page's normal state: an answer, not an error.
      for (const headers of [{}, { cookie: 'other=1' }] as Array<Record<string, string>>) {
        const none = await inject(t.app, { method: 'GET', path: '/console/session', headers });
        expect([none.status, none.body]).toEqual([200, { success: 1, session: null }]);
      }
      expectError(await inject(t.app, { method: 'DELETE', path: '/console/session' }), 401, 'unauthenticated');
      expectError(
        await inject(t.app, { method: 'GET', path: '/console/session?x=1', headers: { cookie: session.cookie } }),
        400,
        'unknown_field',
        'x',
      );
    });
  });

  describe('the end of a session', () => {
    it('comes after an hour without use, measured from its last use', async () => {
      const session = await signIn();
      const read = () => inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' }));
      now += 59 * MINUTE;
      expect((await read()).status).toBe(200);
      now += 59 * MINUTE; // used 59 minutes ago: still live
      expect((await read()).status).toBe(200);
      const current = await inject(t.app, withSession(session, { method: 'GET', path: '/console/session' }));
      expect(current.body.session.idle_expires_at).toBe(new Date(now + HOUR).toISOString());
      now += HOUR;
      expectError(await read(), 401, 'unauthenticated');
      expectError(
        await inject(t.app, withSession(session, { method: 'GET', path: '/console/session' })),
        401,
        'unauthenticated',
      );
    });

    it('comes eight hours after signing in, however much it is used', async () => {
      const session = await signIn();
      const read = () => inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' }));
      for (let hour = 0; hour < 16; hour++) {
        now += 30 * MINUTE;
        if (hour < 15) expect((await read()).status, `after ${(hour + 1) / 2} h`).toBe(200);
      }
      expectError(await read(), 401, 'unauthenticated');
    });

    it('comes at sign-out, on every instance, audited', async () => {
      const session = await signIn(t);
      const onOther = await inject(other.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' }));
      expect(onOther.status, onOther.raw).toBe(200);
      const signOut = await inject(other.app, withSession(session, { method: 'DELETE', path: '/console/session' }));
      expect([signOut.status, signOut.body]).toEqual([200, { success: 1 }]);
      expect(String(signOut.headers['set-cookie'])).toBe('ugs_console=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
      expectError(
        await inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' })),
        401,
        'unauthenticated',
      );
      expectError(
        await inject(t.app, withSession(session, { method: 'GET', path: '/console/session' })),
        401,
        'unauthenticated',
      );
      const actions = (await t.runtime.services.audit.listAuditEvents(await adminCaller(t), { limit: 2 })).items.map(
        (event) => event.action,
      );
      expect(actions).toEqual(['console_session.ended', 'console_session.created']);
    });

    it('comes at once when its API token is revoked, from another instance too', async () => {
      const caller = await adminCaller(t);
      const issued = await t.runtime.services.apiTokens.createApiToken(caller, {
        name: uniqueId('console-admin'),
        scope: 'admin',
      });
      const session = await signIn(t, issued.secret);
      expect((await inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' }))).status).toBe(
        200,
      );
      await other.runtime.services.apiTokens.revokeApiToken(caller, issued.record.id);
      expectError(
        await inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' })),
        401,
        'unauthenticated',
      );
    });
  });

  it('keeps the session secret, its CSRF token and the API token out of the logs', async () => {
    const session = await signIn();
    await inject(t.app, withSession(session, { method: 'GET', path: '/api/admin/schemas' }));
    await inject(t.app, withSession(session, { method: 'DELETE', path: '/console/session' }));
    const text = logs.join('');
    expect(text).toContain('/console/session');
    for (const secret of [session.cookie.split('=')[1]!, session.csrf, apiToken(t)]) expect(text).not.toContain(secret);
  });

  describe('the console pages', () => {
    /** A page or asset as the browser gets it (not JSON). */
    const get = async (path: string, method: 'GET' | 'POST' = 'GET') => {
      const response = await t.app.inject({ method, url: path });
      return { status: response.statusCode, headers: response.headers, raw: response.body };
    };

    const PAGES = [
      '/console',
      '/console/',
      '/console/groups',
      '/console/groups/1',
      '/console/groups/new',
      '/console/api-tokens',
      '/console/schemas',
      '/console/data-sources',
      '/console/webhooks',
      '/console/audit',
      '/console/signing-keys',
      '/console/status',
      '/console/no-such-page',
      // A path that does not decode: the page, whose router shows its not-found view.
      '/console/groups/%E0%A4%A',
    ];

    it('each carry the strict Content-Security-Policy: scripts and styles from this origin only, no inline code, no framing', async () => {
      expect(CONSOLE_CSP).not.toMatch(/unsafe-|\*|data:|http/);
      expect(CONSOLE_CSP).toContain("script-src 'self'");
      expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
      expect(CONSOLE_CSP).toContain("default-src 'none'");
      for (const path of PAGES) {
        const page = await get(path);
        expect([path, page.status, page.headers['content-type']]).toEqual([path, 200, 'text/html; charset=utf-8']);
        expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
        expect(page.headers['x-frame-options']).toBe('DENY');
        expect(page.headers['x-content-type-options']).toBe('nosniff');
        // Self-contained: every script and style the page names is served here, and none inline.
        expect(page.raw).not.toMatch(/<script(?![^>]*\bsrc="\/console\/)|<style|style="|https?:\/\//);
      }
    });

    it('serve their assets with the same headers, and a missing asset is a 404, never the page', async () => {
      const page = await get('/console/');
      const assets = [...page.raw.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((found) => found[1]!);
      expect(assets.some((path) => path.endsWith('.js'))).toBe(true);
      for (const path of assets) {
        const asset = await get(path);
        expect([path, asset.status, asset.headers['content-security-policy']]).toEqual([path, 200, CONSOLE_CSP]);
      }
      const missing = await inject(t.app, { method: 'GET', path: '/console/assets/missing.js' });
      expectError(missing, 404, 'not_found');
      expect(missing.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expectError(await inject(t.app, { method: 'POST', path: '/console/groups' }), 404, 'not_found');
    });
  });
});
