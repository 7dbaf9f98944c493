import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENTS, SCOPES, type Environment } from '../../src/domain/tenancy.js';
import { inject } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { ADMIN, adminCall, adminOk, ids } from './admin-helpers.js';
import type { Query } from '../support/paged-list.js';
import { expectError, expectSuccess, expectUnchanged, ISO_TIMESTAMP } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { issueApiToken } from '../support/api-token-issuer.js';
import { workspaceId, type As, type Workspace } from '../support/callers.js';
import { makeGroup } from '../support/group-maker.js';
import { VERIFY_PATH } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

const API_TOKEN = /^ugs_(live|test)_[0-9a-f]{64}$/;
const PREFIX: Record<Environment, string> = { Customer: 'ugs_live_', Testing: 'ugs_test_' };
const LISTED_FIELDS = ['created_at', 'environment', 'id', 'last_used_at', 'name', 'rate_limit', 'scope'];

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const revokePath = (id: number | string) => `${ADMIN.apiTokens}/${id}`;

/** Every live API token secret of the app that the test app issued, both workspaces. */
function issuedSecrets(t: TestApp): string[] {
  return Object.values(t.tokens).flatMap((set) => Object.values(set).flatMap((byScope) => Object.values(byScope)));
}

describe('the admin API token API', () => {
  const ctx = useTestApp();

  const create = (body: Record<string, unknown>, as?: As) =>
    adminCall(ctx.t, { method: 'POST', path: ADMIN.apiTokens, body, as });
  const list = async (query: Query = {}, as?: As) =>
    (await adminOk(ctx.t, { path: ADMIN.apiTokens, query, as })).api_tokens;
  const revoke = (id: number | string, as?: As) => adminCall(ctx.t, { method: 'DELETE', path: revokePath(id), as });

  /** A request any scope may make, proving the token's tenant: verify the token of a group seeded there. */
  async function verifyWith(secret: string, environment: Environment, workspace: Workspace = 'default') {
    const group = await makeGroup(ctx.t, { as: { environment, workspace } });
    const res = await inject(ctx.t.app, {
      method: 'POST',
      path: VERIFY_PATH,
      token: secret,
      body: { token: group.token },
    });
    return { res, group };
  }

  const GRID = ENVIRONMENTS.flatMap((environment) => SCOPES.map((scope) => ({ environment, scope })));

  describe('POST /api/admin/api_tokens', () => {
    it.each(GRID)(
      'creates a $scope token for $environment: the secret once, working at once',
      async ({ environment, scope }) => {
        const name = uniqueId(`${scope} for ${environment}`);
        const body = expectSuccess(await create({ name, scope, environment }));
        expect(body).toStrictEqual({
          success: 1,
          api_token: {
            id: expect.any(Number),
            name,
            scope,
            environment,
            rate_limit: null,
            created_at: expect.stringMatching(ISO_TIMESTAMP),
            last_used_at: null,
            token: expect.stringMatching(API_TOKEN),
          },
        });
        const secret: string = body.api_token.token;
        expect(secret.startsWith(PREFIX[environment])).toBe(true);

        const { res, group } = await verifyWith(secret, environment);
        expect(expectSuccess(res).user_group.team_id).toBe(group.team_id);
        const adminList = await adminCall(ctx.t, { path: ADMIN.apiTokens, token: secret });
        if (scope === 'admin') expectSuccess(adminList);
        else expectError(adminList, 403, 'insufficient_scope', null);
      },
    );

    it.each<Environment>(['Customer', 'Testing'])(
      "defaults environment to the %s admin token's own",
      async (environment) => {
        const body = expectSuccess(await create({ name: uniqueId('default env'), scope: 'read' }, { environment }));
        expect(body.api_token.environment).toBe(environment);
        expect(body.api_token.token.startsWith(PREFIX[environment])).toBe(true);
      },
    );

    it('makes a token of its own workspace: it cannot see groups of another', async () => {
      const secret = expectSuccess(await create({ name: uniqueId('home'), scope: 'read', environment: 'Customer' }))
        .api_token.token;
      const foreign = await makeGroup(ctx.t, { as: { workspace: 'other' } });
      const res = await inject(ctx.t.app, {
        method: 'POST',
        path: VERIFY_PATH,
        token: secret,
        body: { token: foreign.token },
      });
      expectError(res, 404, 'user_group_not_found', null);
    });

    it.each<[string, Record<string, unknown>, string, string]>([
      ['no name', { scope: 'read' }, 'missing_field', 'name'],
      ['no scope', { name: 'n' }, 'missing_field', 'scope'],
      ['an empty name', { name: '', scope: 'read' }, 'invalid_field', 'name'],
      ['a name of 257 characters', { name: 'x'.repeat(257), scope: 'read' }, 'invalid_field', 'name'],
      ['a name with a control character', { name: 'a\tb', scope: 'read' }, 'invalid_field', 'name'],
      ['a name that is a number', { name: 7, scope: 'read' }, 'invalid_field', 'name'],
      ['an unknown scope', { name: 'n', scope: 'owner' }, 'invalid_field', 'scope'],
      ['a scope in upper case', { name: 'n', scope: 'ADMIN' }, 'invalid_field', 'scope'],
      ['a list of scopes', { name: 'n', scope: ['read'] }, 'invalid_field', 'scope'],
      [
        'an unknown environment',
        { name: 'n', scope: 'read', environment: 'Production' },
        'invalid_field',
        'environment',
      ],
      ['a null environment', { name: 'n', scope: 'read', environment: null }, 'invalid_field', 'environment'],
      ['an unknown field', { name: 'n', scope: 'read', workspace: 'other' }, 'unknown_field', 'workspace'],
      [
        'a secret of its own',
        { name: 'n', scope: 'read', token: `ugs_live_${'a'.repeat(64)}` },
        'unknown_field',
        'token',
      ],
    ])('refuses %s: 400 %s naming %s, and creates nothing', async (_label, body, code, field) => {
      const res = await expectUnchanged(ctx.t, () => create(body));
      expectError(res, 400, code, field);
    });
  });

  describe('GET /api/admin/api_tokens', () => {
    it('lists a new token as it was created, without its secret', async () => {
      const { api_token: created } = expectSuccess(await create({ name: uniqueId('listed'), scope: 'write' }));
      const { token: _secret, ...withoutSecret } = created;
      expect(await list()).toContainEqual(withoutSecret);
    });

    it('never shows a secret, a secret’s hash or anything shaped like either', async () => {
      const fresh = expectSuccess(await create({ name: uniqueId('secretive'), scope: 'admin' })).api_token.token;
      const secrets = [...issuedSecrets(ctx.t), fresh];
      for (const as of [{}, { environment: 'Testing' }] as As[]) {
        const res = await adminCall(ctx.t, { path: ADMIN.apiTokens, as });
        const listed = expectSuccess(res).api_tokens;
        expect(listed.length).toBeGreaterThan(0);
        for (const token of listed) expect(Object.keys(token).sort()).toEqual(LISTED_FIELDS);
        for (const secret of secrets) {
          expect(res.raw).not.toContain(secret.slice(PREFIX.Customer.length));
          expect(res.raw).not.toContain(sha256(secret));
        }
        expect(res.raw).not.toMatch(/ugs_(live|test)_/);
        expect(res.raw).not.toMatch(/[0-9a-f]{32}/i);
      }
    });

    it('shows last_used_at as null until the token is used, then when', async () => {
      const issued = await issueApiToken(ctx.t, { scope: 'read' });
      const lastUsed = async () =>
        (await list()).find((token: { id: number }) => token.id === issued.record.id).last_used_at;
      expect(await lastUsed()).toBeNull();
      expectSuccess((await verifyWith(issued.secret, 'Customer')).res);
      await expect.poll(lastUsed).toMatch(ISO_TIMESTAMP);
    });

    it.each<[Environment, Query, Environment]>([
      ['Customer', {}, 'Customer'],
      ['Testing', {}, 'Testing'],
      ['Customer', { environment: 'Testing' }, 'Testing'],
      ['Testing', { environment: 'Customer' }, 'Customer'],
    ])(
      'a %s admin with %j lists the live %s tokens (environment picks, default the token’s)',
      async (tokenEnvironment, query, environment) => {
        const stored = await ctx.t.runtime.store.listApiTokens(await workspaceId(ctx.t));
        const expected = stored.filter((token) => token.environment === environment).map((token) => token.id);
        expect(ids(await list(query, { environment: tokenEnvironment }))).toEqual(expected);
      },
    );

    it.each<[string, Query, string, string]>([
      ['an unknown environment', { environment: 'Production' }, 'invalid_field', 'environment'],
      ['an unknown parameter', { foo: '1' }, 'unknown_field', 'foo'],
    ])('refuses %s (%j): 400 %s naming %s', async (_label, query, code, field) => {
      expectError(await adminCall(ctx.t, { path: ADMIN.apiTokens, query }), 400, code, field);
    });
  });

  describe('DELETE /api/admin/api_tokens/{id}', () => {
    it('revokes at once: the response shows the token, its very next request is 401, the list drops it', async () => {
      const issued = await issueApiToken(ctx.t, { scope: 'write', name: uniqueId('doomed') });
      expectSuccess((await verifyWith(issued.secret, 'Customer')).res);
      // last_used_at is written beside the request, not awaited by it (api-tokens.service.ts): wait until it landed.
      await expect
        .poll(async () => (await list()).find((token: { id: number }) => token.id === issued.record.id)?.last_used_at)
        .toMatch(ISO_TIMESTAMP);
      const body = expectSuccess(await revoke(issued.record.id));
      expect(body).toStrictEqual({
        success: 1,
        api_token: {
          id: issued.record.id,
          name: issued.record.name,
          scope: 'write',
          environment: 'Customer',
          rate_limit: null,
          created_at: issued.record.createdAt,
          last_used_at: expect.stringMatching(ISO_TIMESTAMP),
        },
      });
      const refused = (await verifyWith(issued.secret, 'Customer')).res;
      expectError(refused, 401, 'invalid_api_token', null);
      expect(refused.headers['www-authenticate']).toBe('Token');
      expect(ids(await list())).not.toContain(issued.record.id);
    });

    it('an admin token may revoke itself; the request after is refused', async () => {
      const issued = await issueApiToken(ctx.t, { scope: 'admin' });
      expectSuccess(
        await adminCall(ctx.t, { method: 'DELETE', path: revokePath(issued.record.id), token: issued.secret }),
      );
      expectError(
        await adminCall(ctx.t, { path: ADMIN.apiTokens, token: issued.secret }),
        401,
        'invalid_api_token',
        null,
      );
    });

    it("revokes a token of the workspace's other environment too", async () => {
      const issued = await issueApiToken(ctx.t, { environment: 'Testing' });
      expect(expectSuccess(await revoke(issued.record.id)).api_token.environment).toBe('Testing');
      expectError((await verifyWith(issued.secret, 'Testing')).res, 401, 'invalid_api_token', null);
    });

    it.each<[string, Workspace, (id: number) => Promise<unknown>]>([
      ['a token revoked already', 'default', (id) => revoke(id)],
      ["another workspace's token", 'other', async () => undefined],
    ])('%s is 404 api_token_not_found, and nothing changes', async (_label, workspace, before) => {
      const issued = await issueApiToken(ctx.t, { as: { workspace } });
      await before(issued.record.id);
      const res = await expectUnchanged(ctx.t, () => revoke(issued.record.id));
      expectError(res, 404, 'api_token_not_found', null);
      if (workspace === 'other') expectSuccess((await verifyWith(issued.secret, 'Customer', 'other')).res);
    });

    it('an id never issued is 404 api_token_not_found', async () => {
      expectError(await expectUnchanged(ctx.t, () => revoke(999_999_999)), 404, 'api_token_not_found', null);
    });

    it.each(['abc', '0', '-1', '1.5', '12345678901234567'])(
      'refuses the id %s: 400 invalid_field naming id',
      async (id) => {
        expectError(await expectUnchanged(ctx.t, () => revoke(id)), 400, 'invalid_field', 'id');
      },
    );
  });

  it("another workspace's admin sees none of this workspace's tokens", async () => {
    const fresh = expectSuccess(await create({ name: uniqueId('home only'), scope: 'admin' })).api_token;
    const home = [
      ...(await ctx.t.runtime.store.listApiTokens(await workspaceId(ctx.t))).map((token) => token.id),
      fresh.id,
    ];
    for (const environment of ENVIRONMENTS) {
      for (const query of [{}, { environment: 'Customer' }, { environment: 'Testing' }]) {
        const res = await adminCall(ctx.t, { path: ADMIN.apiTokens, query, as: { workspace: 'other', environment } });
        const seen = ids(expectSuccess(res).api_tokens);
        expect(seen.filter((id) => home.includes(id))).toEqual([]);
        expect(res.raw).not.toContain(fresh.name);
      }
    }
  });
});
