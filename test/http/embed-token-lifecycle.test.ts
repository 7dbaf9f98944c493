// The embed-token lifecycle beyond expiry (docs/api.md#introspection-rfc-7662 and after), over a real socket: RFC 7662 introspection per case, single-use
// tokens (with the retry that must not turn a success into a failure), and refresh within a session.
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalRateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { apiToken, adminCaller } from '../support/callers.js';
import { expectError } from '../support/error-envelope.js';
import { makeGroup } from '../support/group-maker.js';
import { socketClient, type ApiResponse, type Client } from '../support/http-client.js';
import { expectSuccess } from '../support/success-envelope.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { userGroupApi, VERIFY_PATH } from '../support/user-group-api.js';
import { sample } from '../support/prometheus-text.js';
import { seedSchema } from './helpers.js';

const EMBED_PATH = '/api/user/embed_token';
const REFRESH_PATH = '/api/user/embed_token/refresh';
const INTROSPECT_PATH = '/w/default/introspect';
const FORM = 'application/x-www-form-urlencoded';
const APP_ORIGIN = 'https://app.example.com';
const START = Date.parse('2026-11-20T10:00:00.000Z');

type Ugs = {
  team_id: number;
  properties: Record<string, unknown>;
  origin: string | null;
  single_use?: true;
  session?: { id: string; ends_at: number };
};
const claimsOf = (token: string) => jwt.decode(token, { json: true }) as jwt.JwtPayload & { ugs: Ugs };

describe('embed-token lifecycle over a real socket', () => {
  let t: TestApp;
  let client: Client;
  let now = START;
  const advance = (seconds: number) => {
    now += seconds * 1000;
  };
  const as = (
    scope: 'read' | 'write' = 'read',
    environment: 'Customer' | 'Testing' = 'Customer',
    workspace: 'default' | 'other' = 'default',
  ) => apiToken(t, { scope, environment, workspace });

  const mint = async (body: Record<string, unknown>, token = as()) =>
    expectSuccess(await client({ method: 'POST', path: EMBED_PATH, token, body }));
  const introspect = (
    embedToken: string,
    options: { token?: string | null; path?: string; key?: string; extra?: string } = {},
  ) =>
    client({
      method: 'POST',
      path: options.path ?? INTROSPECT_PATH,
      ...(options.token === null ? {} : { token: options.token ?? as() }),
      rawBody: `token=${encodeURIComponent(embedToken)}${options.extra ?? ''}`,
      headers: { 'content-type': FORM, ...(options.key ? { 'idempotency-key': options.key } : {}) },
    });
  const active = async (embedToken: string, options: Parameters<typeof introspect>[1] = {}) => {
    const res = await introspect(embedToken, options);
    expect(res.status, res.raw).toBe(200);
    return res.body as { active: boolean } & Record<string, unknown>;
  };
  const refresh = (embedToken: string, origin?: string) =>
    client({
      method: 'POST',
      path: REFRESH_PATH,
      body: { token: embedToken },
      headers: origin === undefined ? {} : { origin },
    });

  beforeAll(async () => {
    t = await createTestApp({
      clock: () => new Date(now).toISOString(),
      // Listed for /api: the refresh route must still answer only the token's own origin.
      corsOrigins: ['https://evil.example.com'],
      rateLimit: { limiter: createLocalRateLimiter(() => 0), defaultPolicy: { perSecond: 1000, burst: 100_000 } },
    });
    client = socketClient(await t.listen());
  });
  afterAll(async () => {
    await t.close();
  });

  describe('introspection (RFC 7662)', () => {
    it('answers a valid token active with its claims, RFC 7662 member names and the service own claim', async () => {
      const group = await makeGroup(t, { properties: { region: 'eu' } });
      const minted = await mint({ user_group_id: group.provided_id, embed_id: 'sales', origin: APP_ORIGIN });
      const res = await introspect(minted.embed_token, { extra: '&token_type_hint=access_token' });
      expect(res.status, res.raw).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      const claims = claimsOf(minted.embed_token);
      expect(res.body).toEqual({
        active: true,
        token_type: 'ugs-embed+jwt',
        iss: 'http://127.0.0.1:8080/w/default',
        sub: group.provided_id,
        aud: 'sales',
        iat: claims.iat,
        nbf: claims.nbf,
        exp: claims.exp,
        jti: claims.jti,
        ugs: claims.ugs,
      });
      expect(res.body.ugs).toMatchObject({ team_id: group.team_id, properties: { region: 'eu' }, origin: APP_ORIGIN });
    });

    it('answers {"active":false}, and nothing else, for every token not currently valid', async () => {
      const inactive = async (embedToken: string, options: Parameters<typeof introspect>[1] = {}) =>
        expect(await active(embedToken, options)).toEqual({ active: false });

      const group = await makeGroup(t);
      const expiring = (await mint({ user_group_id: group.provided_id, expires_in: 60 })).embed_token as string;
      const rotating = await makeGroup(t);
      const beforeRotation = (await mint({ user_group_id: rotating.provided_id })).embed_token as string;
      const deleting = await makeGroup(t);
      const beforeDeletion = (await mint({ user_group_id: deleting.provided_id })).embed_token as string;
      const testing = await makeGroup(t, { as: { environment: 'Testing' } });
      const testingToken = (await mint({ user_group_id: testing.provided_id }, as('read', 'Testing')))
        .embed_token as string;
      const foreign = await makeGroup(t, { as: { workspace: 'other' } });
      const foreignToken = (await mint({ user_group_id: foreign.provided_id }, as('read', 'Customer', 'other')))
        .embed_token as string;

      expect((await active(expiring)).active).toBe(true);
      advance(61);
      await inactive(expiring);

      const api = userGroupApi(client, as('write'));
      expectSuccess(await api.rotate(rotating.token));
      await inactive(beforeRotation);
      expectSuccess(await api.remove({ user_group_id: deleting.provided_id }));
      await inactive(beforeDeletion);

      // Forged: another payload under the signature, another signature, no JWS at all, a group token.
      const fresh = (await mint({ user_group_id: group.provided_id })).embed_token as string;
      const [header, payload, signature] = fresh.split('.') as [string, string, string];
      const otherPayload = Buffer.from(JSON.stringify({ ...claimsOf(fresh), sub: 'someone-else' })).toString(
        'base64url',
      );
      await inactive(`${header}.${otherPayload}.${signature}`);
      await inactive(`${header}.${payload}.${Buffer.alloc(64, 7).toString('base64url')}`);
      await inactive('not-a-token');
      await inactive(group.token);

      // Another environment's and another workspace's tokens, each at this issuer with its own API token.
      await inactive(testingToken);
      await inactive(foreignToken);
      // ...and each active at its own issuer.
      expect(
        (await active(testingToken, { path: '/w/default/testing/introspect', token: as('read', 'Testing') })).active,
      ).toBe(true);
      expect(
        (await active(foreignToken, { path: '/w/other/introspect', token: as('read', 'Customer', 'other') })).active,
      ).toBe(true);
      expect((await active(fresh)).active).toBe(true);
    });

    it('refuses an unauthenticated caller, or one of another issuer, with 401 in the error envelope', async () => {
      const group = await makeGroup(t);
      const token = (await mint({ user_group_id: group.provided_id })).embed_token as string;
      const unauthenticated = await introspect(token, { token: null });
      expectError(unauthenticated, 401, 'unauthenticated');
      expect(unauthenticated.headers['www-authenticate']).toBe('Token');
      expectError(await introspect(token, { token: 'ugs_live_' + '0'.repeat(64) }), 401, 'invalid_api_token');
      expectError(await introspect(token, { token: as('read', 'Testing') }), 401, 'unauthenticated');
      expectError(await introspect(token, { token: as('read', 'Customer', 'other') }), 401, 'unauthenticated');
      expectError(await introspect(token, { path: '/w/nowhere/introspect' }), 401, 'unauthenticated');
    });

    it('takes a form only: JSON or no body is 415, a missing or repeated token 400', async () => {
      const group = await makeGroup(t);
      const token = (await mint({ user_group_id: group.provided_id })).embed_token as string;
      const json = await client({ method: 'POST', path: INTROSPECT_PATH, token: as(), body: { token } });
      expectError(json, 415, 'unsupported_media_type');
      expect(json.body.error.message).toContain('application/x-www-form-urlencoded');
      expectError(await client({ method: 'POST', path: INTROSPECT_PATH, token: as() }), 415, 'unsupported_media_type');
      const form = (rawBody: string) =>
        client({ method: 'POST', path: INTROSPECT_PATH, token: as(), rawBody, headers: { 'content-type': FORM } });
      expectError(await form('token_type_hint=x'), 400, 'missing_field', 'token');
      expectError(await form(`token=${token}&token=${token}`), 400, 'invalid_field', 'token');
    });
  });

  it("is named in the issuer's discovery document", async () => {
    const res = await client({ method: 'GET', path: '/w/default/testing/.well-known/openid-configuration' });
    expect(res.body.introspection_endpoint).toBe('http://127.0.0.1:8080/w/default/testing/introspect');
  });

  describe('single use', () => {
    it('is consumed by the first online verify: later verifies are 404 and introspection inactive', async () => {
      const group = await makeGroup(t);
      const minted = await mint({ user_group_id: group.provided_id, single_use: true });
      expect(claimsOf(minted.embed_token).ugs.single_use).toBe(true);
      const verify = () =>
        client({ method: 'POST', path: VERIFY_PATH, token: as(), body: { token: minted.embed_token } });
      expect(expectSuccess(await verify()).user_group.team_id).toBe(group.team_id);
      expectError(await verify(), 404, 'user_group_not_found');
      expect(await active(minted.embed_token)).toEqual({ active: false });
    });

    it('answers a retry with the same Idempotency-Key by the same API token as its first try, and no one else', async () => {
      const group = await makeGroup(t);
      const token = (await mint({ user_group_id: group.provided_id, single_use: true })).embed_token as string;
      const first = await active(token, { key: 'render-42' });
      expect(first.active).toBe(true);
      expect(await active(token, { key: 'render-42' })).toEqual(first);
      expect(await active(token, { key: 'render-43' })).toEqual({ active: false });
      expect(await active(token)).toEqual({ active: false });
      expect(await active(token, { key: 'render-42', token: as('write') })).toEqual({ active: false });
      expectError(await introspect(token, { key: 'bad key' }), 400, 'invalid_field', 'Idempotency-Key');
    });

    it('cannot have a session', async () => {
      const group = await makeGroup(t);
      const res = await client({
        method: 'POST',
        path: EMBED_PATH,
        token: as(),
        body: { user_group_id: group.provided_id, single_use: true, session_seconds: 600 },
      });
      expectError(res, 400, 'invalid_field', 'single_use');
      const orphan = await client({
        method: 'POST',
        path: EMBED_PATH,
        token: as(),
        body: { user_group_id: group.provided_id, inactivity_seconds: 600 },
      });
      expectError(orphan, 400, 'invalid_field', 'inactivity_seconds');
    });
  });

  describe('refresh within a session', () => {
    const sessionToken = async (extra: Record<string, unknown> = {}) => {
      const group = await makeGroup(t, { properties: { plan: 'pro' } });
      const minted = await mint({
        user_group_id: group.provided_id,
        embed_id: 'sales',
        origin: APP_ORIGIN,
        properties: { view: 'q3' },
        expires_in: 300,
        session_seconds: 3600,
        ...extra,
      });
      return { group, minted, token: minted.embed_token as string };
    };

    it('answers a new token: same group, embed, origin and per-view values, the group as it is now, a new exp', async () => {
      const { group, minted, token } = await sessionToken();
      expect(minted.session_ends_at).toBe(new Date((claimsOf(token).iat! + 3600) * 1000).toISOString());
      await t.runtime.services.userGroups.updateUserGroup(await adminCaller(t), {
        userGroupId: group.provided_id,
        properties: { plan: 'enterprise' },
      });
      advance(120);
      const res = await refresh(token, APP_ORIGIN);
      const body = expectSuccess(res);
      expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
      expect(res.headers.vary).toContain('Origin');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(body.session_ends_at).toBe(minted.session_ends_at);
      const before = claimsOf(token);
      const after = claimsOf(body.embed_token);
      expect(after.sub).toBe(group.provided_id);
      expect(after.aud).toBe('sales');
      expect(after.ugs.origin).toBe(APP_ORIGIN);
      expect(after.ugs.properties).toEqual({ plan: 'enterprise', view: 'q3' });
      expect(after.ugs.session!.id).toBe(before.ugs.session!.id);
      expect(after.exp).toBe(before.exp! + 120);
      expect(after.jti).not.toBe(before.jti);
      expect((await active(body.embed_token)).active).toBe(true);
      // A server (no Origin) may refresh too: Origin proves nothing outside a browser.
      expectSuccess(await refresh(body.embed_token));
    });

    it('carries a narrowed access rule from the next refresh on', async () => {
      const schemaId = await seedSchema(t);
      const { group, token } = await sessionToken();
      expect(claimsOf(token).ugs).toMatchObject({ access_rules: [] });
      const rule = { schema_id: schemaId, table: 'orders', column: 'region', op: 'eq', value: { property: 'plan' } };
      expectSuccess(
        await userGroupApi(client, as('write')).update({ user_group_id: group.provided_id, access_rules: [rule] }),
      );
      const refreshed = claimsOf(expectSuccess(await refresh(token, APP_ORIGIN)).embed_token as string);
      expect(refreshed.ugs).toMatchObject({
        access_rules: [{ schema_id: schemaId, table: 'orders', column: 'region', op: 'eq', value: 'pro' }],
      });
    });

    it('never gives a token past the session, and refuses once it has ended', async () => {
      const { token } = await sessionToken({ session_seconds: 400 });
      advance(250);
      const second = expectSuccess(await refresh(token, APP_ORIGIN));
      expect(claimsOf(second.embed_token).exp).toBe(claimsOf(token).iat! + 400);
      advance(151);
      expectError(await refresh(second.embed_token, APP_ORIGIN), 401, 'invalid_embed_token', 'token');
    });

    it('refuses past the inactivity interval, though the token itself is still live', async () => {
      const { token } = await sessionToken({ inactivity_seconds: 120 });
      advance(100);
      const refreshed = expectSuccess(await refresh(token, APP_ORIGIN)).embed_token as string;
      advance(121);
      expect((await active(refreshed)).active).toBe(true);
      expectError(await refresh(refreshed, APP_ORIGIN), 401, 'embed_session_ended', 'token');
    });

    it('ends with a rotation or deletion of the group, and refuses an expired token or one without a session', async () => {
      const api = userGroupApi(client, as('write'));
      const rotated = await sessionToken();
      expectSuccess(await api.rotate(rotated.group.token));
      expectError(await refresh(rotated.token, APP_ORIGIN), 401, 'invalid_embed_token');
      const deleted = await sessionToken();
      expectSuccess(await api.remove({ user_group_id: deleted.group.provided_id }));
      expectError(await refresh(deleted.token, APP_ORIGIN), 401, 'invalid_embed_token');

      const expired = await sessionToken();
      advance(301);
      expectError(await refresh(expired.token, APP_ORIGIN), 401, 'invalid_embed_token');

      const group = await makeGroup(t);
      const plain = (await mint({ user_group_id: group.provided_id, origin: APP_ORIGIN })).embed_token as string;
      expectError(await refresh(plain, APP_ORIGIN), 401, 'embed_session_ended');
      expectError(await refresh('not-a-token'), 401, 'invalid_embed_token');
    });

    it("answers a browser only from the token's own origin; a token without one not at all", async () => {
      const { token } = await sessionToken();
      for (const origin of ['https://evil.example.com', 'https://app.example.com:8443', 'null']) {
        const res = await refresh(token, origin);
        expectError(res, 403, 'origin_not_allowed', 'Origin');
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
      }
      const group = await makeGroup(t);
      const unpinned = (await mint({ user_group_id: group.provided_id, session_seconds: 600 })).embed_token as string;
      expectError(await refresh(unpinned, APP_ORIGIN), 403, 'origin_not_allowed', 'Origin');
      expectSuccess(await refresh(unpinned));

      // The preflight cannot see the token: it grants POST to any origin.
      const preflight = await client({
        method: 'OPTIONS',
        path: REFRESH_PATH,
        headers: {
          origin: 'https://anyone.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['access-control-allow-methods']).toBe('POST');
      expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain('content-type');
    });

    it('is rate-limited per session', async () => {
      const { token } = await sessionToken();
      const other = await sessionToken();
      const answers: ApiResponse[] = [];
      for (let attempt = 0; attempt < 11; attempt++) answers.push(await refresh(token, APP_ORIGIN));
      expect(answers.slice(0, 10).map((res) => res.status)).toEqual(Array(10).fill(200));
      expectError(answers[10]!, 429, 'rate_limited');
      expect(answers[10]!.headers['retry-after']).toBeDefined();
      // The page of the token's origin can read the refusal; another session is unaffected.
      expect(answers[10]!.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
      expectSuccess(await refresh(other.token, APP_ORIGIN));
    });
  });

  it('counts introspections, consumptions and refreshes in /metrics', async () => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const [name, labels] of [
      ['ugs_embed_token_introspections_total', { active: 'true' }],
      ['ugs_embed_token_introspections_total', { active: 'false' }],
      ['ugs_embed_tokens_consumed_total', {}],
      ['ugs_embed_token_consumptions_refused_total', {}],
      ['ugs_embed_token_refreshes_total', {}],
    ] as const)
      expect(sample(text, name, labels), name).toBeGreaterThan(0);
  });
});
