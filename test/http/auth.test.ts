import { describe, expect, it } from 'vitest';
import { ENVIRONMENTS, SCOPES, type Environment, type Scope } from '../../src/domain/tenancy.js';
import { inject } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { describeAuth, type MakeRequest } from './auth.suite.js';
import {
  adminCaller,
  apiToken,
  expectError,
  expectSuccess,
  expectUnchanged,
  seedGroup,
  seedSchema,
  uniqueId,
  useTestApp,
  USER_PATH,
  VERIFY_PATH,
  type UnsignedRequest,
} from './helpers.js';

const newGroup: MakeRequest = async () => ({ method: 'GET', path: USER_PATH, body: { user_group_id: uniqueId('auth') } });
const withGroup =
  (build: (group: { id: string; token: string }) => UnsignedRequest): MakeRequest =>
  async (t) =>
    build(await seedGroup(t));
const newDataSource: MakeRequest = async (t) => ({
  method: 'POST',
  path: '/api/admin/data_sources',
  body: { provided_id: uniqueId('ds'), name: 'Data source', schema_id: await seedSchema(t) },
});

const ENDPOINTS: Array<[string, MakeRequest]> = [
  ['GET /api/user (create)', newGroup],
  ['GET /api/user (existing)', withGroup((g) => ({ method: 'GET', path: USER_PATH, body: { user_group_id: g.id } }))],
  ['PUT /api/user', withGroup((g) => ({ method: 'PUT', path: USER_PATH, body: { user_group_id: g.id, name: 'Renamed' } }))],
  ['POST /api/user', withGroup((g) => ({ method: 'POST', path: USER_PATH, body: { current_token: g.token } }))],
  ['DELETE /api/user', withGroup((g) => ({ method: 'DELETE', path: USER_PATH, body: { user_group_id: g.id } }))],
  ['POST /api/user/verify', withGroup((g) => ({ method: 'POST', path: VERIFY_PATH, body: { token: g.token } }))],
  ['POST /api/admin/schemas', async () => ({ method: 'POST', path: '/api/admin/schemas', body: { name: uniqueId('schema') } })],
  ['GET /api/admin/schemas', async () => ({ method: 'GET', path: '/api/admin/schemas' })],
  ['POST /api/admin/data_sources', newDataSource],
  ['GET /api/admin/data_sources', async () => ({ method: 'GET', path: '/api/admin/data_sources' })],
];

for (const [name, makeRequest] of ENDPOINTS) describeAuth(name, makeRequest);

/** One operation of the scope matrix: the request, and a read of what it would change. */
interface Operation {
  name: string;
  needs: Scope;
  prepare(t: TestApp, environment: Environment): Promise<{ request: UnsignedRequest; observe: () => Promise<unknown> }>;
}

/** A group's whole state through the API, with a read token (GET of an existing group). */
async function groupOperation(t: TestApp, environment: Environment, build: (group: { id: string; token: string }) => UnsignedRequest) {
  const group = await seedGroup(t, { as: { environment } });
  const read = apiToken(t, { environment, scope: 'read' });
  return {
    request: build(group),
    observe: async () => expectSuccess(await inject(t.app, { method: 'GET', path: USER_PATH, token: read, body: { user_group_id: group.id } })),
  };
}

/** An admin list through the API. */
const adminList = (t: TestApp, environment: Environment, path: string) => async () =>
  expectSuccess(await inject(t.app, { method: 'GET', path, token: apiToken(t, { environment }) }));

const OPERATIONS: Operation[] = [
  {
    name: 'get an existing group',
    needs: 'read',
    prepare: (t, env) => groupOperation(t, env, (g) => ({ method: 'GET', path: USER_PATH, body: { user_group_id: g.id, name: 'ignored' } })),
  },
  {
    name: 'verify a token',
    needs: 'read',
    prepare: (t, env) => groupOperation(t, env, (g) => ({ method: 'POST', path: VERIFY_PATH, body: { token: g.token } })),
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
    prepare: (t, env) => groupOperation(t, env, (g) => ({ method: 'PUT', path: USER_PATH, body: { user_group_id: g.id, name: 'Changed', properties: { a: 1 } } })),
  },
  {
    name: 'rotate a token',
    needs: 'write',
    prepare: (t, env) => groupOperation(t, env, (g) => ({ method: 'POST', path: USER_PATH, body: { current_token: g.token } })),
  },
  {
    name: 'delete a group',
    needs: 'write',
    prepare: (t, env) => groupOperation(t, env, (g) => ({ method: 'DELETE', path: USER_PATH, body: { user_group_id: g.id, current_token: g.token } })),
  },
  {
    name: 'create a schema',
    needs: 'admin',
    prepare: async (t, env) => ({
      request: { method: 'POST', path: '/api/admin/schemas', body: { name: uniqueId('schema') } },
      observe: adminList(t, env, '/api/admin/schemas'),
    }),
  },
  {
    name: 'list schemas',
    needs: 'admin',
    prepare: async (t, env) => ({ request: { method: 'GET', path: '/api/admin/schemas' }, observe: adminList(t, env, '/api/admin/schemas') }),
  },
  {
    name: 'create a data source',
    needs: 'admin',
    prepare: async (t, env) => ({
      request: { method: 'POST', path: '/api/admin/data_sources', body: { provided_id: uniqueId('ds'), name: 'DS', schema_id: await seedSchema(t) } },
      observe: adminList(t, env, '/api/admin/data_sources'),
    }),
  },
  {
    name: 'list data sources',
    needs: 'admin',
    prepare: async (t, env) => ({ request: { method: 'GET', path: '/api/admin/data_sources' }, observe: adminList(t, env, '/api/admin/data_sources') }),
  },
];

/** SPEC §2/§3: what each scope may do, written out rather than taken from the code under test. */
const GRANTS: Record<Scope, Scope[]> = { read: ['read'], write: ['read', 'write'], admin: ['read', 'write', 'admin'] };

const MATRIX = ENVIRONMENTS.flatMap((environment) =>
  SCOPES.flatMap((scope) => OPERATIONS.map((operation) => ({ environment, scope, operation, allowed: GRANTS[scope].includes(operation.needs) }))),
);

describe('scopes', () => {
  const ctx = useTestApp();

  it.each(MATRIX.filter((cell) => cell.allowed))('$environment $scope token may $operation.name', async ({ environment, scope, operation }) => {
    const { request } = await operation.prepare(ctx.t, environment);
    expectSuccess(await inject(ctx.t.app, { ...request, token: apiToken(ctx.t, { environment, scope }) }));
  });

  it.each(MATRIX.filter((cell) => !cell.allowed))(
    '$environment $scope token may not $operation.name: 403 and nothing changes',
    async ({ environment, scope, operation }) => {
      const { request, observe } = await operation.prepare(ctx.t, environment);
      const before = await observe();
      const res = await expectUnchanged(ctx.t, () => inject(ctx.t.app, { ...request, token: apiToken(ctx.t, { environment, scope }) }));
      expectError(res, 403, 'insufficient_scope', null);
      expect(await observe()).toEqual(before);
    },
  );
});
