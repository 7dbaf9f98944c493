import { describe, expect, it } from 'vitest';
import { ENVIRONMENTS, SCOPES, type Environment, type Scope } from '../../src/domain/tenancy.js';
import { inject, type UnsignedRequest } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { ADMIN } from './admin-helpers.js';
import { describeAuth, type MakeRequest } from './auth.suite.js';
import { expectError, expectSuccess, expectUnchanged, seedDataSource, seedSchema } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { issueApiToken } from '../support/api-token-issuer.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { makeGroup, type UserGroup } from '../support/group-maker.js';
import { USER_PATH, VERIFY_PATH } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

const newGroup: MakeRequest = async () => ({
  method: 'GET',
  path: USER_PATH,
  body: { user_group_id: uniqueId('auth') },
});
const newGroup2 =
  (method: string, path: string): MakeRequest =>
  async () => ({ method, path, body: { user_group_id: uniqueId('auth') } });
const withGroup =
  (build: (group: UserGroup) => UnsignedRequest): MakeRequest =>
  async (t) =>
    build(await makeGroup(t));
const newDataSource: MakeRequest = async (t) => ({
  method: 'POST',
  path: '/api/admin/data_sources',
  body: { provided_id: uniqueId('ds'), name: 'Data source', schema_id: await seedSchema(t) },
});
/** A request on a fresh, unused data source of the default workspace's Customer environment. */
const withDataSource =
  (method: string, body?: unknown): MakeRequest =>
  async (t) => ({
    method,
    path: `${ADMIN.dataSources}/${(await seedDataSource(t, await seedSchema(t))).id}`,
    ...(body === undefined ? {} : { body }),
  });
const newApiToken = () => ({ name: uniqueId('token'), scope: 'read' });

const ENDPOINTS: Array<[string, MakeRequest]> = [
  ['GET /api/user (create)', newGroup],
  [
    'GET /api/user (existing)',
    withGroup((g) => ({ method: 'GET', path: USER_PATH, body: { user_group_id: g.provided_id } })),
  ],
  [
    'PUT /api/user',
    withGroup((g) => ({ method: 'PUT', path: USER_PATH, body: { user_group_id: g.provided_id, name: 'Renamed' } })),
  ],
  ['POST /api/user', withGroup((g) => ({ method: 'POST', path: USER_PATH, body: { current_token: g.token } }))],
  [
    'DELETE /api/user',
    withGroup((g) => ({ method: 'DELETE', path: USER_PATH, body: { user_group_id: g.provided_id } })),
  ],
  ['POST /api/user/verify', withGroup((g) => ({ method: 'POST', path: VERIFY_PATH, body: { token: g.token } }))],
  [
    'POST /api/admin/schemas',
    async () => ({ method: 'POST', path: '/api/admin/schemas', body: { name: uniqueId('schema') } }),
  ],
  ['GET /api/admin/schemas', async () => ({ method: 'GET', path: '/api/admin/schemas' })],
  ['POST /api/admin/data_sources', newDataSource],
  ['GET /api/admin/data_sources', async () => ({ method: 'GET', path: '/api/admin/data_sources' })],
  ['GET /api/admin/data_sources/:id', withDataSource('GET')],
  ['PATCH /api/admin/data_sources/:id', withDataSource('PATCH', { name: 'Renamed' })],
  ['DELETE /api/admin/data_sources/:id', withDataSource('DELETE')],
  ['GET /api/admin/user_groups', async () => ({ method: 'GET', path: ADMIN.userGroups })],
  [
    'GET /api/admin/user_groups/:team_id',
    withGroup((g) => ({ method: 'GET', path: `${ADMIN.userGroups}/${g.team_id}` })),
  ],
  ['POST /api/admin/api_tokens', async () => ({ method: 'POST', path: ADMIN.apiTokens, body: newApiToken() })],
  ['GET /api/admin/api_tokens', async () => ({ method: 'GET', path: ADMIN.apiTokens })],
  [
    'PATCH /api/admin/api_tokens/:id',
    async (t) => ({
      method: 'PATCH',
      path: `${ADMIN.apiTokens}/${(await issueApiToken(t)).record.id}`,
      body: { rate_limit: { per_second: 5, burst: 10 } },
    }),
  ],
  [
    'DELETE /api/admin/api_tokens/:id',
    async (t) => ({ method: 'DELETE', path: `${ADMIN.apiTokens}/${(await issueApiToken(t)).record.id}` }),
  ],
  ['GET /api/admin/audit_events', async () => ({ method: 'GET', path: ADMIN.auditEvents })],
  ['POST /api/create_user_group/ (alias)', newGroup2('POST', '/api/create_user_group/')],
  [
    'POST /api/update_user_group/ (alias)',
    withGroup((g) => ({
      method: 'POST',
      path: '/api/update_user_group/',
      body: { user_group_id: g.provided_id, name: 'Renamed' },
    })),
  ],
  [
    'POST /api/refresh_user_group_token/ (alias)',
    withGroup((g) => ({ method: 'POST', path: '/api/refresh_user_group_token/', body: { current_token: g.token } })),
  ],
  [
    'DELETE /api/delete_user_group/ (alias)',
    withGroup((g) => ({ method: 'DELETE', path: '/api/delete_user_group/', body: { user_group_id: g.provided_id } })),
  ],
  [
    'POST /api/user/embed_token',
    withGroup((g) => ({ method: 'POST', path: '/api/user/embed_token', body: { user_group_id: g.provided_id } })),
  ],
  ['GET /api/admin/signing_keys', async () => ({ method: 'GET', path: '/api/admin/signing_keys' })],
  ['POST /api/admin/signing_keys/rotate', async () => ({ method: 'POST', path: '/api/admin/signing_keys/rotate' })],
];

for (const [name, makeRequest] of ENDPOINTS) describeAuth(name, makeRequest);

/** One operation of the scope matrix: the request, and a read of what it would change. */
interface Operation {
  name: string;
  needs: Scope;
  prepare(t: TestApp, environment: Environment): Promise<{ request: UnsignedRequest; observe: () => Promise<unknown> }>;
}

/** A group's whole state through the API, with a read token (GET of an existing group). */
async function groupOperation(t: TestApp, environment: Environment, build: (group: UserGroup) => UnsignedRequest) {
  const group = await makeGroup(t, { as: { environment } });
  const read = apiToken(t, { environment, scope: 'read' });
  return {
    request: build(group),
    observe: async () =>
      expectSuccess(
        await inject(t.app, {
          method: 'GET',
          path: USER_PATH,
          token: read,
          body: { user_group_id: group.provided_id },
        }),
      ),
  };
}

/** An admin list through the API. */
const adminList = (t: TestApp, environment: Environment, path: string) => async () =>
  expectSuccess(await inject(t.app, { method: 'GET', path, token: apiToken(t, { environment }) }));

/** An admin operation on a fresh, unused data source of `environment`, observed through GET of it. */
async function dataSourceOperation(t: TestApp, environment: Environment, method: string, body?: unknown) {
  const path = `${ADMIN.dataSources}/${(await seedDataSource(t, await seedSchema(t), { environment })).id}`;
  return {
    request: { method, path, ...(body === undefined ? {} : { body }) },
    observe: adminList(t, environment, path),
  };
}

/** A read of an admin list, which the request must leave as it was. */
const adminRead = (path: string) => async (t: TestApp, env: Environment) => ({
  request: { method: 'GET', path },
  observe: adminList(t, env, path),
});

const OPERATIONS: Operation[] = [
  {
    name: 'get an existing group',
    needs: 'read',
    prepare: (t, env) =>
      groupOperation(t, env, (g) => ({
        method: 'GET',
        path: USER_PATH,
        body: { user_group_id: g.provided_id, name: 'ignored' },
      })),
  },
  {
    name: 'verify a token',
    needs: 'read',
    prepare: (t, env) =>
      groupOperation(t, env, (g) => ({ method: 'POST', path: VERIFY_PATH, body: { token: g.token } })),
  },
  {
    name: 'create a group',
    needs: 'write',
    prepare: async (t, environment) => {
      const id = uniqueId('scoped');
      const tenant = (await adminCaller(t, { environment })).tenant;
      return {
        request: { method: 'GET', path: USER_PATH, body: { user_group_id: id } },
        observe: () => t.runtime.store.findUserGroupByProvidedId(tenant, id),
      };
    },
  },
  {
    name: 'update a group',
    needs: 'write',
    prepare: (t, env) =>
      groupOperation(t, env, (g) => ({
        method: 'PUT',
        path: USER_PATH,
        body: { user_group_id: g.provided_id, name: 'Changed', properties: { a: 1 } },
      })),
  },
  {
    name: 'rotate a token',
    needs: 'write',
    prepare: (t, env) =>
      groupOperation(t, env, (g) => ({ method: 'POST', path: USER_PATH, body: { current_token: g.token } })),
  },
  {
    name: 'delete a group',
    needs: 'write',
    prepare: (t, env) =>
      groupOperation(t, env, (g) => ({
        method: 'DELETE',
        path: USER_PATH,
        body: { user_group_id: g.provided_id, current_token: g.token },
      })),
  },
  {
    name: 'create a schema',
    needs: 'admin',
    prepare: async (t, env) => ({
      request: { method: 'POST', path: '/api/admin/schemas', body: { name: uniqueId('schema') } },
      observe: adminList(t, env, '/api/admin/schemas'),
    }),
  },
  { name: 'list schemas', needs: 'admin', prepare: adminRead(ADMIN.schemas) },
  {
    name: 'create a data source',
    needs: 'admin',
    prepare: async (t, env) => ({
      request: {
        method: 'POST',
        path: '/api/admin/data_sources',
        body: { provided_id: uniqueId('ds'), name: 'DS', schema_id: await seedSchema(t) },
      },
      observe: adminList(t, env, '/api/admin/data_sources'),
    }),
  },
  { name: 'list data sources', needs: 'admin', prepare: adminRead(ADMIN.dataSources) },
  { name: 'get a data source', needs: 'admin', prepare: (t, env) => dataSourceOperation(t, env, 'GET') },
  {
    name: 'update a data source',
    needs: 'admin',
    prepare: (t, env) => dataSourceOperation(t, env, 'PATCH', { name: 'Changed' }),
  },
  { name: 'delete a data source', needs: 'admin', prepare: (t, env) => dataSourceOperation(t, env, 'DELETE') },
  { name: 'list user groups', needs: 'admin', prepare: adminRead(ADMIN.userGroups) },
  {
    name: 'get a user group by team_id',
    needs: 'admin',
    prepare: (t, env) => groupOperation(t, env, (g) => ({ method: 'GET', path: `${ADMIN.userGroups}/${g.team_id}` })),
  },
  {
    name: 'create an API token',
    needs: 'admin',
    prepare: async (t, env) => ({
      request: { method: 'POST', path: ADMIN.apiTokens, body: newApiToken() },
      observe: adminList(t, env, ADMIN.apiTokens),
    }),
  },
  { name: 'list API tokens', needs: 'admin', prepare: adminRead(ADMIN.apiTokens) },
  {
    name: "change an API token's rate limit",
    needs: 'admin',
    prepare: async (t, environment) => {
      const { record } = await issueApiToken(t, { as: { environment } });
      return {
        request: {
          method: 'PATCH',
          path: `${ADMIN.apiTokens}/${record.id}`,
          body: { rate_limit: { per_second: 5, burst: 10 } },
        },
        observe: adminList(t, environment, ADMIN.apiTokens),
      };
    },
  },
  {
    name: 'revoke an API token',
    needs: 'admin',
    prepare: async (t, environment) => {
      const { record } = await issueApiToken(t, { as: { environment } });
      return {
        request: { method: 'DELETE', path: `${ADMIN.apiTokens}/${record.id}` },
        observe: adminList(t, environment, ADMIN.apiTokens),
      };
    },
  },
  { name: 'list audit events', needs: 'admin', prepare: adminRead(ADMIN.auditEvents) },
  {
    name: 'mint an embed token',
    needs: 'read',
    prepare: (t, env) =>
      groupOperation(t, env, (g) => ({
        method: 'POST',
        path: '/api/user/embed_token',
        body: { user_group_id: g.provided_id },
      })),
  },
  { name: 'list signing keys', needs: 'admin', prepare: adminRead('/api/admin/signing_keys') },
  {
    name: 'rotate the signing key',
    needs: 'admin',
    prepare: async (t, env) => ({
      request: { method: 'POST', path: '/api/admin/signing_keys/rotate' },
      observe: adminList(t, env, '/api/admin/signing_keys'),
    }),
  },
];

/** What each scope may do, written out rather than taken from the code under test. */
const GRANTS: Record<Scope, Scope[]> = { read: ['read'], write: ['read', 'write'], admin: ['read', 'write', 'admin'] };

const MATRIX = ENVIRONMENTS.flatMap((environment) =>
  SCOPES.flatMap((scope) =>
    OPERATIONS.map((operation) => ({
      environment,
      scope,
      operation,
      allowed: GRANTS[scope].includes(operation.needs),
    })),
  ),
);

describe('scopes', () => {
  const ctx = useTestApp();

  it.each(MATRIX.filter((cell) => cell.allowed))(
    '$environment $scope token may $operation.name',
    async ({ environment, scope, operation }) => {
      const { request } = await operation.prepare(ctx.t, environment);
      expectSuccess(await inject(ctx.t.app, { ...request, token: apiToken(ctx.t, { environment, scope }) }));
    },
  );

  it.each(MATRIX.filter((cell) => !cell.allowed))(
    '$environment $scope token may not $operation.name: 403 and nothing changes',
    async ({ environment, scope, operation }) => {
      const { request, observe } = await operation.prepare(ctx.t, environment);
      const before = await observe();
      const res = await expectUnchanged(ctx.t, () =>
        inject(ctx.t.app, { ...request, token: apiToken(ctx.t, { environment, scope }) }),
      );
      expectError(res, 403, 'insufficient_scope', null);
      expect(await observe()).toEqual(before);
    },
  );
});
