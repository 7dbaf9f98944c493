// Minting embed tokens, what they claim (checked by a JWT library other than the one that
// signs them, against the published JWKS), their bounds, and their online verification.
import jwt from 'jsonwebtoken';
import { beforeAll, describe, expect, it } from 'vitest';
import { independentlyVerified, type Jwk } from '../support/jwks-verifier.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  expectError,
  expectSuccess,
  expectUnchanged,
  seedCatalog,
  useClient,
  TRANSPORTS,
  type Catalog,
} from './helpers.js';
import type { Client } from '../support/http-client.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { makeGroup } from '../support/group-maker.js';
import { USER_PATH, VERIFY_PATH } from '../support/user-group-api.js';
import { CURRENT_KEY_HELD_MS } from '../../src/domain/signing-keys/signing-keys.service.js';

const EMBED_PATH = '/api/user/embed_token';
const JWKS_PATH = '/w/default/.well-known/jwks.json';

const headerOf = (token: string) => jwt.decode(token, { complete: true })!.header as jwt.JwtHeader & { typ: string };

for (const transport of TRANSPORTS) {
  describe(`embed tokens over ${transport.name}`, () => {
    const fixture = useClient(transport);
    let client: Client;
    let catalog: Catalog;
    const issuer = 'http://127.0.0.1:8080/w/default';
    const as = (
      scope: 'read' | 'write' | 'admin',
      environment: 'Customer' | 'Testing' = 'Customer',
      workspace: 'default' | 'other' = 'default',
    ) => apiToken(fixture.t, { scope, environment, workspace });
    const mint = (body: Record<string, unknown>, token = as('read')) =>
      client({ method: 'POST', path: EMBED_PATH, token, body });
    const verifyOnline = (token: string, apiTokenSecret = as('read')) =>
      client({ method: 'POST', path: VERIFY_PATH, token: apiTokenSecret, body: { token } });
    const jwks = async () => expectSuccessfulJson(await client({ method: 'GET', path: JWKS_PATH })).keys as Jwk[];

    function expectSuccessfulJson(res: Awaited<ReturnType<Client>>) {
      expect(res.status, res.raw).toBe(200);
      return res.body;
    }

    beforeAll(async () => {
      client = fixture.client;
      catalog = await seedCatalog(fixture.t);
    });

    it('mints a token every claim of which an independent verifier accepts against the published JWKS', async () => {
      const group = await makeGroup(fixture.t, { mapping: { [catalog.schemaA]: catalog.dsA.id } });
      await fixture.t.runtime.services.userGroups.updateUserGroup(
        {
          tenant: { workspaceId: fixture.t.runtime.defaultWorkspace.id, environment: 'Customer' },
          scope: 'admin',
          actor: { type: 'cli' },
          requestId: null,
        },
        { userGroupId: group.provided_id, properties: { region: 'eu', tier: 1 } },
      );
      const body = expectSuccess(
        await mint({
          user_group_id: group.provided_id,
          embed_id: 'sales-dashboard',
          origin: 'https://app.example.com',
          // Per-view values may only add keys: this test overrode the group's tier before.
          properties: { view: 'q3' },
        }),
      );
      expect(Object.keys(body).sort()).toEqual(['embed_token', 'expires_at', 'success']);
      const token = body.embed_token as string;
      expect(token).not.toContain(group.token);
      expect(headerOf(token)).toMatchObject({ alg: 'ES256', typ: 'ugs-embed+jwt', kid: expect.any(String) });

      const claims = independentlyVerified(token, await jwks(), { issuer, audience: 'sales-dashboard' });
      expect(claims).toEqual({
        iss: issuer,
        sub: group.provided_id,
        aud: 'sales-dashboard',
        iat: expect.any(Number),
        nbf: claims.iat,
        exp: claims.iat! + 3600,
        jti: expect.stringMatching(/^0\.[0-9a-f-]{36}$/),
        // The group's keyed name and token generation, which revocation documents match (docs/api.md).
        grp: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        gen: 0,
        ugs: {
          team_id: group.team_id,
          environment: 'Customer',
          workspace: 'default',
          properties: { region: 'eu', tier: 1, view: 'q3' },
          mapping: { [catalog.schemaA]: String(catalog.dsA.id) },
          is_demo_group: false,
          origin: 'https://app.example.com',
          access_rules: [],
        },
      });
      expect(Math.abs(claims.iat! * 1000 - Date.now())).toBeLessThan(60_000);
      expect(body.expires_at).toBe(new Date(claims.exp! * 1000).toISOString());
      expect(JSON.stringify(claims)).not.toContain(group.token);
    });

    it('publishes the keys and where to find them, publicly and cacheably', async () => {
      const configuration = await client({ method: 'GET', path: '/w/default/.well-known/openid-configuration' });
      expect(configuration.status).toBe(200);
      expect(configuration.body).toEqual({
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        id_token_signing_alg_values_supported: ['ES256'],
        introspection_endpoint: `${issuer}/introspect`,
      });
      expect(configuration.headers['cache-control']).toBe('public, max-age=300');
      const keys = await client({ method: 'GET', path: JWKS_PATH });
      expect(keys.headers['cache-control']).toBe('public, max-age=300');
      for (const key of keys.body.keys as Jwk[]) {
        expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      }
      // An unknown workspace answers as one with no key yet: it was a 404 that told it apart.
      const unknown = await client({ method: 'GET', path: '/w/nowhere/.well-known/jwks.json' });
      expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 200, body: { keys: [] } });
    });

    it('takes the default lifetime of an hour, and any from 60 s to a day', async () => {
      const group = await makeGroup(fixture.t);
      for (const expiresIn of [60, 86_400]) {
        const claims = jwt.decode(
          expectSuccess(await mint({ user_group_id: group.provided_id, expires_in: expiresIn })).embed_token,
        ) as jwt.JwtPayload;
        expect(claims.exp! - claims.iat!).toBe(expiresIn);
        expect(claims.aud).toBe('ugs-embed');
        expect((claims.ugs as { origin: unknown }).origin).toBeNull();
      }
      for (const expiresIn of [59, 86_401, 0, 3600.5, '3600']) {
        expectError(
          await expectUnchanged(fixture.t, () => mint({ user_group_id: group.provided_id, expires_in: expiresIn })),
          400,
          'invalid_field',
          'expires_in',
        );
      }
    });

    it('refuses what it cannot mint, changing nothing', async () => {
      const group = await makeGroup(fixture.t);
      const cases: Array<[Record<string, unknown>, number, string, string]> = [
        [{ user_group_id: uniqueId('absent') }, 404, 'user_group_not_found', ''],
        [{ user_group_id: group.provided_id, origin: 'https://app.example.com/path' }, 400, 'invalid_field', 'origin'],
        [{ user_group_id: group.provided_id, origin: 'ftp://app.example.com' }, 400, 'invalid_field', 'origin'],
        [{ user_group_id: group.provided_id, embed_id: '' }, 400, 'invalid_field', 'embed_id'],
        [{ user_group_id: group.provided_id, properties: [] }, 400, 'invalid_field', 'properties'],
        [
          { user_group_id: group.provided_id, properties: { big: 'x'.repeat(7 * 1024) } },
          400,
          'invalid_field',
          'properties',
        ],
        [{ user_group_id: group.provided_id, surprise: 1 }, 400, 'unknown_field', 'surprise'],
      ];
      for (const [body, status, code, field] of cases) {
        expectError(await expectUnchanged(fixture.t, () => mint(body)), status, code, field || undefined);
      }
    });

    it('is verified online while it holds: the group as now, with what the token was minted for', async () => {
      const group = await makeGroup(fixture.t);
      const token = expectSuccess(
        await mint({ user_group_id: group.provided_id, embed_id: 'd1', properties: { view: 'q3' } }),
      ).embed_token as string;
      const verified = expectSuccess(await verifyOnline(token));
      expect(verified.user_group).toMatchObject({
        team_id: group.team_id,
        provided_id: group.provided_id,
        token: group.token,
      });
      expect(verified.embed).toEqual({
        embed_id: 'd1',
        origin: null,
        properties: { view: 'q3' },
        access_rules: [],
        expires_at: expect.any(String),
      });
      // A group token still verifies as before, without an embed.
      expect(expectSuccess(await verifyOnline(group.token)).embed).toBeUndefined();
    });

    it("is refused by another environment's or workspace's verify, tampered with, or after its group token was rotated or its group deleted", async () => {
      const group = await makeGroup(fixture.t);
      const token = expectSuccess(await mint({ user_group_id: group.provided_id })).embed_token as string;
      expectError(await verifyOnline(token, as('read', 'Testing')), 404, 'user_group_not_found');
      expectError(await verifyOnline(token, as('read', 'Customer', 'other')), 404, 'user_group_not_found');
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const forged = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'someone-else' }),
      ).toString('base64url');
      expectError(await verifyOnline(`${header}.${forged}.${signature}`), 404, 'user_group_not_found');

      const rotated = expectSuccess(
        await client({ method: 'POST', path: USER_PATH, token: as('write'), body: { current_token: group.token } }),
      );
      expectError(await verifyOnline(token), 404, 'user_group_not_found');
      const fresh = expectSuccess(await mint({ user_group_id: group.provided_id })).embed_token as string;
      expect(jwt.decode(fresh, { json: true })!.jti).toMatch(/^1\./);
      expect(expectSuccess(await verifyOnline(fresh)).user_group.token).toBe(rotated.user_group.token);

      expectSuccess(
        await client({
          method: 'DELETE',
          path: USER_PATH,
          token: as('write'),
          body: { user_group_id: group.provided_id },
        }),
      );
      expectError(await verifyOnline(fresh), 404, 'user_group_not_found');
    });
  });
}

/** A request injected into `t`'s app: its status and JSON body. */
async function injectInto(t: TestApp, method: string, path: string, token?: string, body?: unknown) {
  const response = await t.app.inject({
    method: method as 'GET',
    url: path,
    headers: {
      ...(token ? { authorization: `Token ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: response.statusCode, body: response.json() as Record<string, any> };
}

describe('signing-key rotation', () => {
  let t: TestApp;
  let now = Date.parse('2026-11-24T10:00:00.000Z');
  const read = () => t.tokens.default.Customer.read;

  beforeAll(async () => {
    t = await createTestApp({ clock: () => new Date(now).toISOString() });
    return () => t.close();
  });

  const injectCall = (method: string, path: string, token?: string, body?: unknown) =>
    injectInto(t, method, path, token, body);

  it('signs with the new key at once, keeps the old one published until its tokens have expired (and the bound on signing with a held key), then drops it; audited', async () => {
    const group = await makeGroup(t);
    const mintNow = async (expiresIn: number) =>
      (await injectCall('POST', EMBED_PATH, read(), { user_group_id: group.provided_id, expires_in: expiresIn })).body
        .embed_token as string;
    const jwksNow = async () => (await injectCall('GET', JWKS_PATH)).body.keys as Jwk[];
    // This mint leaves the old key held in memory: the rotation through this instance drops it.
    const oldToken = await mintNow(86_400);
    const oldKid = headerOf(oldToken).kid;
    expect((await jwksNow()).map((key) => key.kid)).toEqual([oldKid]);

    const admin = t.tokens.default.Customer.admin;
    expect((await injectCall('POST', '/api/admin/signing_keys/rotate', read())).status).toBe(403);
    const rotation = await injectCall('POST', '/api/admin/signing_keys/rotate', admin);
    expect(rotation.status).toBe(200);
    const newKid = rotation.body.current.kid as string;
    expect(rotation.body.retired).toMatchObject({
      kid: oldKid,
      published_until: new Date(now + 86_400_000 + CURRENT_KEY_HELD_MS).toISOString(),
    });
    expect(headerOf(await mintNow(60)).kid).toBe(newKid);
    expect((await jwksNow()).map((key) => key.kid)).toEqual([newKid, oldKid]);
    // The old key's token still verifies, offline and online, for as long as it lives.
    now += 86_399_000;
    expect(independentlyVerified(oldToken, await jwksNow(), { clockTimestamp: Math.floor(now / 1000) }).sub).toBe(
      group.provided_id,
    );
    expect((await injectCall('POST', VERIFY_PATH, read(), { token: oldToken })).status).toBe(200);
    // Once every token the old key could have signed, here or on another instance, has expired, it leaves the JWKS.
    now += 1_000 + CURRENT_KEY_HELD_MS;
    expect((await jwksNow()).map((key) => key.kid)).toEqual([newKid]);
    expect((await injectCall('POST', VERIFY_PATH, read(), { token: oldToken })).status).toBe(404);

    const events = (await injectCall('GET', '/api/admin/audit_events?action=signing_key.rotated', admin)).body
      .audit_events as Array<Record<string, unknown>>;
    expect(events).toEqual([
      expect.objectContaining({ action: 'signing_key.rotated', changes: { kid: { before: oldKid, after: newKid } } }),
    ]);
  });
});

describe('signing-key rotation seen by another instance on the same database', () => {
  // The bound for which each app holds the current key it read, on the monotonic clock: short, so the
  // test waits it out; the services' clock below stands still meanwhile and is moved by hand.
  const HELD_MS = 2_000;
  // Half a second past a whole second: a token minted 1.4 s later has an iat past the retirement,
  // so only the held bound's extra publication covers it to its expiry.
  let now = Date.parse('2026-11-24T10:00:00.500Z');
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const clock = () => new Date(now).toISOString();
    a = await createTestApp({ clock, currentKeyHeldMs: HELD_MS });
    b = await createTestApp({ clock, currentKeyHeldMs: HELD_MS, database: a.db });
    return async () => {
      await b.close();
      await a.close();
    };
  });

  const read = (t: TestApp, environment: 'Customer' | 'Testing' = 'Customer') => t.tokens.default[environment].read;
  const mint = async (t: TestApp, userGroupId: string, environment: 'Customer' | 'Testing' = 'Customer') => {
    const minted = await injectInto(t, 'POST', EMBED_PATH, read(t, environment), {
      user_group_id: userGroupId,
      expires_in: 86_400,
    });
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
    const token = minted.body.embed_token as string;
    return { token, kid: headerOf(token).kid! };
  };
  const jwksOf = async (t: TestApp) => (await injectInto(t, 'GET', JWKS_PATH)).body.keys as Jwk[];
  const verifiedOnline = async (t: TestApp, token: string) =>
    (await injectInto(t, 'POST', VERIFY_PATH, read(t), { token })).status;

  it('two instances racing for the first key both sign with the one that won, made once', async () => {
    const group = await makeGroup(a, { as: { environment: 'Testing' } });
    const [onA, onB] = await Promise.all([
      mint(a, group.provided_id, 'Testing'),
      mint(b, group.provided_id, 'Testing'),
    ]);
    expect(onB.kid).toBe(onA.kid);
    const created = (
      await injectInto(a, 'GET', '/api/admin/audit_events?action=signing_key.created', a.tokens.default.Testing.admin)
    ).body.audit_events as unknown[];
    expect(created).toHaveLength(1);
  });

  it('the other instance may sign with the retired key within the bound, then with the new one; tokens of the old key verify online and offline until they expire', async () => {
    const group = await makeGroup(a);
    const oldKid = (await mint(a, group.provided_id)).kid;
    // B reads the current key now and holds it for HELD_MS.
    const heldFrom = performance.now();
    expect((await mint(b, group.provided_id)).kid).toBe(oldKid);
    const heldUntil = performance.now() + HELD_MS;

    const rotatedAt = now;
    const rotation = await injectInto(a, 'POST', '/api/admin/signing_keys/rotate', a.tokens.default.Customer.admin);
    expect(rotation.status).toBe(200);
    const newKid = rotation.body.current.kid as string;
    expect(rotation.body.retired).toMatchObject({
      kid: oldKid,
      published_until: new Date(rotatedAt + 86_400_000 + HELD_MS).toISOString(),
    });
    // The instance the rotation went through signs with the new key at once…
    expect((await mint(a, group.provided_id)).kid).toBe(newKid);
    // …the other, within the bound, may still sign with the old one: a token that lives a day from after the retirement.
    now += 1_400;
    const late = await mint(b, group.provided_id);
    expect(performance.now() - heldFrom, 'B minted within the bound').toBeLessThan(HELD_MS);
    expect(late.kid).toBe(oldKid);

    // Once the bound has passed, B reads the current key again: the new one, though the services' clock stood still.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, heldUntil - performance.now())));
    expect((await mint(b, group.provided_id)).kid).toBe(newKid);

    // The late token verifies on both instances, online and against either's JWKS, up to its last millisecond.
    const expiresAt = (jwt.decode(late.token) as jwt.JwtPayload).exp! * 1000;
    expect(expiresAt).toBeGreaterThan(rotatedAt + 86_400_000);
    now = expiresAt - 1;
    for (const t of [a, b]) {
      expect(await verifiedOnline(t, late.token)).toBe(200);
      const keys = await jwksOf(t);
      expect(keys.map((key) => key.kid)).toEqual([newKid, oldKid]);
      expect(independentlyVerified(late.token, keys, { clockTimestamp: Math.floor(now / 1000) }).sub).toBe(
        group.provided_id,
      );
    }
    // The old key leaves the JWKS once the last token it could have signed has expired.
    now = rotatedAt + 86_400_000 + HELD_MS;
    for (const t of [a, b]) {
      expect((await jwksOf(t)).map((key) => key.kid)).toEqual([newKid]);
      expect(await verifiedOnline(t, late.token)).toBe(404);
    }
  });
});
