import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment, Scope, Tenant } from '../../src/domain/tenancy.js';
import { inject, type ApiRequest, type ApiResponse } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { createUserGroup, expectFailure, issueApiToken, observable, tenantOf, unusedUserGroupToken, useTestApp, type DatabaseReader, type WorkspaceName } from './helpers.js';

// Every tenant other than the home tenant (workspace default, environment Customer).
const FOREIGN: Array<[WorkspaceName, Environment]> = [
  ['default', 'Testing'],
  ['other', 'Customer'],
  ['other', 'Testing'],
];
const SCOPES: Scope[] = ['read', 'write', 'admin'];

interface GroupRef {
  id: string;
  token: string;
}

type Operation = (group: GroupRef) => Omit<ApiRequest, 'token'>;

// Every operation that names an existing group, except get-or-create (which creates instead).
const OPERATIONS: Record<string, Operation> = {
  'PUT update': (g) => ({ method: 'PUT', path: '/api/user', body: { user_group_id: g.id, name: 'taken over', properties: { hijacked: true } } }),
  'POST rotate': (g) => ({ method: 'POST', path: '/api/user', body: { current_token: g.token } }),
  'DELETE by token': (g) => ({ method: 'DELETE', path: '/api/user', body: { current_token: g.token } }),
  'DELETE by id': (g) => ({ method: 'DELETE', path: '/api/user', body: { user_group_id: g.id } }),
  'DELETE by token and id': (g) => ({ method: 'DELETE', path: '/api/user', body: { current_token: g.token, user_group_id: g.id } }),
  'DELETE by id with data source': (g) => ({ method: 'DELETE', path: '/api/user', body: { user_group_id: g.id, data_source_provided_id: 'warehouse' } }),
  'POST verify': (g) => ({ method: 'POST', path: '/api/user/verify', body: { token: g.token } }),
};

/** What a foreign caller must get: exactly what a group that exists nowhere gets. */
function expectedFailure(operation: string, scope: Scope): [number, string] {
  if (operation === 'POST verify' || scope !== 'read') return [404, 'user_group_not_found'];
  return [403, 'insufficient_scope'];
}

describe('isolation between environments and workspaces', () => {
  let t: TestApp;
  let reader: DatabaseReader;
  let home: Tenant;
  let schemaId: number;
  let otherSchemaId: number;
  const dataSources: Record<string, number> = {};

  const call = (req: ApiRequest) => inject(t.app, req);
  const homeWrite = () => t.tokens.default.Customer.write;
  /** The home tenant's stored groups and its audit trail: what no foreign caller may change. */
  const homeState = async () => {
    const { userGroups, tenantAuditEvents } = await reader.snapshot(home);
    return { userGroups, tenantAuditEvents };
  };

  async function createSchema(token: string, name: string): Promise<number> {
    const response = await call({ method: 'POST', path: '/api/admin/schemas', token, body: { name } });
    expect(response.status, response.raw).toBe(200);
    return response.body.schema.id as number;
  }

  async function createDataSource(token: string, providedId: string, schema: number): Promise<number> {
    const response = await call({ method: 'POST', path: '/api/admin/data_sources', token, body: { provided_id: providedId, name: providedId, schema_id: schema } });
    expect(response.status, response.raw).toBe(200);
    return response.body.data_source.id as number;
  }

  /** A home group mapped to the home data source, with the exact object its creation returned. */
  async function createHomeGroup(id: string) {
    const group = await createUserGroup(call, homeWrite(), { user_group_id: id, name: `Home ${id}`, properties: { plan: 'gold' }, mapping: { [schemaId]: 'warehouse' } });
    return { id, token: group.token, group };
  }

  /** The home group still verifies at home, exactly as it was created. */
  async function expectHomeGroupIntact(original: { token: string; group: unknown }) {
    const response = await call({ method: 'POST', path: '/api/user/verify', token: t.tokens.default.Customer.read, body: { token: original.token } });
    expect(response.status).toBe(200);
    expect(response.body.user_group).toEqual(original.group);
  }

  const ghost = (): GroupRef => ({ id: `ghost-${randomUUID()}`, token: unusedUserGroupToken() });

  const fixture = useTestApp();

  beforeAll(async () => {
    ({ t, reader, tenant: home } = fixture);
    schemaId = await createSchema(t.tokens.default.Customer.admin, 'sales');
    otherSchemaId = await createSchema(t.tokens.other.Customer.admin, 'sales');
    // "warehouse" exists in three tenants: a provided id resolves inside the caller's tenant only.
    dataSources.homeWarehouse = await createDataSource(t.tokens.default.Customer.admin, 'warehouse', schemaId);
    dataSources.testingWarehouse = await createDataSource(t.tokens.default.Testing.admin, 'warehouse', schemaId);
    dataSources.testingOnly = await createDataSource(t.tokens.default.Testing.admin, 'testing_only', schemaId);
    dataSources.otherWarehouse = await createDataSource(t.tokens.other.Customer.admin, 'warehouse', otherSchemaId);
    dataSources.otherOnly = await createDataSource(t.tokens.other.Customer.admin, 'other_only', otherSchemaId);
  });

  describe.each(FOREIGN)('a caller of workspace %s, environment %s', (workspace, environment) => {
    it('fails on a home group exactly as on a group that exists nowhere, with every scope and operation', async () => {
      const original = await createHomeGroup(`iso-${workspace}-${environment}`);
      const before = await homeState();
      for (const scope of SCOPES) {
        const token = t.tokens[workspace][environment][scope];
        for (const [name, operation] of Object.entries(OPERATIONS)) {
          const elsewhere = await call({ ...operation(original), token });
          const nowhere = await call({ ...operation(ghost()), token });
          expect(observable(elsewhere), `${scope} ${name}`).toEqual(observable(nowhere));
          const [status, code] = expectedFailure(name, scope);
          expectFailure(elsewhere, status, code);
        }
      }
      expect(await homeState()).toEqual(before);
      await expectHomeGroupIntact(original);
    });

    it('get-or-create of a home id makes a separate group in its own tenant and leaves the home one alone', async () => {
      const original = await createHomeGroup(`goc-${workspace}-${environment}`);
      const before = await homeState();
      const getOrCreate = (scope: Scope, id: string) =>
        call({ method: 'GET', path: '/api/user', token: t.tokens[workspace][environment][scope], body: { user_group_id: id, name: 'Foreign' } });

      // A read token cannot create, and the refusal does not reveal that the id exists elsewhere.
      const readElsewhere = await getOrCreate('read', original.id);
      expect(observable(readElsewhere)).toEqual(observable(await getOrCreate('read', ghost().id)));
      expectFailure(readElsewhere, 403, 'insufficient_scope');

      const created = await getOrCreate('write', original.id);
      expect(created.status).toBe(200);
      expect(created.body.new_user_group).toBe(true);
      expect(created.body.user_group).toMatchObject({ provided_id: original.id, name: 'Foreign', api_environment_tag: environment, properties: null, mapping: {} });
      expect(created.body.user_group.team_id).not.toBe(original.group.team_id);
      expect(created.body.user_group.token).not.toBe(original.token);

      // Each token opens its own group only, in its own tenant.
      const verify = (token: string, secret: string) => call({ method: 'POST', path: '/api/user/verify', token, body: { token: secret } });
      expectFailure(await verify(t.tokens.default.Customer.read, created.body.user_group.token), 404, 'user_group_not_found');
      expectFailure(await verify(t.tokens[workspace][environment].read, original.token), 404, 'user_group_not_found');
      expect((await verify(t.tokens[workspace][environment].read, created.body.user_group.token)).body.user_group).toEqual(created.body.user_group);

      expect(await homeState()).toEqual(before);
      await expectHomeGroupIntact(original);
    });
  });

  it('keeps one user_group_id once in Customer and once in Testing, each changed only through its own environment', async () => {
    const customer = await createHomeGroup('twin');
    const testing = await createUserGroup(call, t.tokens.default.Testing.write, { user_group_id: 'twin', name: 'Testing twin' });
    expect(testing.api_environment_tag).toBe('Testing');
    expect(testing.team_id).not.toBe(customer.group.team_id);
    expect(testing.token).not.toBe(customer.token);
    const before = await homeState();

    const testingWrite = t.tokens.default.Testing.write;
    const renamed = await call({ method: 'PUT', path: '/api/user', token: testingWrite, body: { user_group_id: 'twin', name: 'Renamed in Testing' } });
    expect(renamed.body.user_group).toMatchObject({ team_id: testing.team_id, name: 'Renamed in Testing' });
    const rotated = await call({ method: 'POST', path: '/api/user', token: testingWrite, body: { current_token: testing.token } });
    expect(rotated.status).toBe(200);
    const deleted = await call({ method: 'DELETE', path: '/api/user', token: testingWrite, body: { user_group_id: 'twin' } });
    expect(deleted.body).toEqual({ success: 1 });
    expect(await reader.countGroups(await tenantOf(t, 'default', 'Testing'), 'twin')).toBe(0);

    expect(await homeState()).toEqual(before);
    await expectHomeGroupIntact(customer);
  });

  it('keeps another workspace\'s admin from reaching this workspace\'s objects by id', async () => {
    const original = await createHomeGroup('admin-target');
    const expendable = await issueApiToken(t, home, 'read', 'cross-workspace target');
    const [tokenRecord] = (await t.runtime.store.listApiTokens(home.workspaceId)).filter((token) => token.name === 'cross-workspace target');
    const before = await homeState();
    const ABSENT = 999_999;
    // Messages may echo the id asked for; apart from that, a foreign id and an absent one must read alike.
    const revealed = (response: ApiResponse, id: number) => JSON.parse(JSON.stringify(observable(response)).replaceAll(String(id), '<id>'));
    const byId: Array<[string, (id: number) => Omit<ApiRequest, 'token'>, number]> = [
      ['GET user group', (id) => ({ method: 'GET', path: `/api/admin/user_groups/${id}?environment=Customer` }), original.group.team_id],
      ['GET data source', (id) => ({ method: 'GET', path: `/api/admin/data_sources/${id}?environment=Customer` }), dataSources.homeWarehouse!],
      ['PATCH data source', (id) => ({ method: 'PATCH', path: `/api/admin/data_sources/${id}`, body: { name: 'renamed' } }), dataSources.homeWarehouse!],
      ['DELETE data source', (id) => ({ method: 'DELETE', path: `/api/admin/data_sources/${id}` }), dataSources.homeWarehouse!],
      ['PATCH API token', (id) => ({ method: 'PATCH', path: `/api/admin/api_tokens/${id}`, body: { rate_limit: { per_second: 1, burst: 1 } } }), tokenRecord!.id],
      ['DELETE API token', (id) => ({ method: 'DELETE', path: `/api/admin/api_tokens/${id}` }), tokenRecord!.id],
    ];
    for (const environment of ['Customer', 'Testing'] as const) {
      const token = t.tokens.other[environment].admin;
      for (const [name, request, id] of byId) {
        const elsewhere = await call({ ...request(id), token });
        expect(elsewhere.status, `${environment} ${name}`).toBe(404);
        expect(revealed(elsewhere, id), `${environment} ${name}`).toEqual(revealed(await call({ ...request(ABSENT), token }), ABSENT));
      }
      const listed = await call({ method: 'GET', path: '/api/admin/user_groups?environment=Customer', token });
      expect(listed.body.user_groups.map((group: { team_id: number }) => group.team_id)).not.toContain(original.group.team_id);
      const events = await call({ method: 'GET', path: '/api/admin/audit_events', token });
      expect(events.body.audit_events.filter((event: { team_id: number | null }) => event.team_id === original.group.team_id)).toEqual([]);
    }

    expect(await homeState()).toEqual(before);
    await expectHomeGroupIntact(original);
    expect((await call({ method: 'GET', path: '/api/admin/data_sources', token: t.tokens.default.Customer.admin })).body.data_sources).toContainEqual(
      expect.objectContaining({ id: dataSources.homeWarehouse, name: 'warehouse' }),
    );
    expect((await call({ method: 'POST', path: '/api/user/verify', token: expendable, body: { token: original.token } })).status).toBe(200);
  });

  describe('data sources in mappings', () => {
    // References that name a data source, but one of another environment or workspace.
    const foreignReferences = (): Array<[string, string | number]> => [
      ['a Testing data source by provided_id', 'testing_only'],
      ['a Testing data source by id', dataSources.testingOnly!],
      ['a Testing data source by id as digits', String(dataSources.testingOnly)],
      ['the Testing namesake by id', dataSources.testingWarehouse!],
      ['another workspace\'s data source by provided_id', 'other_only'],
      ['another workspace\'s data source by id', dataSources.otherOnly!],
      ['another workspace\'s namesake by id as digits', String(dataSources.otherWarehouse)],
    ];

    it('resolves a provided_id inside the caller\'s own tenant', async () => {
      const customer = await createUserGroup(call, homeWrite(), { user_group_id: 'resolve-home', mapping: { [schemaId]: 'warehouse' } });
      expect(customer.mapping).toEqual({ [schemaId]: String(dataSources.homeWarehouse) });
      const testing = await createUserGroup(call, t.tokens.default.Testing.write, { user_group_id: 'resolve-home', mapping: { [schemaId]: 'warehouse' } });
      expect(testing.mapping).toEqual({ [schemaId]: String(dataSources.testingWarehouse) });
    });

    it('rejects another tenant\'s data source on create and on update as unknown_data_source, changing nothing', async () => {
      const original = await createHomeGroup('mapping-target');
      const before = await homeState();
      for (const [label, reference] of foreignReferences()) {
        const mapping = { [schemaId]: reference };
        const create = await call({ method: 'GET', path: '/api/user', token: homeWrite(), body: { user_group_id: 'mapping-new', mapping } });
        expectFailure(create, 400, 'unknown_data_source');
        expect(create.body.error.field, label).toBe('mapping');
        const update = await call({ method: 'PUT', path: '/api/user', token: homeWrite(), body: { user_group_id: original.id, mapping } });
        expectFailure(update, 400, 'unknown_data_source');
      }
      expect(await homeState()).toEqual(before);
      expect(await reader.countGroups(home, 'mapping-new')).toBe(0);
      await expectHomeGroupIntact(original);
    });

    it('rejects another workspace\'s schema as unknown_schema', async () => {
      const response = await call({ method: 'GET', path: '/api/user', token: homeWrite(), body: { user_group_id: 'schema-new', mapping: { [otherSchemaId]: 'warehouse' } } });
      expectFailure(response, 400, 'unknown_schema');
      expect(await reader.countGroups(home, 'schema-new')).toBe(0);
    });

    it('lists only the caller\'s workspace in the admin catalogue', async () => {
      const list = async (token: string, path: string) => (await call({ method: 'GET', path, token })).body;
      const otherAdmin = t.tokens.other.Customer.admin;
      expect((await list(otherAdmin, '/api/admin/schemas')).schemas.map((s: { id: number }) => s.id)).toEqual([otherSchemaId]);
      const otherCustomer = (await list(otherAdmin, '/api/admin/data_sources')).data_sources.map((d: { id: number }) => d.id);
      expect(otherCustomer.sort()).toEqual([dataSources.otherWarehouse, dataSources.otherOnly].sort());
      expect((await list(otherAdmin, '/api/admin/data_sources?environment=Testing')).data_sources).toEqual([]);
      const homeCustomer = (await list(t.tokens.default.Customer.admin, '/api/admin/data_sources')).data_sources.map((d: { id: number }) => d.id);
      expect(homeCustomer).toEqual([dataSources.homeWarehouse]);
    });
  });
});
