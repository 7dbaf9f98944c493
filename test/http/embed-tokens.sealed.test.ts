// Embed tokens (docs/api.md#embed-tokens): each environment its own issuer and keys, per-view properties that only add,
// a bounded set of published keys, discovery that does not tell workspaces apart, and one signature
// (low S) per token. Checked against the published documents with jsonwebtoken, not the signer's jose.
import jwt from 'jsonwebtoken';
import { beforeAll, describe, expect, it } from 'vitest';
import { injectClient, type ApiResponse, type Client } from '../support/http-client.js';
import { independentlyVerified, type Jwk } from '../support/jwks-verifier.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError, expectUnchanged } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller } from '../support/callers.js';
import { CURRENT_KEY_HELD_MS } from '../../src/domain/signing-keys/signing-keys.service.js';

const PUBLIC_URL = 'http://ugs.test';
const EMBED_PATH = '/api/user/embed_token';
const VERIFY_PATH = '/api/user/verify';
const ROTATE_PATH = '/api/admin/signing_keys/rotate';
const ISSUERS = { Customer: `${PUBLIC_URL}/w/default`, Testing: `${PUBLIC_URL}/w/default/testing` } as const;
type Environment = keyof typeof ISSUERS;

// P-256's group order: (r, s) and (r, n - s) are both valid ECDSA signatures of one message.
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

const sOf = (token: string) =>
  BigInt(`0x${Buffer.from(token.split('.')[2]!, 'base64url').subarray(32).toString('hex')}`);
const isHighS = (token: string) => sOf(token) > P256_ORDER / 2n;

/** The same token with the other S of its signature: a second valid signature of the same claims. */
function flippedS(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const bytes = Buffer.from(signature, 'base64url');
  const s = P256_ORDER - sOf(token);
  Buffer.from(s.toString(16).padStart(64, '0'), 'hex').copy(bytes, 32);
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

/** One request through inject, as `method url` with an API token and a JSON body. */
function call(t: TestApp, method: 'GET' | 'POST', path: string, token?: string, body?: unknown): Promise<ApiResponse> {
  const client: Client = injectClient(t.app);
  return client({ method, path, ...(token === undefined ? {} : { token }), ...(body === undefined ? {} : { body }) });
}

const kidOf = (token: string) => jwt.decode(token, { complete: true })!.header.kid!;

describe('embed tokens, sealed by environment', () => {
  let t: TestApp;
  let now = Date.now();

  beforeAll(async () => {
    t = await createTestApp({ clock: () => new Date(now).toISOString(), publicUrl: () => PUBLIC_URL });
    return () => t.close();
  });

  const token = (environment: Environment, scope: 'read' | 'admin' = 'read') => t.tokens.default[environment][scope];
  const ok = (res: ApiResponse) => {
    expect(res.status, res.raw).toBe(200);
    return res.body;
  };
  const jwks = async (issuer: string) =>
    ok(await call(t, 'GET', `${issuer.slice(PUBLIC_URL.length)}/.well-known/jwks.json`)).keys as Jwk[];
  const seed = async (environment: Environment, input: Record<string, unknown> = {}) => {
    const id = uniqueId('sealed');
    await t.runtime.services.userGroups.getOrCreateUserGroup(await adminCaller(t, { environment }), {
      userGroupId: id,
      ...input,
    });
    return id;
  };
  const mint = async (environment: Environment, body: Record<string, unknown>) =>
    ok(await call(t, 'POST', EMBED_PATH, token(environment), body)).embed_token as string;

  it("issues each environment's tokens under its own issuer and keys: neither verifies under the other's", async () => {
    const minted = {
      Customer: await mint('Customer', { user_group_id: await seed('Customer') }),
      Testing: await mint('Testing', { user_group_id: await seed('Testing'), embed_id: 'board' }),
    };
    for (const environment of ['Customer', 'Testing'] as const) {
      const issuer = ISSUERS[environment];
      const other = ISSUERS[environment === 'Customer' ? 'Testing' : 'Customer'];
      const configuration = await call(t, 'GET', `${issuer.slice(PUBLIC_URL.length)}/.well-known/openid-configuration`);
      expect(ok(configuration)).toEqual({
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        id_token_signing_alg_values_supported: ['ES256'],
        introspection_endpoint: `${issuer}/introspect`,
      });
      expect(configuration.headers['cache-control']).toBe('public, max-age=300');
      const own = minted[environment];
      expect(independentlyVerified(own, await jwks(issuer), { issuer })).toMatchObject({ iss: issuer });
      const otherKeys = await jwks(other);
      expect(otherKeys.map((key) => key.kid)).not.toContain(kidOf(own));
      expect(() => independentlyVerified(own, otherKeys, { issuer: other })).toThrow(/not in the JWKS/);
      // Online: the token's own environment verifies it, the other refuses it.
      expect(ok(await call(t, 'POST', VERIFY_PATH, token(environment), { token: own })).embed).toBeDefined();
      expectError(
        await call(t, 'POST', VERIFY_PATH, token(environment === 'Customer' ? 'Testing' : 'Customer'), { token: own }),
        404,
        'user_group_not_found',
      );
    }
  });

  it("rotates only the admin token's own environment's key; either environment's keys can be listed", async () => {
    await mint('Customer', { user_group_id: await seed('Customer') });
    await mint('Testing', { user_group_id: await seed('Testing') });
    const customerBefore = await jwks(ISSUERS.Customer);
    const rotation = ok(await call(t, 'POST', ROTATE_PATH, token('Testing', 'admin')));
    expect(await jwks(ISSUERS.Customer)).toEqual(customerBefore);
    expect((await jwks(ISSUERS.Testing))[0]!.kid).toBe(rotation.current.kid);
    expect(customerBefore.map((key) => key.kid)).not.toContain(rotation.current.kid);
    expect(kidOf(await mint('Customer', { user_group_id: await seed('Customer') }))).toBe(customerBefore[0]!.kid);
    expect(kidOf(await mint('Testing', { user_group_id: await seed('Testing') }))).toBe(rotation.current.kid);

    const listed = ok(await call(t, 'GET', '/api/admin/signing_keys?environment=Customer', token('Testing', 'admin')));
    expect(listed.signing_keys.map((key: { kid: string }) => key.kid)).toEqual(customerBefore.map((key) => key.kid));
    const events = ok(
      await call(t, 'GET', '/api/admin/audit_events?action=signing_key.rotated', token('Testing', 'admin')),
    ).audit_events as Array<{ environment: string; changes: { kid: { after: string } } }>;
    expect(events.find((event) => event.changes.kid.after === rotation.current.kid)?.environment).toBe('Testing');
  });

  it('refuses per-view properties that would override what the group or an ancestor sets, changing nothing', async () => {
    const parent = await seed('Customer', { properties: { tenant: 'acme', region: null } });
    const child = await seed('Customer', { parentUserGroupId: parent, properties: { plan: 'pro' } });
    for (const key of ['tenant', 'region', 'plan']) {
      expectError(
        await expectUnchanged(t, () =>
          call(t, 'POST', EMBED_PATH, token('Customer'), { user_group_id: child, properties: { view: 1, [key]: 'x' } }),
        ),
        400,
        'invalid_field',
        `properties.${key}`,
      );
    }
    const added = await mint('Customer', { user_group_id: child, properties: { view: 'q3' } });
    expect((jwt.decode(added) as jwt.JwtPayload).ugs.properties).toEqual({
      tenant: 'acme',
      region: null,
      plan: 'pro',
      view: 'q3',
    });
  });

  it('answers /.well-known of a workspace that does not exist as of one with no key yet', async () => {
    for (const suffix of ['', '/testing']) {
      for (const workspace of ['other', 'nowhere']) {
        // `other` exists and has no key yet (nothing is minted there); `nowhere` does not exist.
        const keys = await call(t, 'GET', `/w/${workspace}${suffix}/.well-known/jwks.json`);
        expect({ status: keys.status, body: keys.body, cache: keys.headers['cache-control'] }).toEqual({
          status: 200,
          body: { keys: [] },
          cache: 'public, max-age=300',
        });
        const issuer = `${PUBLIC_URL}/w/${workspace}${suffix}`;
        const configuration = await call(t, 'GET', `/w/${workspace}${suffix}/.well-known/openid-configuration`);
        expect({ body: ok(configuration), cache: configuration.headers['cache-control'] }).toEqual({
          body: {
            issuer,
            jwks_uri: `${issuer}/.well-known/jwks.json`,
            id_token_signing_alg_values_supported: ['ES256'],
            introspection_endpoint: `${issuer}/introspect`,
          },
          cache: 'public, max-age=300',
        });
      }
    }
  });

  it('signs low-S only, and refuses the high-S twin of a token issued since', async () => {
    now = Date.now();
    const group = await seed('Customer');
    for (let i = 0; i < 24; i += 1) {
      const minted = await mint('Customer', { user_group_id: group, expires_in: 60 });
      expect(isHighS(minted), minted).toBe(false);
      if (i === 0) {
        const twin = flippedS(minted);
        // The twin is a valid signature of the same claims for a verifier that does not check S ...
        expect(independentlyVerified(twin, await jwks(ISSUERS.Customer)).sub).toBe(group);
        // ... and the service refuses it, while the token itself verifies.
        expectError(
          await call(t, 'POST', VERIFY_PATH, token('Customer'), { token: twin }),
          404,
          'user_group_not_found',
        );
        expect(ok(await call(t, 'POST', VERIFY_PATH, token('Customer'), { token: minted })).embed).toBeDefined();
      }
    }
  });

  it('accepts a high-S token issued before the service began signing low-S, until it expires', async () => {
    const group = await seed('Customer');
    const realNow = now;
    // Issued (iat) before this database was migrated to low-S signing: as an older version's token may be.
    now = Date.parse('2020-01-01T00:00:00.000Z');
    try {
      const older = flippedS(await mint('Customer', { user_group_id: group, expires_in: 3600 }));
      expect(isHighS(older)).toBe(true);
      expect(ok(await call(t, 'POST', VERIFY_PATH, token('Customer'), { token: older })).user_group.provided_id).toBe(
        group,
      );
      now += 3_601_000;
      expectError(await call(t, 'POST', VERIFY_PATH, token('Customer'), { token: older }), 404, 'user_group_not_found');
    } finally {
      now = realNow;
    }
  });
});

describe('the published signing keys of an issuer', () => {
  let t: TestApp;
  let now = Date.parse('2026-11-26T10:00:00.000Z');

  beforeAll(async () => {
    t = await createTestApp({ clock: () => new Date(now).toISOString(), publicUrl: () => PUBLIC_URL });
    return () => t.close();
  });

  const admin = (environment: Environment = 'Customer') => t.tokens.default[environment].admin;
  const kids = async (issuer = ISSUERS.Customer) =>
    ((await call(t, 'GET', `${issuer.slice(PUBLIC_URL.length)}/.well-known/jwks.json`)).body.keys as Jwk[]).map(
      (key) => key.kid,
    );

  it('are at most 32: a rotation beyond is refused until the oldest retires, unless forced, which drops the oldest and its tokens', async () => {
    const group = uniqueId('bounded');
    await t.runtime.services.userGroups.getOrCreateUserGroup(await adminCaller(t), { userGroupId: group });
    const read = t.tokens.default.Customer.read;
    const mint = async () =>
      (await call(t, 'POST', EMBED_PATH, read, { user_group_id: group, expires_in: 86_400 })).body
        .embed_token as string;
    const oldest = await mint();
    for (let rotation = 1; rotation < 32; rotation += 1) {
      now += 1000;
      expect((await call(t, 'POST', ROTATE_PATH, admin())).status).toBe(200);
    }
    const published = await kids();
    expect(published).toHaveLength(32);
    expect(published.at(-1)).toBe(kidOf(oldest));

    now += 1000;
    const refused = await expectUnchanged(t, () => call(t, 'POST', ROTATE_PATH, admin()));
    expectError(refused, 409, 'signing_key_limit');
    expect(refused.body.error.message).toMatch(/32/);
    expectError(await call(t, 'POST', ROTATE_PATH, admin(), { force: 'yes' }), 400, 'invalid_field', 'force');
    // Testing's issuer has keys of its own, far from the bound.
    expect((await call(t, 'POST', ROTATE_PATH, admin('Testing'))).status).toBe(200);

    const forced = await call(t, 'POST', ROTATE_PATH, admin(), { force: true });
    expect(forced.status, forced.raw).toBe(200);
    expect(forced.body.dropped.map((key: { kid: string }) => key.kid)).toEqual([kidOf(oldest)]);
    const after = await kids();
    expect(after).toHaveLength(32);
    expect(after[0]).toBe(forced.body.current.kid);
    expect(after).not.toContain(kidOf(oldest));
    expectError(await call(t, 'POST', VERIFY_PATH, read, { token: oldest }), 404, 'user_group_not_found');
    const events = (await call(t, 'GET', '/api/admin/audit_events?action=signing_key.rotated&limit=1', admin())).body
      .audit_events as Array<{ changes: Record<string, unknown> }>;
    expect(events[0]!.changes).toEqual({
      kid: { before: after[1], after: forced.body.current.kid },
      dropped_kids: { before: [kidOf(oldest)], after: [] },
    });

    // A day after the oldest remaining key retired, plus the bound for which another instance may
    // still have signed with it, it leaves the JWKS, and a rotation needs no force.
    expectError(await call(t, 'POST', ROTATE_PATH, admin()), 409, 'signing_key_limit');
    now += 86_400_000 - 30_000;
    expectError(await call(t, 'POST', ROTATE_PATH, admin()), 409, 'signing_key_limit');
    now += CURRENT_KEY_HELD_MS;
    const unforced = await call(t, 'POST', ROTATE_PATH, admin(), {});
    expect(unforced.status, unforced.raw).toBe(200);
    expect(unforced.body.dropped).toEqual([]);
  });
});
